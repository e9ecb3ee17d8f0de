"""Memory checkers: AddressSanitizer and its siblings (LSan, TSan, MSan, UBSan) and
Valgrind Memcheck. The error class is the kind; the first frame outside the checker's
own runtime is the raise site; addresses, pids and sizes of blocks are instances."""

from __future__ import annotations

import re

from .. import frames as fr
from ..rules import Ctx, Hit, block, line

_SAN_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-fA-F]+ in (?P<func>\S+) (?P<file>\S+?)(?::\d+){0,2}$")
_VG_FRAME = re.compile(r"^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: (?P<func>.+?) \((?P<where>[^)]*)\)$")
_RUNTIME = re.compile(r"^(?:__interceptor_|__asan_|__sanitizer|__tsan_|__msan_|__ubsan_|"
                      r"operator (?:new|delete)|malloc$|calloc$|realloc$|free$|vg_replace_)")


def _site(found: list[tuple[str, str]]) -> tuple[str, ...]:
    made = [fr.make(func, file) for func, file in found
            if not _RUNTIME.match(func) and "vgpreload" not in file]
    return fr.raise_site([f for f in made if f], True)


def _sanitizer(ctx: Ctx, i: int, m: re.Match):
    """`==pid==ERROR: AddressSanitizer: heap-use-after-free on address …`: the report runs
    to its `SUMMARY:` line; the first stack's first user frame is the raise site."""
    lines, found, end = ctx.lines, [], i
    in_first_stack = True
    for j in range(i + 1, min(len(lines), i + 300)):
        frame = _SAN_FRAME.match(lines[j])
        if frame and in_first_stack:
            found.append((frame["func"], frame["file"]))
        elif found and not frame:
            in_first_stack = False
        end = j
        if lines[j].startswith("SUMMARY: "):
            break
    else:
        end = i + len(found)
    return Hit(m["tool"], m["kind"].strip(), f"{m['tool']}: {m['kind'].strip()}", _site(found), i, end)


def _valgrind(ctx: Ctx, i: int, m: re.Match):
    """`==pid== Invalid read of size 4` and its `at`/`by` stack."""
    found, end = [], i
    for j in range(i + 1, min(len(ctx.lines), i + 60)):
        frame = _VG_FRAME.match(ctx.lines[j])
        if not frame:
            break
        if not frame["where"].startswith("in "):  # `(in /lib/libc.so)`: a library's frame
            found.append((frame["func"], frame["where"].split(":")[0]))
        end = j
    return Hit("valgrind", m["kind"] or m["kind2"] or "memcheck", m["msg"], _site(found), i, end)


def _valgrind_startup(ctx: Ctx, i: int, m: re.Match):
    """`valgrind: Fatal error at startup: a function redirection …`: the redirected function
    and library named below are what failed."""
    body, end = [m["msg"]], i
    for j in range(i + 1, min(len(ctx.lines), i + 20)):
        text = ctx.lines[j]
        if not text.startswith("valgrind:"):
            break
        named = re.search(r"(?:pattern|soname matching):\s+(\S+)", text)
        if named:
            body.append(named.group(1))
        end = j
    return Hit("valgrind", "startup", " ".join(body), (), i, end)


RULES = [
    block("sanitizer-report", "sanitizer", "sanitizer: ",
          r"^(?:==\d+==)?(?:ERROR|WARNING): (?P<tool>\w+Sanitizer): (?P<kind>[A-Za-z][\w -]{0,60}?)"
          r"(?= on (?:unknown )?address| at pc| \(|:|\s*$)", _sanitizer),
    line("sanitizer-runtime", "sanitizer", "asan runtime|sanitizer",
         r"^==\d+==(?P<msg>(?:ASan|\w+Sanitizer)\b[^=]{3,300}?)\s*(?:==\d+==.*)?$", "runtime"),
    line("ubsan-runtime-error", "ubsan", "runtime error:",
         r"^(?P<x_file>[^\s:]{1,300}):\d+:\d+: runtime error: (?P<msg>.+?)\s*$", "runtime-error"),
    block("valgrind-error", "valgrind", "==",
          r"^==\d+== (?P<msg>(?P<kind>Invalid (?:read|write)|Use of uninitialised value) of size "
          r"\d+|(?P<kind2>Invalid free|Mismatched free)\(\).*|Conditional jump or move depends on "
          r"uninitialised value\(s\)|Syscall param \S+ points to \w+ byte\(s\)|Source and "
          r"destination overlap in \w+)\s*$", _valgrind),
    block("valgrind-startup", "valgrind", "fatal error at startup",
          r"^valgrind:\s+(?P<msg>Fatal error at startup: .+?)\s*$", _valgrind_startup),
]
