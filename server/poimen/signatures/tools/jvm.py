"""Java stack traces and `Caused by` chains, Maven, Gradle, Kotlin, Spring Boot, Jenkins,
log4j/logback lines (Kafka clients, Spring), and .NET exceptions."""

from __future__ import annotations

import re

from .. import frames as fr
from ..rules import Ctx, Hit, block, line

_FQCN = r"(?:[a-z_$][\w$]{0,60}\.){1,12}[A-Z][\w$]{0,80}"
JAVA_EXC = re.compile(
    rf"^\s*(?:Exception in thread \"[^\"]{{0,200}}\" |Caused(?: by)?: )?(?P<kind>{_FQCN})"
    r"(?:: (?P<msg>.*))?$")
_MORE = re.compile(r"^\s*\.\.\. \d+ (?:more|common frames omitted)")
_CHAIN = re.compile(r"\s*\(through reference chain: .*$")
_IMPORT_KINDS = ("ClassNotFoundException", "NoClassDefFoundError")
_JVM_ROOTS = ("java.", "javax.", "jakarta.", "org.", "com.", "io.", "net.", "kotlin.", "scala.",
              "android.", "groovy.", "sun.", "jdk.")


def _segment_hit(kind: str, msg: str, frames: list, start: int, end: int) -> Hit:
    msg = _CHAIN.sub("", msg or "")
    site = () if kind.endswith(_IMPORT_KINDS) else fr.raise_site(frames, True)
    return Hit("java", kind, msg, site, start, end)


def _java(ctx: Ctx, i: int, m: re.Match):
    """Root cause (the last `Caused by`) first, then the outermost exception."""
    kind = m["kind"]
    lines = ctx.lines
    framed = i + 1 < len(lines) and fr.JAVA_FRAME.match(lines[i + 1])
    if not framed and not (kind.startswith(_JVM_ROOTS) and
                           re.search(r"(?:Exception|Error|Throwable)$", kind)):
        return None
    segments = [[kind, m["msg"] or "", [], i]]
    end = i
    for j in range(i + 1, min(len(lines), i + 2000)):
        text = lines[j]
        frame = fr.JAVA_FRAME.match(text)
        if frame:
            made = fr.make(frame["func"], frame["file"].split(":")[0])
            if made:
                segments[-1][2].append(made)
            end = j
            continue
        if _MORE.match(text) or text.strip().startswith("Suppressed:"):
            end = j
            continue
        cause = JAVA_EXC.match(text)
        if cause and text.lstrip().startswith("Caused"):
            segments.append([cause["kind"], cause["msg"] or "", [], j])
            end = j
            continue
        break
    hits = [_segment_hit(k, msg, f, s, s) for k, msg, f, s in segments[::-1]]
    return [Hit(h.tool, h.kind, h.message, h.frames, i, end) for h in hits[:2]]


def _spring(ctx: Ctx, i: int, m: re.Match):
    """`APPLICATION FAILED TO START`: the Description paragraph is the failure."""
    lines = ctx.lines
    for j in range(i + 1, min(len(lines), i + 12)):
        if lines[j].strip() == "Description:":
            body, k = [], j
            for k in range(j + 1, min(len(lines), j + 12)):
                text = lines[k].strip()
                if text in ("Action:",) or (body and not text):
                    break
                if text:
                    body.append(text)
            return Hit("spring-boot", "application-failed-to-start", " ".join(body), (), i, k)
    return None


def _gradle(ctx: Ctx, i: int, m: re.Match):
    """`* What went wrong:` then the summary and its `> ` detail (task path dropped)."""
    lines, body = ctx.lines, []
    for j in range(i + 1, min(len(lines), i + 8)):
        text = lines[j].strip()
        if not text or text.startswith("* Try:"):
            break
        body.append(text.lstrip("> "))
    msg = re.sub(r"'(?::[\w.-]+)*:([\w.-]+)'", r"'\1'", " ".join(body[:2]))
    return Hit("gradle", "build-failed", msg, (), i, i + len(body)) if body else None


def _dotnet(ctx: Ctx, i: int, m: re.Match):
    inner, end = None, i
    for j in range(i + 1, min(len(ctx.lines), i + 6)):
        nested = re.match(r"^\s*---> (?P<kind>[\w.]+)(?: \((?P<code>0x[0-9A-Fa-f]{8})\))?: (?P<msg>.+)",
                          ctx.lines[j])
        if nested:
            inner, end = nested, j
            break
    kind = m["kind"] + (f" ({m['code']})" if m["code"] else "")
    msg = m["msg"] + (f" ---> {inner['kind']}: {inner['msg']}" if inner else "")
    return Hit("dotnet", kind, msg, (), i, end)


_LOG_TOOLS = (("org.apache.kafka", "kafka"), ("org.springframework", "spring-boot"),
              ("o.s.", "spring-boot"), ("org.hibernate", "hibernate"), ("com.zaxxer", "hikari"))


def _java_log(ctx: Ctx, i: int, m: re.Match):
    """A logback/Spring line (`LEVEL pid --- [thread] logger : msg`) or log4j (`msg (logger)`)."""
    logger = m["logger"] or m["logger2"]
    msg = re.sub(r"^\[[\w ]{1,40}clientId=[^\]]{0,200}\] ", "", (m["msg"] if m["logger"] else m["msg2"]).strip())
    if not msg:
        return None
    tool = next((t for prefix, t in _LOG_TOOLS if logger.startswith(prefix)), "java")
    return Hit(tool, logger.rsplit(".", 1)[-1], msg, (), i, i, weak=True)


def _kotlin_diagnostic(ctx: Ctx, i: int, m: re.Match):
    """`e: <jar or module>: message` for inputs without a line; versions are the instance."""
    return Hit("kotlin", "compile", re.sub(r"\b\d+(?:\.\d+)+\b", "<ver>", m["msg"]), (), i, i)


EARLY = [
    block("dotnet-exception", "dotnet", "exception",
          r"^\s*(?:Unhandled exception\. )?(?P<kind>(?:System|Microsoft)(?:\.\w+){1,8}Exception)"
          r"(?: \((?P<code>0x[0-9A-Fa-f]{8})\))?: (?P<msg>.+)$", _dotnet),
]
RULES = [
    line("jenkins-script-approval", "jenkins", "scripts not permitted",
         r"Scripts not permitted to use (?P<msg>(?:method|staticMethod|field|staticField|new) "
         r".{1,600}?)(?:\. Administrators|\.?$)",
         "RejectedAccessException"),
    block("spring-failed-to-start", "spring-boot", "application failed to start",
          r"^\s*APPLICATION FAILED TO START\s*$", _spring),
    block("gradle-what-went-wrong", "gradle", "what went wrong", r"^\* What went wrong:", _gradle),
    line("maven-goal", "maven", "failed to execute goal",
         r"\[ERROR\] (?P<msg>Failed to execute goal (?P<x_plugin>[\w.-]+:[\w.-]+):[\w.-]+:[\w-]+ "
         r"\([\w-]+\) on project (?P<x_project>[\w.-]+): .+?)(?: -> \[Help \d+\])?$", "failed-goal"),
    line("maven-dependencies", "maven", "could not resolve dependencies",
         r"(?P<msg>Could not resolve dependencies for project (?P<x_project>\S+): .+)$",
         "unresolved-dependencies"),
    line("maven-compile", "maven", "[error]",
         r"^\[ERROR\] (?:\S+\.java):\[\d+,\d+\] (?P<msg>.+)$", "compile"),
    line("maven-error", "maven", "[error]",
         r"^\[ERROR\] (?P<msg>(?!-> |Re-run |For more |To see |\s*$|COMPILATION ERROR|BUILD FAILURE|"
         r"Failed to execute goal|Help \d|After correcting)\S.+)$", "error"),
    line("dotnet-sdk-missing", "dotnet", "compatible .net sdk",
         r"(?P<msg>A compatible \.NET SDK was not found)", "sdk-not-found"),
    line("dotnet-build-error", "dotnet", "error cs|error nu|error msb|error netsdk",
         r"error (?P<kind>(?:CS|NU|MSB|NETSDK)\d{4}): (?P<msg>.+?)(?: \[\S+\])?$"),
    # the binary and expected versions that follow are the instance
    line("kotlin-incompatible-module", "kotlin", "compiled with an incompatible version of kotlin",
         r"(?P<msg>Module was compiled with an incompatible version of Kotlin)", "compile"),
    line("kotlin-compile", "kotlin", "e: ",
         r"^e: (?:file://)?\S+\.kts?:(?: \(\d+, \d+\):|\d+:\d+) (?P<msg>.+)$", "compile"),
    block("kotlin-diagnostic", "kotlin", "e: ",
          r"^e: (?:file://)?\S{1,300}?: (?P<msg>\S.+?)\s*$", _kotlin_diagnostic),
    block("java-exception", "java", "exception|error|throwable", JAVA_EXC.pattern, _java),
    block("java-log-line", "java", "warn|error|fatal",
          r"\b(?:WARN|ERROR|FATAL)\b\s+(?:\d+ --- \[[^\]]{0,80}\]\s+(?P<logger>[\w.$]{3,200})\s+: "
          r"(?P<msg>.*)|(?P<msg2>.+?) \((?P<logger2>[\w.$]{3,200})\))$", _java_log, weak=True),
]
