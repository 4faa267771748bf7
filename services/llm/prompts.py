"""Prompt templates: one Markdown file per prompt in `resources/prompts/`, read through
importlib.resources (they ship inside the package).

A file starts with a header between two ``---`` lines::

    ---
    purpose: what the prompt is for
    variables: first, second
    schema: {"type": "object", ...}      (optional: the JSON answer it asks for)
    ---
    Text with {{first}} and {{second}}.

`render(name, **variables)` fills every ``{{variable}}`` in one pass (inserted text is
never scanned again). A missing or unexpected variable, an unknown prompt, or a body that
does not use exactly the declared variables raises `PromptError`: all are bugs.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from services.errors import EngramError
from services.llm.schema import JSON, SchemaError, check_schema

PACKAGE = "resources"
FOLDER = "prompts"
SUFFIX = ".md"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_HEADER_KEYS = ("purpose", "variables", "schema")


class PromptError(EngramError):
    """A prompt template is missing, malformed, or rendered with the wrong variables."""


@dataclass(frozen=True)
class Prompt:
    name: str
    purpose: str
    variables: tuple[str, ...]
    schema: JSON | None
    body: str

    def render(self, **variables: Any) -> str:
        missing = [name for name in self.variables if name not in variables]
        unexpected = sorted(set(variables) - set(self.variables))
        if missing or unexpected:
            parts = []
            if missing:
                parts.append(f"missing {', '.join(missing)}")
            if unexpected:
                parts.append(f"unexpected {', '.join(unexpected)}")
            raise PromptError(
                f"prompt {self.name!r} takes {', '.join(self.variables) or 'no variables'}: "
                + "; ".join(parts)
            )
        return _PLACEHOLDER.sub(lambda match: str(variables[match.group(1)]), self.body)


def names() -> list[str]:
    folder = resources.files(PACKAGE).joinpath(FOLDER)
    return sorted(
        entry.name[: -len(SUFFIX)] for entry in folder.iterdir() if entry.name.endswith(SUFFIX)
    )


@functools.cache
def load(name: str) -> Prompt:
    if not _NAME.match(name):
        raise PromptError(f"{name!r} is not a prompt name")
    path = resources.files(PACKAGE).joinpath(f"{FOLDER}/{name}{SUFFIX}")
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        known = ", ".join(names())
        raise PromptError(f"unknown prompt {name!r} (known: {known})") from None
    return parse(name, text)


def parse(name: str, text: str) -> Prompt:
    """A prompt from the text of its file (checked: header, schema, placeholders)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---" or "---" not in (x.strip() for x in lines[1:]):
        raise PromptError(f"prompt {name!r}: the file must start with a --- header ---")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    header: dict[str, str] = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if not colon or key.strip() not in _HEADER_KEYS:
            raise PromptError(f"prompt {name!r}, line {number}: expected one of {_HEADER_KEYS}")
        header[key.strip()] = value.strip()
    if "variables" not in header:
        raise PromptError(f"prompt {name!r}: the header must list its variables")
    declared = tuple(v.strip() for v in header["variables"].split(",") if v.strip())
    body = "\n".join(lines[end + 1 :]).strip() + "\n"
    used = {match.group(1) for match in _PLACEHOLDER.finditer(body)}
    if used != set(declared):
        raise PromptError(
            f"prompt {name!r}: declares {sorted(declared)} but its text uses {sorted(used)}"
        )
    schema: JSON | None = None
    if header.get("schema"):
        try:
            schema = json.loads(header["schema"])
            check_schema(schema)
        except (ValueError, SchemaError) as error:
            raise PromptError(f"prompt {name!r}: bad schema ({error})") from None
    return Prompt(name, header.get("purpose", ""), declared, schema, body)


def render(name: str, **variables: Any) -> str:
    return load(name).render(**variables)


def schema(name: str) -> JSON:
    """The JSON schema of the answer the prompt asks for."""
    found = load(name).schema
    if found is None:
        raise PromptError(f"prompt {name!r} declares no answer schema")
    return copy.deepcopy(found)
