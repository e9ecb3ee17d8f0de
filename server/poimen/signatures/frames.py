"""Stack frames: parse one frame line per language, normalise it, pick the raise site.

A normalised frame is `function (file)`: the function with generated-code markers folded
(lambdas, anonymous classes, closures, Go func literals, Rust hashes), and the file reduced
by `reduce_path` (in-library path under site-packages / node_modules / cargo, else basename).
Runtime dispatch frames (import machinery, reflection, panic plumbing, Node internals) are
dropped: they change with the runtime version and say nothing about the failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .normalise import reduce_path


@dataclass(frozen=True)
class Frame:
    function: str
    file: str

    @property
    def text(self) -> str:
        return f"{self.function} ({self.file})" if self.file else self.function


PY_FRAME = re.compile(r'^\s*File "(?P<file>[^"]{1,500})", line \d+, in (?P<func>\S{1,200})')
PYTEST_FRAME = re.compile(r"^(?P<file>[\w./\\-]{1,300}\.py):\d+: in (?P<func>\S{1,200})")
JS_FRAME = re.compile(
    r"^\s*at (?:async )?(?:(?P<func>[^()]{1,300}?) \((?P<file>[^()]{1,500}?)(?::\d+){0,2}\)|"
    r"(?P<bare>[^()\s]{1,500}?)(?::\d+){0,2})\s*$")
JAVA_FRAME = re.compile(r"^\s*at (?P<func>[\w$.<>/-]{1,300})\((?P<file>[^()]{0,200})\)")
GO_FILE = re.compile(r"^\s+(?P<file>\S{1,500}\.go):\d+(?: \+0x[0-9a-f]+)?$")

_DROP = re.compile(
    r"^<frozen |importlib\._bootstrap|^(?:jdk\.internal\.reflect|sun\.reflect|java\.lang\.reflect"
    r"|java\.base/jdk\.internal)|^(?:runtime\.gopanic|runtime\.panic|panic$|runtime\.throw)"
    r"|^(?:rust_begin_unwind|core::panicking|std::panicking|std::rt::|__rust|core::ops::function"
    r"|std::sys)|^(?:processTicksAndRejections|process\.processTicksAndRejections)$")
_DROP_FILE = re.compile(r"^(?:node:internal/|internal/)|^<frozen |^runtime/(?:panic|proc)\.go$")

_FOLDS = (
    (re.compile(r"\$\$Lambda(?:\$\d+)?(?:/0x[0-9a-f]+|/\d+)?"), "$$Lambda"),
    (re.compile(r"lambda\$(\w+?)\$\d+"), r"lambda$\1"),
    (re.compile(r"\$\d+(?=\.|$)"), "$"),
    (re.compile(r"(GeneratedMethodAccessor|GeneratedConstructorAccessor|Proxy)\d+"), r"\1"),
    (re.compile(r"::h[0-9a-f]{16}$"), ""),
    (re.compile(r"\bfunc\d+(?:\.\d+)*"), "func"),
    (re.compile(r"\{\{closure\}\}"), "{closure}"),
    (re.compile(r"^(?:java\.base|[\w.]+@[\d.]+)/"), ""),
    (re.compile(r"<(?:genexpr|listcomp|dictcomp|setcomp|lambda)>"), "<lambda>"),
    (re.compile(r"\b\d+\.js$"), "<chunk>.js"),
)


def fold(name: str) -> str:
    for regex, repl in _FOLDS:
        name = regex.sub(repl, name)
    return name


def node_file(file: str) -> str:
    """`node:crypto` and Node <16 `crypto.js` are one file; `node:internal/…` stays internal."""
    if file.startswith("node:"):
        rest = file[5:]
        return rest if rest.startswith("internal/") else rest + ".js"
    return file


def make(function: str, file: str) -> Frame | None:
    """A normalised frame, or None for runtime dispatch frames."""
    function = function.strip()
    file = node_file(file.strip())
    if _DROP.search(function) or _DROP_FILE.search(file):
        return None
    return Frame(fold(function), fold(reduce_path(file)) if file else "")


def collapse(frames: list[Frame]) -> list[Frame]:
    """Collapse recursion: runs of one frame, and repeated cycles of up to 3 frames."""
    out: list[Frame] = []
    for frame in frames:
        out.append(frame)
        for period in (1, 2, 3):
            if len(out) >= 2 * period and out[-period:] == out[-2 * period:-period]:
                del out[-period:]
                break
    return out


def raise_site(frames: list[Frame], innermost_first: bool) -> tuple[str, ...]:
    """The frame where the failure was raised (what `sig_sha` covers), as a 1-tuple or ()."""
    ordered = frames if innermost_first else frames[::-1]
    ordered = collapse(ordered)
    return (ordered[0].text,) if ordered else ()
