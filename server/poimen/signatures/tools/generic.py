"""Consequences (claimed, never reported), bare exception lines, logfmt, and the generic
`error:` fallback (weak: reported only when no tool rule found anything)."""

from __future__ import annotations

import re

from .. import frames as fr
from ..rules import Ctx, Hit, block, consequence, line
from .python import EXC, exception_hit

CONSEQUENCES = [
    consequence("exit-code", "exit code|exit status|exited with|non-zero|exit 1",
                r"(?:Process completed|failed|finished|exited|Command failed|returned|"
                r"completed) with (?:a )?(?:non-zero )?exit (?:code|status)|exited with code|"
                r"returned non-zero exit status|returned a non-zero code|^Error: Command exited|"
                r"ld returned \d+ exit status|linker command failed with exit code|"
                r"Job failed: exit (?:code|status)", re.I),
    consequence("make", "***|recipe for target|build stopped|subcommand failed",
                r"^g?make(?:\[\d+\])?: \*\*\*|recipe for target .* failed|^ninja: build stopped"),
    consequence("cargo-summary", "could not compile|build failed|aborting due to",
                r"^error: could not compile|^error: build failed|build failed, waiting for other "
                r"jobs|aborting due to (?:\d+ )?previous errors?|^Error: Build failed"),
    consequence("npm-lifecycle", "elifecycle|npm err!|npm error",
                r"ELIFECYCLE|^\s*npm (?:ERR!|error) (?:errno|Exit status|Failed at|A complete log|"
                r"Log files|This is probably|code (?:ELIFECYCLE|1)\b)"),
    consequence("build-summary", "build failed|errors occurred|compiled with|found ",
                r"^BUILD FAILED|^FAILURE: Build failed|Configuring incomplete, errors occurred|"
                r"compiled with \d+ errors?|^Found \d+ errors?\b|^error Command failed"),
    consequence("buildkit-process", "did not complete successfully",
                r"failed to solve: process \".*\" did not complete successfully"),
    consequence("test-summary", "failed|error ", r"^=+ .*\b(?:failed|errors?)\b.* =+$|^FAILED \S+::|"
                r"^ERROR \S+::|^\d+ failed\b"),
    consequence("http-status", " 4| 5", r"(?:^|\s)[45]\d\d (?:Bad Gateway|Gateway Time-?out|Service "
                r"Unavailable|Internal Server Error|Not Found|Forbidden|Unauthorized|Bad Request)\s*$"),
    consequence("pod-state", "backoff|errimagepull",
                r"^\S+\s+\d+/\d+\s+(?:CrashLoopBackOff|ImagePullBackOff|ErrImagePull|Error)\s"),
    consequence("pip-build-summary", "could not build wheels|failed building wheel|failed to build|"
                "this error originates from a subprocess",
                r"Could not build wheels for|Failed building wheel for|^\s*Failed to build \S|"
                r"This error originates from a subprocess"),
    consequence("systemd-result", "failed with result", r"Failed with result '"),
]


def _bare_exception(ctx: Ctx, i: int, m: re.Match):
    """`SomeError: message` with no stack: Python unless the text says otherwise."""
    exc = EXC.match(ctx.lines[i].strip())
    if not exc or not exc["msg"]:
        return None
    tool = "node" if ctx.has("node") and not ctx.has("python") else "python"
    msg = " ".join([exc["msg"]] + [t.strip() for t in ctx.lines[i + 1:i + 3]
                                    if t.strip() and t[:1] not in "\t" and not EXC.match(t.strip())
                                    and not t.strip().startswith(("at ", "warnings."))])
    return exception_hit(tool, exc["kind"], msg, _frames_above(ctx.lines, i), i, i)


def _frames_above(lines: list[str], i: int) -> tuple[str, ...]:
    """A traceback pasted without its `Traceback` header still has frames above the error."""
    found = []
    for j in range(i - 1, max(-1, i - 200), -1):
        text = lines[j]
        frame = fr.PY_FRAME.match(text)
        if frame:
            made = fr.make(frame["func"], frame["file"])
            if made:
                found.append(made)
        elif not (text[:1] in " \t," and text.strip()):
            break
    return fr.raise_site(found, True)


# words that make a line the failure's when no rule knows the tool (weak: last resort)
ERROR_WORDS = ("error", "fatal", "failed", "failure", "exception", "unable", "cannot",
               "can't", "could not", "not supported", "unsupported", "denied", "refused",
               "not found", "no matching", "invalid", "missing", "timed out", "too large",
               "empty reply", "not allowed", "disallowed", "incompatible", "requires",
               "not support", "does not exist", "no such")

# what wraps a salient error line in one paste and not in another: a logger's or a
# runtime's own prefix ("Uncaught ", "connection error: "), a quote mark
_WRAPPER = re.compile(r"^(?:[`'\"]+|(?:PHP|Uncaught|ERROR|Error|error|FATAL|Fatal|fatal)\b[ :!-]*|"
                      r"[\w ]{0,40}(?:error|failed with)[!:] +)+")
# an error's own name or code, where the message proper begins ("MongoParseError: …")
_ANCHOR = re.compile(r"(?:^|[\s(\[])((?:[A-Z][\w.]*(?:Error|Exception)|[A-Z][A-Z0-9_]{3,}): )")
_FIRST_SENTENCE = re.compile(r"(?<=[a-z0-9)'\"])[.;] (?=[A-Z])")


def _salient(ctx: Ctx, i: int, m: re.Match) -> Hit:
    """A weak rule's line, reduced to what two pastes of one failure share: from the
    error's own name on (past the wrappers a logger or runtime adds), its first sentence."""
    msg = m.group("msg").strip()
    anchors = list(_ANCHOR.finditer(msg))
    if anchors:
        msg = msg[anchors[-1].start(1):]
    msg = _WRAPPER.sub("", msg) or msg
    msg = _FIRST_SENTENCE.split(msg, 1)[0]
    kind = m.group("kind") if "kind" in m.re.groupindex else "error"
    return Hit("generic", kind, msg, (), i, i, weak=True)


def _unwrapped(ctx: Ctx, i: int, m: re.Match) -> Hit:
    """`error: <wrapper>: message`: the message past the wrappers a CI step or a CLI adds
    (`buildx failed with: ERROR: …` in one paste, the bare message in another)."""
    msg = m.group("msg").strip()
    return Hit("generic", "error", _WRAPPER.sub("", msg) or msg, (), i, i, weak=True)


# rules whose line names a failure no tool rule knows: seen counts, never a tier-1 lesson
LAST_RESORT = ("program-says", "error-phrase")

FALLBACK = [
    line("logfmt-error", "log", "level=", r"\blevel=(?P<kind>error|fatal|panic|crit)\b.{0,300}?"
         r"\bmsg=\"(?P<msg>(?:[^\"\\]|\\.){1,500})\"", weak=True),
    block("bare-exception", "python", "error: |exception: |error:|exception:",
          r"^\s*(?:[A-Za-z_]\w{0,60}\.){0,6}[A-Z]\w{0,80}?(?:Error|Exception): \S", _bare_exception),
    block("generic-error", "generic", "error|fatal",
          r"^\s*(?:error|ERROR|Error|fatal|FATAL|Fatal)(?:\[[\w-]{1,40}\])?\s?: ?(?P<msg>\S.{2,})$",
          _unwrapped, weak=True),
    block("program-says", "generic", ": ",
          r"^\s*(?P<kind>[a-z][\w.+-]{1,30}): (?:\(\d{1,4}\) )?(?P<msg>(?:[A-Z]\w*|\w+ not|"
          r"no|can't|cannot|could not|unable|failed|invalid)\b.{2,300})$", _salient, weak=True),
    block("error-phrase", "generic", "|".join(ERROR_WORDS),
          r"^\s*(?P<msg>\S.{0,200}?\b(?:" + "|".join(ERROR_WORDS) + r")\b.{0,300})$",
          _salient, flags=re.I, weak=True),
]
