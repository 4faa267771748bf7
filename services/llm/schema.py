"""A small JSON-schema checker for the subset Engram's prompts use, and a parser that
pulls one JSON object out of a model's answer.

Supported keywords: ``type`` (object, array, string, number, integer, boolean, null),
``properties``, ``required``, ``additionalProperties`` (true/false), ``enum``, ``items``,
``minItems``/``maxItems``, ``minLength``/``maxLength``, and the annotations ``title``
and ``description``. A schema using anything else is a programming error
(`SchemaError`); an answer that does not match is never an error, only "no answer".
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

JSON = dict[str, Any]

_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "title",
        "description",
    }
)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


class SchemaError(ValueError):
    """The schema itself uses something this checker does not support (a bug)."""


def check_schema(schema: JSON, where: str = "$") -> None:
    """Raise `SchemaError` unless `schema` stays within the supported subset."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object, not {type(schema).__name__}")
    unknown = sorted(set(schema) - _KEYWORDS)
    if unknown:
        raise SchemaError(f"{where}: unsupported schema keywords {unknown}")
    kind = schema.get("type")
    if kind is not None and kind not in _TYPES:
        raise SchemaError(f"{where}: unsupported type {kind!r}")
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        raise SchemaError(f"{where}: enum must be a non-empty list")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise SchemaError(f"{where}: properties must be an object")
    for name, sub in properties.items():
        check_schema(sub, f"{where}.{name}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise SchemaError(f"{where}: required must be a list of names")
    if not isinstance(schema.get("additionalProperties", True), bool):
        raise SchemaError(f"{where}: additionalProperties must be true or false")
    if "items" in schema:
        check_schema(schema["items"], f"{where}[]")
    for bound in ("minItems", "maxItems", "minLength", "maxLength"):
        value = schema.get(bound)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise SchemaError(f"{where}: {bound} must be an integer")


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return kind == "number" or isinstance(value, int) or value.is_integer()


def problems(value: Any, schema: JSON, where: str = "$") -> list[str]:
    """What is wrong with `value` under `schema` (an empty list: it matches)."""
    kind = schema.get("type")
    if kind is not None and not _type_ok(value, kind):
        return [f"{where}: expected {kind}, got {type(value).__name__}"]
    found: list[str] = []
    if "enum" in schema and not any(
        value == option and type(value) is type(option) for option in schema["enum"]
    ):
        found.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        properties: JSON = schema.get("properties", {})
        found.extend(
            f"{where}: missing {name!r}" for name in schema.get("required", []) if name not in value
        )
        if schema.get("additionalProperties", True) is False:
            found.extend(
                f"{where}: unexpected {name!r}" for name in value if name not in properties
            )
        for name, sub in properties.items():
            if name in value:
                found.extend(problems(value[name], sub, f"{where}.{name}"))
    elif isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            found.append(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            found.append(f"{where}: more than {schema['maxItems']} items")
        if "items" in schema:
            for index, item in enumerate(value):
                found.extend(problems(item, schema["items"], f"{where}[{index}]"))
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            found.append(f"{where}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            found.append(f"{where}: longer than {schema['maxLength']} characters")
    return found


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    # strict=False: models put raw newlines and tabs inside strings now and then
    return json.loads(text, strict=False, parse_constant=_reject_constant)


def extract_json(text: str) -> JSON | None:
    """The JSON object in a model's answer: the whole text, a ```json fence, or the span
    from the first ``{`` to the last ``}``. None when there is no object. Never raises."""
    if not isinstance(text, str):
        return None
    candidates = [text.strip()]
    candidates.extend(match.strip() for match in _FENCE.findall(text))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = _loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def parse_answer(text: str, schema: JSON) -> tuple[JSON | None, str]:
    """The object in `text` if it matches `schema`, else None and the reason. Never
    raises for any text (the schema must be valid, see `check_schema`)."""
    value = extract_json(text)
    if value is None:
        return None, "the answer is not a JSON object"
    try:
        found = problems(value, schema)
    except RecursionError:
        return None, "the answer is nested too deeply"
    if found:
        return None, "; ".join(found[:5])
    return value, ""
