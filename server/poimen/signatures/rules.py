"""Rule machinery: a rule is data (name, tool, keys, trigger regex) plus, for multi-line
failures, a small builder function. Line rules mark *instance* parts of a message with
regex groups named `x_<label>`; those spans become `<label>` before normalisation, so
`package `(?P<x_crate>…)`` says "which crate is the instance, not the failure".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence


@dataclass(frozen=True)
class Hit:
    tool: str
    kind: str
    message: str
    frames: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    weak: bool = False


@dataclass
class Ctx:
    """The prepared lines, and tool hints looked up lazily (one pass per hint, when asked)."""
    lines: list[str]
    hint_patterns: dict[str, re.Pattern] = field(default_factory=dict)
    _known: dict[str, bool] = field(default_factory=dict)
    _joined: str | None = None

    def has(self, hint: str) -> bool:
        if hint not in self._known:
            if self._joined is None:
                self._joined = "\n".join(self.lines)
            pattern = self.hint_patterns.get(hint)
            self._known[hint] = bool(pattern and pattern.search(self._joined))
        return self._known[hint]


Builder = Callable[[Ctx, int, re.Match], "Hit | Sequence[Hit] | None"]


@dataclass(frozen=True)
class Rule:
    name: str
    tool: str
    keys: tuple[str, ...]          # lowercase literals; the rule is tried only if one occurs
    trigger: re.Pattern
    kind: str = ""                 # line rules: the kind, unless the regex has a `kind` group
    build: Builder | None = None   # block rules: make the Hit(s) from the trigger match
    weak: bool = False             # weak hits are reported only when no strong hit exists
    needs: str | None = None       # a tool hint that must be present somewhere in the input
    consequence: bool = False      # claims the line and reports nothing ("exit code 1")


def render(m: re.Match, group: str = "msg") -> str:
    """The `msg` group (or whole match) with every `x_label` group replaced by `<label>`."""
    base = group if group in m.re.groupindex and m.group(group) is not None else 0
    start, end = m.span(base)
    spans = sorted((m.span(name), name[2:].rstrip("0123456789"))
                   for name in m.re.groupindex
                   if name.startswith("x_") and m.group(name) is not None)
    out, pos = [], start
    for (a, b), label in spans:
        if a < pos or b > end:
            continue
        out += [m.string[pos:a], f"<{label}>"]
        pos = b
    out.append(m.string[pos:end])
    return "".join(out)


def line_hit(rule: Rule, i: int, m: re.Match) -> Hit:
    groups = m.re.groupindex
    kind = m.group("kind") if "kind" in groups and m.group("kind") else rule.kind
    return Hit(rule.tool, kind, render(m), (), i, i, rule.weak)


def line(name: str, tool: str, keys: str, pattern: str, kind: str = "", *, flags: int = 0,
         weak: bool = False, needs: str | None = None) -> Rule:
    """A one-line rule: `keys` is a '|'-separated list of lowercase literals."""
    return Rule(name, tool, tuple(keys.split("|")), re.compile(pattern, flags), kind,
                weak=weak, needs=needs)


def block(name: str, tool: str, keys: str, pattern: str, build: Builder, *, flags: int = 0,
          weak: bool = False, needs: str | None = None) -> Rule:
    return Rule(name, tool, tuple(keys.split("|")), re.compile(pattern, flags), build=build,
                weak=weak, needs=needs)


def consequence(name: str, keys: str, pattern: str, flags: int = 0) -> Rule:
    return Rule(name, "", tuple(keys.split("|")), re.compile(pattern, flags), consequence=True)


def follow(lines: list[str], i: int, limit: int = 3) -> list[str]:
    """Continuation lines of a wrapped message: non-empty, not a new marker, at most `limit`."""
    out = []
    for text in lines[i + 1:i + 1 + limit]:
        if not text.strip() or _NEW_ITEM.match(text):
            break
        out.append(text.strip())
    return out


_NEW_ITEM = re.compile(r"^\s*(?:at |File \"|Traceback|During handling|The above exception|Caused by|"
                       r"\w+(?:Error|Exception|Warning)\b|[-=*#]{3}|\[|npm (?:ERR|error)|error|"
                       r"warning|note:|hint:|help:|-->|\d+ \||\[end of output\])", re.I)
