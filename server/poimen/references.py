"""The R reference corpus: documentation chunked by heading (`mem ref add PATH…`).

Markdown (`#` headings, fenced code ignored), reStructuredText (underlined, optionally
overlined titles; levels in order of first appearance) and plain text (paragraphs).
Each chunk carries its heading path ("file › Section › Subsection"); sections longer
than `MAX_CHUNK_CHARS` split at paragraph breaks. Chunks are redacted, logged as
`reference` records (projected as R nodes) and recorded in the artifact manifest as
`kind: reference`, so the derived filter recognises them when they come back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MAX_CHUNK_CHARS = 1500
MAX_FILE_BYTES = 8 * 1024 * 1024
FORMATS = {".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text",
           ".text": "text", "": "text"}
MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
MD_FENCE = re.compile(r"^\s*(```|~~~)")
RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")


class ReferenceImportError(ValueError):
    """A path cannot be imported (the message says why)."""


@dataclass(frozen=True)
class Chunk:
    path: str
    heading: str          # "file › Section › Subsection"
    body: str

    @property
    def text(self) -> str:
        return f"{self.heading}\n\n{self.body}"


def _sections_markdown(lines: list[str]):
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    fenced = False
    for line in lines:
        if MD_FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else MD_HEADING.match(line)
        if heading:
            yield [t for _, t in stack], body
            level = len(heading.group(1))
            stack = [(lv, t) for lv, t in stack if lv < level] + [(level, heading.group(2))]
            body = []
        else:
            body.append(line)
    yield [t for _, t in stack], body


def _sections_rst(lines: list[str]):
    styles: list[tuple[str, bool]] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = bool(RST_ADORNMENT.match(line))
        title_at = i + 1 if over else i
        if title_at + 1 < len(lines) and lines[title_at].strip() \
                and not RST_ADORNMENT.match(lines[title_at]) \
                and RST_ADORNMENT.match(lines[title_at + 1]) \
                and len(lines[title_at + 1].rstrip()) >= len(lines[title_at].rstrip()) \
                and (not over or lines[i].strip()[0] == lines[title_at + 1].strip()[0]):
            style = (lines[title_at + 1].strip()[0], over)
            if style not in styles:
                styles.append(style)
            level = styles.index(style)
            yield [t for _, t in stack], body
            stack = [(lv, t) for lv, t in stack if lv < level] + \
                [(level, lines[title_at].strip())]
            body = []
            i = title_at + 2
            continue
        body.append(line)
        i += 1
    yield [t for _, t in stack], body


def _split(body: str) -> list[str]:
    """Paragraph-aligned pieces of at most MAX_CHUNK_CHARS (a longer paragraph whole)."""
    pieces, current = [], ""
    for para in re.split(r"\n\s*\n", body):
        para = para.strip("\n")
        if not para.strip():
            continue
        if current and len(current) + 2 + len(para) > MAX_CHUNK_CHARS:
            pieces.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    if current:
        pieces.append(current)
    return pieces


def chunk_text(text: str, name: str, fmt: str) -> list[Chunk]:
    """Chunks of one document; `fmt` is markdown, rst or text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if fmt == "markdown":
        sections = _sections_markdown(lines)
    elif fmt == "rst":
        sections = _sections_rst(lines)
    else:
        sections = [([], lines)]
    chunks = []
    for headings, body in sections:
        heading = " › ".join([name] + headings)
        for piece in _split("\n".join(body)):
            chunks.append(Chunk(name, heading, piece))
    return chunks


def read_document(path: Path) -> list[Chunk]:
    path = Path(path)
    if not path.is_file():
        raise ReferenceImportError(f"{path}: not a file")
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ReferenceImportError(f"{path}: unsupported format (markdown, rst or text)")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ReferenceImportError(f"{path}: over {MAX_FILE_BYTES} bytes")
    raw = path.read_bytes()
    if b"\0" in raw[:8192]:
        raise ReferenceImportError(f"{path}: looks binary")
    return chunk_text(raw.decode("utf-8", errors="replace"), path.name, fmt)


def expand(paths: list[Path]) -> list[Path]:
    """Files named, and supported files under folders named, in a stable order."""
    out = []
    for path in map(Path, paths):
        if path.is_dir():
            out += sorted(p for p in path.rglob("*")
                          if p.is_file() and p.suffix.lower() in FORMATS and p.suffix)
        else:
            out.append(path)
    return out


def add(vault, paths: list[Path], project: str = "") -> list[dict]:
    """Import documents as R chunks, folded into the full-text index before it returns;
    one summary dict per chunk (sha, heading, new)."""
    from .derived import record_artifact
    from .redact import redact

    files = expand(paths)
    if not files:
        raise ReferenceImportError("no documents found")
    records, chunks = [], []
    for path in files:
        for chunk in read_document(path):
            clean = redact(chunk.text)
            records.append({"type": "reference", "text": clean.text,
                            "heading": chunk.heading, "path": str(path),
                            "project": project})
            chunks.append((chunk, clean))
    results = vault.commit(records)
    if any(new for _, new in results):
        vault.settle()   # new chunks in the full-text index now (`Vault.settle`)
    out = []
    for (chunk, clean), (sha, new) in zip(chunks, results):
        if new:
            record_artifact(vault.path, "reference", f"{chunk.heading} [{sha[:12]}]",
                            clean.text)
        out.append({"sha": sha, "path": chunk.path, "heading": chunk.heading,
                    "new": new, "redactions": [list(f) for f in clean.findings]})
    return out
