"""How a value the cues read is shown to people: with its unit back on (`with_unit`:
durations are kept in seconds, sizes in MB) and one conflicting attribute as a line
(`describe_conflict`: "timeout: 5 s vs 30 s")."""

from __future__ import annotations

from collections.abc import Mapping

DURATION_LIKE = {
    "timeout",
    "cache ttl",
    "lifetime",
    "retention",
    "interval",
    "latency",
    "duration",
}


def with_unit(attribute: str, value: str) -> str:
    """A value as people read it: durations are kept in seconds, sizes in MB (under
    1 MB in KB: "500 kB" is "500 KB", not "0.488281 MB")."""
    if not looks_numeric(value):
        return value
    if attribute in DURATION_LIKE:
        return f"{value} s"
    if attribute == "size limit" and 0 < float(value) < 1:
        return f"{float(value) * 1024:g} KB"
    return f"{value} MB" if attribute == "size limit" else value


def describe_conflict(conflict: Mapping[str, str]) -> str:
    """'timeout: 5 s vs 30 s' for one conflicting attribute ('markupsafe floor: 2.0 vs
    2.1' for a dependency's floor, read as the attribute 'version markupsafe floor')."""
    attribute = conflict["attribute"]
    a, b = with_unit(attribute, conflict["a"]), with_unit(attribute, conflict["b"])
    if attribute.startswith("version ") and attribute.endswith(" floor"):
        attribute = attribute.removeprefix("version ")
    return f"{attribute}: {a} vs {b}"


def looks_numeric(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
