"""What the editor shows us, translated into failures and where they appear.

Three inputs: diagnostics forwarded by the editor plugins (`poimen/diagnostics`),
terminal output (`poimen/terminalOutput`) and open log-like documents. Each becomes
a list of `Placement`s: a failure (the text the engine is asked about) at a range in
a document, which is what hovers and code actions look up.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import attrs
from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

OWN_SOURCE = "poimen"
FRAMES_PER_FAILURE = 20
PREFETCH_PER_URI = 20     # a flood of diagnostics in one file: the first ones are prefetched
LOG_SUFFIXES = (".log", ".out", ".err")
LOG_LANGUAGES = {"log", "Log"}
SKIP_PARTS = {"site-packages", "node_modules", ".venv", "venv", ".git", "dist-packages",
              ".cargo", ".rustup"}
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
PY_FRAME = re.compile(r'File "(?P<path>[^"\n]+)", line (?P<line>\d+)')
PATH_LINE = re.compile(
    r"(?P<path>(?:[A-Za-z]:[\\/]|file://)?[\w.~/\\@+-]*[\w-]\.[A-Za-z][\w]{0,5})"
    r":(?P<line>\d+)(?::(?P<col>\d+))?")
Extract = Callable[[str, "str | None"], list]
SEVERITY_RANK = {"error": 1, "warning": 2, "information": 3, "hint": 4}


# -- the custom notifications' params (camelCase on the wire) ---------------------------
@attrs.define
class ForwardedDiagnostics:
    uri: str
    diagnostics: list[types.Diagnostic] = attrs.field(factory=list)


@attrs.define
class TerminalOutput:
    command: str
    output: str
    exit_code: int | None = None  # VS Code may not know it; the output still counts
    cwd: str | None = None


# -- what hovers and code actions look up ---------------------------------------------------
@dataclass(frozen=True)
class Failure:
    key: str                 # the root signature's sig_sha, else a hash of the text
    text: str                # what the engine is asked about (`signature_source`)
    source: str              # "diagnostic" | "terminal" | "ci"
    title: str               # one line, for messages
    signatures: tuple = ()   # poimen.signatures.Signature, root first


@dataclass(frozen=True)
class Placement:
    uri: str
    range: types.Range
    failure: Failure


@dataclass
class Index:
    """Placements by uri and origin (forwarded diagnostics, a document, a terminal command)."""

    _by_origin: dict[tuple[str, str], list[Placement]] = field(default_factory=dict)

    def replace(self, origin: str, uri: str, placements: list[Placement]) -> None:
        if placements:
            self._by_origin[(origin, uri)] = placements
        else:
            self._by_origin.pop((origin, uri), None)

    def drop_origin(self, origin: str) -> list[str]:
        """Forget an origin everywhere; returns the uris it was in."""
        keys = [k for k in self._by_origin if k[0] == origin]
        for key in keys:
            del self._by_origin[key]
        return [uri for _, uri in keys]

    def in_uri(self, uri: str, origin_prefix: str = "") -> list[Placement]:
        return [p for (origin, u), ps in self._by_origin.items()
                if u == uri and origin.startswith(origin_prefix) for p in ps]

    def at(self, uri: str, position: types.Position) -> list[Placement]:
        return [p for p in self.in_uri(uri) if contains(p.range, position)]

    def overlapping(self, uri: str, rng: types.Range) -> list[Placement]:
        return [p for p in self.in_uri(uri) if overlaps(p.range, rng)]

    def failure(self, key: str) -> Failure | None:
        for placements in self._by_origin.values():
            for p in placements:
                if p.failure.key == key:
                    return p.failure
        return None


def contains(rng: types.Range, pos: types.Position) -> bool:
    start, end = (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)
    return start <= (pos.line, pos.character) <= end


def overlaps(a: types.Range, b: types.Range) -> bool:
    return contains(a, b.start) or contains(a, b.end) or contains(b, a.start)


# -- translating inputs ------------------------------------------------------------------------
def strip_ansi(text: str) -> str:
    return ANSI.sub("", text).replace("\r\n", "\n")


def failure_from(text: str, source: str, extract: Extract, tool: str | None = None) -> Failure:
    """`extract` is `poimen.engine.extract_signatures` (it redacts before hashing)."""
    text = strip_ansi(text).strip()
    signatures = tuple(extract(text, tool)) if text else ()
    key = signatures[0].sig_sha if signatures else \
        "text:" + hashlib.sha256(" ".join(text.split()).encode()).hexdigest()
    title = (f"{signatures[0].tool} {signatures[0].kind}" if signatures
             else text.splitlines()[0][:80] if text else "(empty)")
    return Failure(key, text, source, title, signatures)


def from_diagnostics(params: ForwardedDiagnostics, min_severity: str,
                     extract: Extract) -> list[Placement]:
    """Other tools' diagnostics at or above `min_severity`; our own are ignored."""
    worst = SEVERITY_RANK[min_severity]
    out = []
    for diag in params.diagnostics:
        if (diag.source or "").lower() == OWN_SOURCE or not diag.message.strip():
            continue
        if diag.severity is not None and diag.severity.value > worst:
            continue
        out.append(Placement(params.uri, diag.range, failure_from(diag.message, "diagnostic", extract)))
    return out


def from_log_document(uri: str, text: str, extract: Extract) -> list[Placement]:
    """One placement per signature found in a log-like document, over its excerpt's lines."""
    clean = strip_ansi(text)
    lines = clean.splitlines()
    out = []
    for sig in extract(clean, None):
        first = max(0, min(sig.line, len(lines) - 1))
        last = min(len(lines) - 1, first + max(0, sig.excerpt.count("\n")))
        rng = types.Range(types.Position(first, 0),
                          types.Position(last, len(lines[last]) if lines else 0))
        failure = Failure(sig.sig_sha, sig.excerpt, "ci", f"{sig.tool} {sig.kind}", (sig,))
        out.append(Placement(uri, rng, failure))
    return out


def is_log_document(doc: types.TextDocumentItem | Any) -> bool:
    uri = str(doc.uri)
    return uri.endswith(LOG_SUFFIXES) or getattr(doc, "language_id", None) in LOG_LANGUAGES


def frames_in_workspace(output: str, cwd: str | None, roots: Iterable[str]) -> list[tuple[str, int]]:
    """(file uri, 0-based line) for each stack frame or `path:line` that names a workspace file."""
    roots = [Path(r).resolve() for r in roots if r]
    base = Path(cwd).resolve() if cwd else (roots[0] if roots else None)
    seen: dict[tuple[str, int], None] = {}
    for match in [*PY_FRAME.finditer(output), *PATH_LINE.finditer(output)]:
        path = _resolve(match.group("path"), base, roots)
        line = int(match.group("line")) - 1
        if path is not None and line >= 0:
            seen.setdefault((from_fs_path(str(path)) or path.as_uri(), line), None)
        if len(seen) >= FRAMES_PER_FAILURE:
            break
    return list(seen)


def _resolve(raw: str, base: Path | None, roots: list[Path]) -> Path | None:
    if raw.startswith("file://"):
        raw = to_fs_path(raw) or ""
    path = Path(raw).expanduser()
    candidates = [path] if path.is_absolute() else \
        [b / path for b in ([base] if base else []) + roots]
    for candidate in candidates:
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError):
            continue
        inside = [r for r in roots if real == r or r in real.parents]
        if inside and real.is_file() and not SKIP_PARTS & set(real.relative_to(inside[0]).parts):
            return real
    return None


def line_range(uri: str, line: int) -> types.Range:
    """The whole of `line` in the file at `uri` (its length read from disk)."""
    path = to_fs_path(uri)
    width = 0
    try:
        with open(path or "", encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle):
                if number == line:
                    width = len(text.rstrip("\n"))
                    break
    except OSError:
        pass
    return types.Range(types.Position(line, 0), types.Position(line, width))


# -- handlers: what each input does (called from server.py) ----------------------------------
async def on_diagnostics(ls, params: ForwardedDiagnostics) -> None:
    """Index the forwarded diagnostics of one uri, answered in the background."""
    session = ls.session

    async def analyse() -> None:
        placements = await session.parse(lambda extract: from_diagnostics(
            params, session.settings.min_severity, extract))
        session.index.replace("diagnostics", params.uri, placements)
        await _prefetch(session, placements)

    session.intake.submit(("diagnostics", params.uri), analyse)


async def on_log_document(ls, uri: str) -> None:
    """Analyse an open log-like document (on open and change, debounced)."""
    session = ls.session

    async def analyse() -> None:
        doc = ls.workspace.get_text_document(uri)
        placements = await session.parse(
            lambda extract: from_log_document(uri, doc.source, extract))
        session.index.replace("document", uri, placements)
        await _prefetch(session, placements)

    session.intake.submit(("document", uri), analyse)


def on_close(ls, uri: str) -> None:
    ls.session.index.replace("document", uri, [])


async def _prefetch(session, placements: list[Placement]) -> None:
    """Answer the first few placements now; the rest are looked up when hovered."""
    from .session import place_id

    if placements:
        session.latest = placements[-1].failure
    for placement in placements[:PREFETCH_PER_URI]:
        await session.answer(placement.failure, place_id(
            placement.failure, placement.uri, placement.range.start.line))
