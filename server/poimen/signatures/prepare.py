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
    r"\[(?:INFO|ERROR|WARNING)\] (?=(?:error|warning|info|npm ERR!|npm error|npm warn)\b)",  # a relayed child's line
)))
# lines a person's paste adds around output: a Markdown code fence (```` ```text ````, `~~~`),
# a quoted blank line (`>`), an interpreter's empty prompt (`>>>`). One paste has them, the
# next does not, and a rule that reads a message on into the next line must not take them in

_PASTE_FRAME = re.compile(r"[\s>]*(?:(?:```|~~~)[\w+.-]{0,20}|>)[\s>]*$")
# a line a person's paste marks up as inline code (`` `ERROR: x` ``): the marks are not output
_MD_CODE_LINE = re.compile(r"(\s*)`([^`]+)`\s*$")
_GHA_COMMAND = re.compile(r"^##\[(group|endgroup|error|warning|notice|debug|section|command)\](.*)$")
_WORKFLOW_COMMAND = re.compile(r"^::(error|warning)(?: [^:]{0,500})?::(.*)$")


# a logger's `LEVEL [logger.name] message` line (Python logging's common format, alembic,
# Flask): the logger says where the message was logged, not what failed
_LOGGER_LINE = re.compile(r"(ERROR|CRITICAL|FATAL|WARNING|WARN)\s{1,4}\[[\w.$-]{1,80}\]\s+(?=\S)")


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
    if _PASTE_FRAME.match(line):
        return ""
    logged = _LOGGER_LINE.match(line)
    if logged:
        line = f"{logged.group(1)}: {line[logged.end():]}"
    code = _MD_CODE_LINE.match(line)
    if code:
        line = code.group(1) + code.group(2)
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
    return _unframe_records(out)


# a logger that frames every line of one record (`<time> Error: Plugin: Traceback (most
# recent call last):`, then the same framing before each frame and the exception line)
_RECORD_HEAD = re.compile(r"(?P<frame>\S.{0,160}?)Traceback \(most recent call last\):")
_DIGITS = re.compile(r"\d")


def _unframe_records(lines: list[str]) -> list[str]:
    """Drop a logger's framing from the lines of a traceback it wraps, so the traceback
    reads as Python printed it; times inside the framing differ from line to line."""
    i = 0
    while i < len(lines):
        head = _RECORD_HEAD.match(lines[i]) if "Traceback (most" in lines[i] else None
        if not head:
            i += 1
            continue
        width, key = len(head["frame"]), _DIGITS.sub("0", head["frame"])
        j = i
        while j < len(lines) and _DIGITS.sub("0", lines[j][:width]) == key:
            lines[j] = lines[j][width:]
            j += 1
        i = j
    return lines
