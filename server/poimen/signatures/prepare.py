"""Input to lines: decode, clip, strip escapes and the framing that logs wrap around output.

GitHub Actions logs carry a per-line ISO timestamp and `##[group]` / `##[endgroup]` /
`##[error]` framing; docker compose prefixes `service_1  | `; k9s and Terraform draw `│`
boxes; klog and log4j put a timestamp first; pasted text is often quoted with `>`. All of
that goes before any rule looks at a line. Every line is clipped to `LINE_CAP` characters,
so a 50 MB single line costs one slice, not a regex over 50 MB.
"""

from __future__ import annotations

import re

from .normalise import LINE_CAP

_ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[ -/]{0,4}[@-~]|\x1b[()][0-9A-Za-z]|\x1b")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PREFIX = re.compile("|".join((
    r"\ufeff?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z ?",  # Actions timestamp
    r"[ \t]{0,40}\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\]\s?",  # log4j
    r"[\w.-]{1,80}(?:[_-]\d{1,3})?\s{1,40}\| ",  # docker compose service prefix
    r"[ \t]{0,40}[│┃║|][ \t]?",  # box drawing (Terraform, k9s)
    r"[ \t]{0,40}>[ \t]?(?=\S)",  # quoted paste
    r"#\d{1,4} \d{1,6}\.\d{1,4} ",  # buildkit step output
    r"[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9}\s+\d+ [\w.-]{1,80}:\d+\] ",  # klog
    r"ERROR: logging before flag\.Parse: ",
    r"[ \t]{0,40}\[ {0,3}\d{1,3}%\]\s",  # cmake/make progress
    r"(?:INFO|DEBUG|TRACE)\s+(?=\S)",
    r"\[\d{1,2}-[A-Z][a-z]{2}-\d{4} \d{2}:\d{2}:\d{2}(?: [A-Za-z/_+-]{1,30})?\] ",  # PHP log
    r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\] (?:\w+\.\w+: )?",  # Laravel/Monolog
    r"\d{1,6}(?=(?:ERROR|FATAL|WARNING|Error|Running|Job|\$ ))",  # web-UI line numbers, glued
    r"\$ (?=\S)",  # a shell prompt
)))
# Python logging's `LEVEL [logger.name] message` (alembic, many CLIs): the logger is where,
# not what
_PY_LOGGING = re.compile(r"^(?:ERROR|CRITICAL|FATAL)\s{1,3}"
                         r"\[(?:root|[a-z_]\w{0,40}(?:\.\w{1,40}){1,6})\] (?=\S)")
_GHA_COMMAND = re.compile(r"^##\[(group|endgroup|error|warning|notice|debug|section|command)\](.*)$")
_WORKFLOW_COMMAND = re.compile(r"^::(error|warning)(?: [^:]{0,500})?::(.*)$")


def decode(text: str | bytes) -> str:
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise TypeError(f"extract() takes str or bytes, not {type(text).__name__}")
    return text


def clean_line(raw: str) -> str:
    """One physical line as a rule should see it (clipped, unframed, no escapes)."""
    line = raw[:LINE_CAP * 2].rstrip("\r")
    if "\r" in line:  # progress bars redraw with CR: the last frame is what was seen
        line = line.rsplit("\r", 1)[-1]
    if not (line.isascii() and line.isprintable()):
        line = _CONTROL.sub("", _ANSI.sub("", line))
    line = line[:LINE_CAP]
    for _ in range(3):
        prefix = _PREFIX.match(line)
        if not prefix or not prefix.end():
            break
        line = line[prefix.end():]
    if len(line) > 2 and line[0] == line[-1] == "`" and "`" not in line[1:-1]:
        line = line[1:-1]   # one line pasted as inline code
    logged = _PY_LOGGING.match(line)
    if logged:
        line = "Error: " + line[logged.end():]
    gha = _GHA_COMMAND.match(line)
    if gha:
        kind, rest = gha.groups()
        return {"error": "Error: ", "warning": "Warning: "}.get(kind, "") + rest \
            if kind in ("error", "warning", "group", "command") else ""
    wf = _WORKFLOW_COMMAND.match(line)
    if wf:
        return ("Error: " if wf.group(1) == "error" else "Warning: ") + wf.group(2)
    return line


def lines_of(text: str) -> list[str]:
    """Cleaned lines; a line longer than the clip is never copied whole."""
    out, start, size, clip = [], 0, len(text), LINE_CAP * 2
    while start <= size:
        end = text.find("\n", start)
        end = size if end < 0 else end
        out.append(clean_line(text[start:min(end, start + clip)]))
        start = end + 1
    return out
