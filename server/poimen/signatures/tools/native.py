"""Rust (rustc, cargo, panics), Go (panics, build, go command), C/C++ (gcc, clang, ld),
CMake, the shell and systemd."""

from __future__ import annotations

import re

from .. import frames as fr
from ..rules import Ctx, Hit, block, follow, line


_GUTTER = re.compile(r"^\s*(?:-->|\|)")


def _rustc(ctx: Ctx, i: int, m: re.Match):
    """Compiler errors hash without their location: the message names the instance."""
    if not (any(_GUTTER.match(t) for t in ctx.lines[i + 1:i + 3]) or ctx.has("cargo")):
        return None
    return Hit("cargo", m["kind"] or "error", m["msg"], (), i, i)


def _build_script(ctx: Ctx, i: int, m: re.Match):
    """`failed to run custom build command`: the crate plus the build script's first error."""
    detail, end = "", i
    for j in range(i + 1, min(len(ctx.lines), i + 60)):
        text = ctx.lines[j].strip()
        if text.startswith("cargo:") or not text:
            continue
        if re.search(r"\bfail|\berror\b|panicked at|not found|No such file", text, re.I) and \
                not text.startswith("process didn't exit successfully"):
            detail, end = text, j
            break
    msg = f"failed to run custom build command for `{m['crate']}`" + (f": {detail}" if detail else "")
    return Hit("cargo", "build-script", msg, (), i, end)


_PANIC_OLD = re.compile(r"panicked at '(?P<msg>.*?)', (?P<loc>\S+?):?$")
_PANIC_NEW = re.compile(r"panicked at (?P<loc>\S+?\.rs(?::\d+){0,2}):?$")
_PANIC_OPEN = re.compile(r"panicked at '(?P<msg>.*)$")


def _rust_panic(ctx: Ctx, i: int, m: re.Match):
    """Message plus panic location (crate and in-crate path): where it panicked is identity."""
    text, lines = ctx.lines[i], ctx.lines
    old = _PANIC_OLD.search(text)
    if old:
        return Hit("rust", "panic", old["msg"], (fr.reduce_path(old["loc"]),), i, i)
    new = _PANIC_NEW.search(text)
    if new and i + 1 < len(lines):
        return Hit("rust", "panic", lines[i + 1], (fr.reduce_path(new["loc"]),), i, i + 1)
    opened = _PANIC_OPEN.search(text)
    if opened:
        body, end = [opened["msg"]], i
        for j in range(i + 1, min(len(lines), i + 12)):
            close = re.search(r"^(?P<msg>.*)', (?P<loc>\S+?):?$", lines[j])
            if close:
                body.append(close["msg"])
                return Hit("rust", "panic", " ".join(body), (fr.reduce_path(close["loc"]),), i, j)
            body.append(lines[j])
            end = j
        return Hit("rust", "panic", " ".join(t for t in body if t.strip())[:200], (), i, end)
    return None




def _go_function(line: str) -> str:
    """`pkg.(*T).M(0xc000132960, ...)` → `pkg.(*T).M`: the argument list is the last `(`."""
    text = line.strip()
    return text[:text.rfind("(")] if text.endswith(")") and "(" in text else text


def _go_panic(ctx: Ctx, i: int, m: re.Match):
    lines, found, end = ctx.lines, [], i
    start = None
    for j in range(i + 1, min(len(lines), i + 8)):
        if re.match(r"^goroutine \d+ \[", lines[j]):
            start = j
            break
    if start is not None:
        j = start + 1
        while j + 1 < len(lines) and j < start + 400:
            func, where = lines[j], fr.GO_FILE.match(lines[j + 1])
            if not where or not func.strip():
                break
            name = _go_function(func)
            made = fr.make(name.rsplit("/", 1)[-1], where["file"])
            if name.startswith("panic"):
                found = []  # frames above panic() are deferred handlers, not the raise site
            elif made and not name.startswith("runtime."):
                found.append(made)
            end = j + 1
            j += 2
    msg = re.sub(r"\s*\[recovered\]$", "", m["msg"])
    return Hit("go", m["kind"] or "panic", msg, fr.raise_site(found, True), i, end)


_GO_TEST_LOG = re.compile(r"^\s+[\w.-]{1,200}_test\.go:\d+: (?P<msg>\S.*?)\s*$")


def _go_test(ctx: Ctx, i: int, m: re.Match):
    """`--- FAIL: TestX (0.00s)` and the test's first `x_test.go:N: msg` line: the test and
    what it reported. A test whose report is elsewhere (subtests, no t.Log) is weak."""
    for j in range(i + 1, min(len(ctx.lines), i + 3)):
        logged = _GO_TEST_LOG.match(ctx.lines[j])
        if logged:
            return Hit("go", "test-failed", f"{m['msg']}: {logged['msg']}", (), i, j)
        if ctx.lines[j].lstrip().startswith("--- "):
            break
    return Hit("go", "test-failed", m["msg"], (), i, i, weak=True)


def _undefined_reference(ctx: Ctx, i: int, m: re.Match):
    """Linker: the symbol, the referencing function, and whether this is a CMake probe."""
    lines, func = ctx.lines, ""
    for j in range(i, max(-1, i - 3), -1):
        where = re.search(r"[Ii]n function [`'](?P<f>.{1,300}?)':?$", lines[j])
        if where:
            func = where["f"]
            break
    probe = any("cmTC_" in t or "CheckSymbolExists" in t or "CheckFunctionExists" in t
                for t in lines[max(0, i - 12):i + 4])
    kind = "try-compile-probe" if probe else "undefined-reference"
    return Hit("ld", kind, m["msg"], (fr.fold(func),) if func else (), i, i)


_COMPILERS = {".java": "javac", ".kt": "kotlin", ".swift": "swift", ".py": "mypy"}


def _compiler_error(ctx: Ctx, i: int, m: re.Match):
    """`file:line[:col]: error: msg` (gcc, clang, javac, swiftc): the extension names it."""
    ext = "." + m["file"].rsplit(".", 1)[-1] if "." in m["file"] else ""
    return Hit(_COMPILERS.get(ext, "gcc"), m["kind"], m["msg"], (), i, i)


def _cmake(ctx: Ctx, i: int, m: re.Match):
    body = follow(ctx.lines, i, 4)
    return Hit("cmake", m["cmd"] or "error", " ".join(body) or m["rest"] or "", (), i, i + len(body))


RULES = [
    line("cargo-msrv", "cargo", "cannot be built because it requires rustc",
         r"(?P<msg>package `(?P<x_crate>[\w-]+) v\S+` cannot be built because it requires rustc "
         r"(?P<x_version>[\d.]+) or newer, while the currently active rustc version is "
         r"(?P<x_active>[\d.]+\S*))", "msrv"),
    block("cargo-build-script", "cargo", "failed to run custom build command",
          r"failed to run custom build command for `(?P<crate>[\w-]+)(?: v\S+)?`", _build_script),
    line("cargo-linker", "cargo", "linker `", r"^error: (?P<msg>linker `[^`]+` not found)$",
         "linker-not-found"),
    line("cargo-rustc-signal", "cargo", "process didn't exit successfully",
         r"process didn't exit successfully: `\S*?(?P<x_prog>rustc|build-script-\w+)[^`]*` "
         r"\((?P<msg>signal: \d+, \w+: \w+)\)", "killed"),
    line("go-checksum", "go", "checksum mismatch",
         r"verifying (?P<x_module>\S+): (?P<msg>checksum mismatch)", "checksum-mismatch"),
    line("rustc-trait-bound", "cargo", "the trait bound",
         r"^(?:error\[E0277\]: )?(?P<msg>the trait bound `.+` is not satisfied)", "E0277"),
    block("rustc-error", "cargo", "error",
          r"^error(?:\[(?P<kind>E\d{4})\])?: (?P<msg>.+)$", _rustc),
    block("rust-panic", "rust", "panicked at", r"thread '[^']{0,200}' panicked at ", _rust_panic),
    block("go-panic", "go", "panic|fatal error",
          r"^(?:.{0,200}http: panic serving \S+: |(?P<kind>panic|fatal error): )(?P<msg>.+)$",
          _go_panic),
    line("go-compile", "go", ".go:", r"^(?:\./)?(?P<x_file>[\w./-]{1,300}\.go):\d+:\d+: (?P<msg>.+)$",
         "compile", needs="go"),
    line("go-command", "go", "go: |go build: |go test: |go run: |go vet: |go install: |go get: ",
         r"^go(?: (?:build|test|run|vet|install|get))?: (?!downloading|finding|extracting|found |added |"
         r"upgraded |creating |to add)(?P<msg>.+)$", "go"),
    block("go-test-fail", "go", "--- fail:", r"^\s*--- FAIL: (?P<msg>\S+)", _go_test),
    block("compiler-error", "gcc", "error:|error :",
          r"^(?P<file>[^\s:]{1,300}):\d+(?::\d+)?: (?P<kind>(?:fatal )?error): (?P<msg>.+)$",
          _compiler_error),
    block("ld-undefined-reference", "ld", "undefined reference",
          r"(?P<msg>undefined reference to [`'][^`']{1,300}')", _undefined_reference),
    line("ld-multiple-definition", "ld", "multiple definition of",
         r"(?P<msg>multiple definition of [`'][^`']{1,300}')", "multiple-definition"),
    line("compiler-killed", "gcc", "killed signal terminated program",
         r"(?P<msg>(?:fatal error: )?Killed signal terminated program \S+)", "killed"),
    line("ld-cannot-find", "ld", "cannot find -l|library not found for",
         r"(?P<msg>(?:cannot find|library not found for) -l[\w.+-]+)", "missing-library"),
    line("loader-missing-library", "ld.so", "error while loading shared libraries",
         r"error while loading shared libraries: (?P<msg>[\w.+-]{1,200}: cannot open shared "
         r"object file)", "missing-shared-library"),
    line("ld-undefined-symbols", "ld", "undefined symbols for architecture",
         r"(?P<msg>Undefined symbols for architecture [\w-]+)", "undefined-symbols"),
    block("cmake-error", "cmake", "cmake error",
          r"^CMake Error(?: at (?P<x_file>\S+):\d+ \((?P<cmd>\w+)\))?:?\s*(?P<rest>.*)$", _cmake),
    line("shell-not-found", "shell", "not found|no such file|permission denied",
         r"^(?:/bin/|/usr/bin/)?(?:ba|z|da|k)?sh: (?:line \d+: |\d+: )?(?P<msg>[^:\s]{1,200}: "
         r"(?:command not found|not found|No such file or directory|Permission denied))$",
         "exec"),
    line("systemd-exec", "systemd", "failed at step",
         r"(?P<msg>Failed at step (?P<step>[A-Z_]+) spawning \S+: .+)$", "step-failed"),
    line("systemd-status", "systemd", "main process exited",
         r"(?P<msg>Main process exited, code=\w+, status=\S+)", "exit-status", weak=True),
    line("kernel-signal", "linux", "segmentation fault|killed|bus error",
         r"^(?:.{0,200}: )?(?P<msg>Segmentation fault|Bus error|Illegal instruction|Killed)"
         r"(?: \(core dumped\))?$", "signal"),
]

