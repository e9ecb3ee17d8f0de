"""Untrusted input, checked once where it enters (CLI argv and import lines, HTTP bodies):
strings must be Unicode that UTF-8 can carry (no lone surrogates), import lines must
have the documented shape, and every problem is reported with where it is."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

SURROGATE = re.compile("[\ud800-\udfff]")
SHA = re.compile(r"[0-9a-f]{64}")
LEVELS = ("L1", "L2")
SOURCES = ("terminal", "diagnostic", "ci", "transcript", "note")
OPTIONAL_STRINGS = ("tool", "project", "source", "supersedes", "memory")


def unicode_problem(value: str) -> str | None:
    """Why `value` cannot be stored as UTF-8, or None."""
    found = SURROGATE.search(value)
    if found is None:
        return None
    return (f"holds a lone surrogate (U+{ord(found.group()):04X} at character "
            f"{found.start()}): not Unicode text")


@dataclass
class ImportLines:
    items: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)   # "import line N: reason"


def parse_import(text: str) -> ImportLines:
    """Every line of an import file checked before anything is written: lines of
    `{text, level?, evidence?: str|[str], tool?, project?, source?, parents?: [sha],
    supersedes?: sha, id?}` (`memory` is accepted for `text`)."""
    out = ImportLines()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        item, problem = _import_item(line)
        if problem:
            out.errors.append(f"import line {number}: {problem}")
        else:
            item["line"] = number
            out.items.append(item)
    return out


def _import_item(line: str) -> tuple[dict, str | None]:
    try:
        item = json.loads(line)
    except RecursionError:
        return {}, "nested too deeply"
    except ValueError as exc:
        return {}, f"not JSON ({exc})"
    if not isinstance(item, dict):
        return {}, "not a JSON object"
    item.setdefault("text", item.get("memory"))
    if not isinstance(item["text"], str):
        return {}, 'needs a "text" string'
    for key in OPTIONAL_STRINGS:
        if item.get(key) is not None and not isinstance(item[key], str):
            return {}, f'"{key}" must be a string'
    if item.get("level", "L1") not in LEVELS:
        return {}, f'"level" must be one of {", ".join(LEVELS)}'
    if item.get("source", "note") not in SOURCES:
        return {}, f'"source" must be one of {", ".join(SOURCES)}'
    evidence = item.get("evidence") or []
    evidence = [evidence] if isinstance(evidence, str) else evidence
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        return {}, '"evidence" must be a string or a list of strings'
    item["evidence"] = evidence
    parents = item.get("parents") or []
    if not isinstance(parents, list) or not all(isinstance(p, str) and SHA.fullmatch(p)
                                                for p in parents):
        return {}, '"parents" must be a list of sha256 hex strings'
    item["parents"] = parents
    if item.get("supersedes") is not None and not SHA.fullmatch(item["supersedes"]):
        return {}, '"supersedes" must be a sha256 hex string'
    if item.get("id") is not None and not isinstance(item["id"], (str, int, float)):
        return {}, '"id" must be a string or a number'
    for key, value in _strings(item):
        problem = unicode_problem(value)
        if problem:
            return {}, f'"{key}" {problem}'
    return item, None


def _strings(item: dict):
    for key, value in item.items():
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, str):
                yield key, v
