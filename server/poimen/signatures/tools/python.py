"""Python tracebacks, pytest, pip, poetry and uv."""

from __future__ import annotations

import re

from .. import frames as fr
from ..rules import Ctx, Hit, block, follow, line

EXC = re.compile(
    r"^(?P<kind>(?:[A-Za-z_]\w{0,60}\.){0,6}[A-Z]\w{0,80}?(?:Error|Exception|Exit|Interrupt|"
    r"Warning|Failure|Fault|Timeout|NotFound|Denied|Refused|Invalid\w*|Iteration))"
    r"(?:: (?P<msg>.*))?$")
IMPORT_KINDS = ("ModuleNotFoundError", "ImportError")
_TB_END = re.compile(r"^\s*(?:During handling of the above|The above exception was)")


def exception_hit(tool: str, kind: str, msg: str, frames: tuple[str, ...], start: int,
                  end: int) -> Hit:
    """Import failures hash without frames: where the import sits is the instance."""
    if kind.rsplit(".", 1)[-1] in IMPORT_KINDS:
        frames = ()
    return Hit(tool, kind, msg, frames, start, end)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _traceback(ctx: Ctx, i: int, m: re.Match):
    lines, found = ctx.lines, []
    margin = _indent(lines[i])  # nested output (pip's build backend) indents the whole block
    for j in range(i + 1, min(len(lines), i + 600)):
        text = lines[j]
        frame = fr.PY_FRAME.match(text)
        if frame:
            made = fr.make(frame["func"], frame["file"])
            if made:
                found.append(made)
            continue
        if not text.strip() or _indent(text) > margin or _TB_END.match(text):
            continue
        exc = EXC.match(text.strip())
        if not exc:
            return None
        msg = " ".join([exc["msg"] or ""] + follow(lines, j))
        return exception_hit("python", exc["kind"], msg, fr.raise_site(found, False), i, j)
    return None


_PYTEST_E = re.compile(r"^E\s{1,80}(?P<body>\S.*)$")   # aligned with the source line
_DEF = re.compile(r"^\s*(?:async )?def (?P<func>\w+)\(")
_PYTEST_LOC = re.compile(r"^(?P<file>[\w./\\-]{1,300}\.py):\d+: \w+$")


def _pytest_e(ctx: Ctx, i: int, m: re.Match):
    lines, body = ctx.lines, m["body"]
    if body.startswith("assert "):
        kind, msg = "AssertionError", body
    else:
        exc = EXC.match(body)
        if not exc:
            return None
        kind, msg = exc["kind"], exc["msg"] or ""
    func = file = ""
    for j in range(i - 1, max(-1, i - 60), -1):
        frame = fr.PYTEST_FRAME.match(lines[j])
        if frame:
            func, file = frame["func"], frame["file"]
            break
        d = _DEF.match(lines[j])
        if d:
            func = d["func"]
            break
    end = i
    while end + 1 < len(lines) and _PYTEST_E.match(lines[end + 1]):
        end += 1
    for j in range(end + 1, min(len(lines), end + 4)):
        loc = _PYTEST_LOC.match(lines[j])
        if loc:
            file = file or loc["file"]
            break
    made = fr.make(func, file) if func else None
    return exception_hit("python", kind, msg, (made.text,) if made else (), i, end)


_MISMATCH_MODULE = re.compile(r"imported module '(?P<mod>[^']{1,300})'")


def _import_mismatch(ctx: Ctx, i: int, m: re.Match):
    """The module's shape (bare vs dotted) and where each copy lives identify the cause."""
    body = " ".join(t.strip() for t in ctx.lines[i + 1:i + 5])
    mod = _MISMATCH_MODULE.search(body)
    if not mod:
        return None
    shape = "<package>.<module>" if "." in mod["mod"] else "<module>"
    body = body[:mod.start("mod")] + shape + body[mod.end("mod"):]
    body = re.sub(r"(?<=:) (\S+?)[\\/]?([^\\/\s]+\.py)\b",
                  lambda p: " <site-packages>/<file>" if re.search(r"(?:site|dist)-packages",
                                                                  p.group(1)) else " <file>",
                  body.split(" HINT:")[0])
    return Hit("pytest", "import-file-mismatch", body, (), i, i + 4)


def _pip_error(ctx: Ctx, i: int, m: re.Match):
    """pip's rich errors: `error: <kind>` then `× <summary>` (body text varies by distro)."""
    weak = m["kind"] in _PIP_WRAPPERS
    for j in range(i + 1, min(len(ctx.lines), i + 4)):
        summary = re.match(r"^\s*×\s*(.+)$", ctx.lines[j])
        if summary:
            return Hit("pip", m["kind"], summary.group(1), (), i, j, weak)
    return Hit("pip", m["kind"], m["kind"], (), i, i, weak)


# a build backend failed: the cause is in the subprocess output that follows, so these
# only stand when nothing inside was recognised
_PIP_WRAPPERS = {"subprocess-exited-with-error", "metadata-generation-failed"}


def _resolver(tool: str):
    def build(ctx: Ctx, i: int, m: re.Match):
        for j in range(i + 1, min(len(ctx.lines), i + 8)):
            because = re.search(r"Because (.+)", ctx.lines[j])
            if because:
                text = " ".join([because.group(1)] + follow(ctx.lines, j, 4))
                return Hit(tool, m.groupdict().get("kind") or "resolution",
                           re.sub(r"\([^()]{0,80}\)", "", text), (), i, j)
        return Hit(tool, "resolution", m.group(0), (), i, i)
    return build


def _poetry_exception(ctx: Ctx, i: int, m: re.Match):
    """Poetry (cleo) prints the exception class alone, a blank line, then the message."""
    for j in range(i + 1, min(len(ctx.lines), i + 4)):
        if ctx.lines[j].strip():
            return Hit("poetry", m["kind"], ctx.lines[j].strip(), (), i, j)
    return None


RULES = [
    block("python-traceback", "python", "traceback (most recent call last)",
          r"^\s*Traceback \(most recent call last\):", _traceback),
    block("pytest-import-mismatch", "pytest", "import file mismatch", r"^import file mismatch:",
          _import_mismatch),
    block("pytest-error-line", "python", "e ", _PYTEST_E.pattern, _pytest_e),
    line("pytest-fixture-missing", "pytest", "fixture '", r"^\s*E?\s*fixture '(?P<msg>[^']+)' not found",
         "fixture-not-found"),
    line("pytest-collection", "pytest", "error collecting",
         r"^_* ERROR collecting (?P<x_file>\S+) _*$", "collection-error", weak=True),
    block("pip-rich-error", "pip", "error: ", r"^error: (?P<kind>[a-z]+(?:-[a-z]+)+)$", _pip_error),
    # pip's option parser (optparse) names the unknown option after its usage text
    line("pip-no-such-option", "pip", "no such option", r"^(?P<msg>no such option: -{1,2}[\w-]+)$",
         "no-such-option"),
    line("pip-no-version", "pip", "could not find a version",
         r"(?P<msg>Could not find a version that satisfies the requirement (?P<pkg>[\w.\[\]-]+))",
         "no-matching-version"),
    line("pip-no-distribution", "pip", "no matching distribution",
         r"(?P<msg>No matching distribution found for [\w.\[\]-]+)", "no-matching-distribution"),
    line("pip-conflict", "pip", "conflicting dependencies",
         r"(?P<msg>Cannot install .{0,300}? because these package versions have conflicting "
         r"dependencies)", "resolution-impossible"),
    line("pip-hash-mismatch", "pip", "do not match the hashes",
         r"(?P<msg>THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE)",
         "hash-mismatch"),
    line("poetry-lock-stale", "poetry", "poetry.lock",
         r"(?P<msg>pyproject\.toml changed significantly since poetry\.lock was last generated|"
         r"poetry\.lock is not consistent with pyproject\.toml)", "lock-stale"),
    block("poetry-solver", "poetry", "solverproblemerror|version solving failed",
          r"(?P<kind>SolverProblemError)|version solving failed", _resolver("poetry")),
    line("poetry-python-requirement", "poetry", "python requirement",
         r"(?P<msg>The current project's Python requirement \(.{1,80}?\) is not compatible with "
         r"some of the required packages Python requirement)", "python-requirement"),
    block("uv-no-solution", "uv", "no solution found",
          r"(?P<kind>No solution found) when resolving dependencies", _resolver("uv")),
    block("poetry-exception", "poetry", "error|exception",
          r"^  (?P<kind>[A-Z]\w{2,80}(?:Error|Exception))$", _poetry_exception, needs="poetry"),
    line("mypy-error", "mypy", ": error:",
         r"^\S+\.pyi?:(?:\d+:){0,2} error: (?P<msg>.+?)(?:  \[(?P<kind>[\w-]+)\])?$", "error"),
    line("python-warning", "python", "warning: ",
         r"^(?P<x_file>\S{1,300}\.py):\d+: (?P<kind>\w*Warning): (?P<msg>.+)$", weak=True),
    # a qualified exception whose name lacks an Error suffix, which bare-exception reads
    # (`django.core.exceptions.
    # ImproperlyConfigured: …`), pasted without its traceback, maybe behind a compose prefix
    line("python-qualified-exception", "python", "exceptions.|django.",
         r"^\s*(?:\S+\s+\| )?(?P<kind>(?:django(?:\.\w{1,40}){1,5}|(?:[a-z_]\w{0,40}\.){0,5}exceptions)"
         r"\.(?!\w*(?:Error|Exception)\b)[A-Z]\w{2,80}): (?P<msg>\S.*)$"),
]
