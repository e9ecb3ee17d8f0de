"""Message normalisation: an ordered table of named patterns (Sentry-style parameterisation).

Each entry replaces what varies between two occurrences of one failure (paths, times, ids,
addresses, ephemeral ports) with a `<token>`, and keeps what identifies the failure (error
codes, exit codes, errno text, service ports, quoted names). Order matters: URLs go before
paths, paths before line numbers, hashes before bare numbers. Every pattern is linear: no
nested quantifiers, and callers clip lines before they get here (see `LINE_CAP`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

LINE_CAP = 2000          # characters of one line that any regex ever sees
MESSAGE_CAP = 400        # characters of a normalised message that are hashed


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern
    replace: str | Callable[[re.Match], str]
    reason: str


_LIB_ROOTS = (
    # (marker in the path, token): everything up to and including the marker goes
    (re.compile(r"(?:^|/)(?:site|dist)-packages/"), "<site-packages>/"),
    (re.compile(r"(?:^|/)node_modules/(?!.*/node_modules/)"), "<node_modules>/"),
    (re.compile(r"(?:^|/)\.?cargo/registry/src/[^/]+/", re.I), "<cargo>/"),
    (re.compile(r"(?:^|/)pkg/mod/"), "<gomod>/"),
    (re.compile(r"(?:^|/)(?:libexec/src|go/src|lib/go/src|/usr/local/go/src)/(?=[a-z]+/)"),
     "<goroot>/"),
)
_WORKSPACE = re.compile(
    r"^(?:/__w/[^/]+/[^/]+|/github/workspace|/home/runner/work/[^/]+/[^/]+|"
    r"[A-Za-z]:/a/[^/]+/[^/]+|/builds/[^/]+/[^/]+|/workspace|/var/lib/jenkins/workspace/[^/]+)/?$")
_CRATE_VERSION = re.compile(r"^<cargo>/([\w-]+?)-\d+\.\d+\.\d+[^/]*/")
_GOMOD_VERSION = re.compile(r"@v[^/]+")


def reduce_path(path: str) -> str:
    """Workspace root, library prefixes kept as tokens with their in-library path, else basename."""
    p = path.replace("\\", "/")
    if _WORKSPACE.match(p):
        return "<workspace>"
    for marker, token in _LIB_ROOTS:
        hit = None
        for hit in marker.finditer(p):
            pass
        if hit is not None:
            rest = token + p[hit.end():]
            rest = _CRATE_VERSION.sub(r"<cargo>/\1/", rest)
            return _GOMOD_VERSION.sub("", rest)
    p = p.rstrip("/")
    return p.rsplit("/", 1)[-1] or p


def _path(m: re.Match) -> str:
    reduced = reduce_path(m.group("p"))
    return "<path>" if re.search(r"[:\\]|^[/.~]|^$", reduced) else reduced


def _hexish(m: re.Match) -> str:
    s = m.group(0)
    return "<hash>" if re.search(r"\d", s) and re.search(r"[a-zA-Z]", s) else s


def _url(m: re.Match) -> str:
    scheme, _, rest = m.group(0).partition("://")
    port = re.match(r"[^/?#]*?:(\d{1,5})(?:[/?#]|$)", rest)
    keep = f":{port.group(1)}" if port and int(port.group(1)) < 10000 else ""
    return f"<{scheme.lower()} url{keep}>"


def _port(m: re.Match) -> str:
    return m.group(1) + (":<port>" if int(m.group(2)) >= 10000 else ":" + m.group(2))


def _ipv4(m: re.Match) -> str:
    return "localhost" if m.group(0).startswith("127.") else "<ip>"


_LOGFMT_PAIR = r'[\w.-]{1,40}=(?:"[^"]*"|[^"\s]\S*|)'
_SENTENCE_CASE = re.compile(r"^\s*([A-Z])(?=[a-z]+\b)")


def sentence_case(text: str) -> str:
    """`The remote end…` → `the remote end…`; `ModuleNotFoundError`, `EACCES` stay."""
    return _SENTENCE_CASE.sub(lambda m: m.group(1).lower(), text)


_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*"
_PATH_START = r"(?<![\w>.~$@%+/\\-])"
_PATH_CHARS = r"[^\s'\"`;,:()<>\[\]{}|*]"

PATTERNS: tuple[Pattern, ...] = (
    Pattern("ansi", re.compile(r"\x1b\[[0-9;?]{0,32}[ -/]{0,4}[@-~]|\x1b[()][0-9A-Za-z]"), "",
            "terminal colour and cursor escapes are presentation"),
    Pattern("control", re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]"), "",
            "binary noise, CR, and replacement characters from invalid UTF-8"),
    Pattern("smart_quotes", re.compile(r"[\u2018\u2019\u201a\u201b\u2032]"), "'",
            "a locale's or a word processor's curly quotes around a name (gcc quotes ‘x’ in "
            "a UTF-8 locale, 'x' in C)"),
    Pattern("smart_double_quotes", re.compile(r"[\u201c\u201d\u201e\u201f\u2033]"), '"',
            "as smart_quotes, for double quotes"),
    Pattern("md_bold", re.compile(r"\*\*"), "", "Markdown emphasis from pasted issue text"),
    Pattern("md_fence", re.compile(r"`{3,}[\w+-]{0,20}"), "",
            "a Markdown code fence (```, ```text) pasted on the error line's own line"),
    Pattern("banner", re.compile(r"([_=~*#-])\1{3,}"), r"\1\1\1",
            "pytest, Maven and make draw banners as wide as the terminal: the width is the "
            "window's, not the failure's"),
    Pattern("md_link", re.compile(r"\[([^\]\[]{0,80})\]\(https?://[^()\s]{0,500}\)"), r"\1",
            "web-UI copy of an Actions log wraps numbers in step links"),
    Pattern("chromium_log", re.compile(
        r"\[(?:\d{1,6}:\d{1,6}:)?\d{4}/\d{6}\.\d{3,9}:([A-Z]+\d?):([\w.-]{1,100})\(\d+\)\]"),
            r"[\1:\2]", "Chromium, Electron and CEF log lines open with [pid:tid:MMDD/HHMMSS.us:"
            "LEVEL:file.cc(line)]: when and which process are per run"),
    Pattern("logfmt_error", re.compile(
        rf'^{_LOGFMT_PAIR}(?: {_LOGFMT_PAIR})*? (?:err|error)="([^"]*)"(?: {_LOGFMT_PAIR})*$'
        rf'|^(?:err|error)="([^"]*)"(?: {_LOGFMT_PAIR})*$'),
            lambda m: m.group(1) if m.group(1) is not None else m.group(2),
            "a logfmt line (Prometheus, Loki, Go kit: `level=error ts=… caller=… err=\"…\"`) "
            "says what failed in its err value; the other pairs say when and where"),
    Pattern("iso_timestamp", re.compile(
        r"(?<![\w>])\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d{1,9})?(?:Z|\s?[+-]\d{2}:?\d{2}|"
        r"\s?(?:UTC|GMT))?\b"), "<ts>", "when it happened is not what happened"),
    Pattern("slash_timestamp", re.compile(r"(?<![\w>])\d{4}/\d{2}/\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?"),
            "<ts>", "Go log and nginx timestamps"),
    Pattern("text_date", re.compile(
        rf"(?<![\w>])(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? )?(?:\d{{1,2}} {_MONTH} \d{{4}}|"
        rf"{_MONTH} \d{{1,2}},? \d{{4}}|{_MONTH} +\d{{1,2}} \d{{2}}:\d{{2}}:\d{{2}})"
        r"(?: \d{2}:\d{2}(?::\d{2})?(?: [+-]\d{4})?)?"), "<date>",
            "syslog, RFC 2822 and build-banner dates"),
    Pattern("compact_timestamp", re.compile(r"(?<!\d)(?:19|20)\d{6}[-_T]?\d{6}(?!\d)"), "<ts>",
            "timestamps inside file and job names (`Worker_20240521-091244-utc.log`)"),
    Pattern("clock", re.compile(r"(?<![\w>])\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\b"), "<time>",
            "wall-clock times without a date"),
    Pattern("uuid", re.compile(
        r"(?<![\w>])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
            "<uuid>", "request, container and task ids"),
    Pattern("url", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://(?:[^\s'\"<>`)\]]|<[\w.-]{1,40}>){0,500}(?<![:.,;])"),
            _url, "host and path are the user's (registry, repo, endpoint); the scheme and a "
            "service port (< 10000) are kept: unix:// vs tcp://…:2375 are different failures"),
    Pattern("path", re.compile(
        rf"{_PATH_START}(?P<p>(?:[A-Za-z]:[\\/]|\\\\|~/|\.{{1,2}}/|/){_PATH_CHARS}{{1,300}}"
        rf"(?<![.:])|[\w.@-]{{1,100}}[\\/](?:[\w.@+-]{{1,100}}[\\/]){{0,30}}"
        rf"[\w@+-]{{1,100}}\.[a-zA-Z]\w{{0,5}})(?::\d+){{0,2}}(?=$|[\s'\"`;,()<>\[\]{{}}|:]|\.(?:\s|$))"),
            _path, "workspace, home and temp prefixes differ per machine: keep the in-library "
            "path under site-packages / node_modules / cargo / go mod, else the basename; "
            "line:col suffixes go with the path"),
    Pattern("file_line", re.compile(
        r"\b([\w-]{1,100}\.(?:py|js|mjs|cjs|ts|tsx|jsx|go|rs|java|kt|scala|c|cc|cpp|h|hpp|rb|php|cs|"
        r"swift|tf|ya?ml)):\d+(?::\d+)?"), r"\1", "bare file:line:col"),
    Pattern("source_position", re.compile(r"(\.\w{1,6})\(\d+, ?\d+\)"), r"\1",
            "IDE-style file(line, col)"),
    Pattern("line_word", re.compile(r"(?<![A-Za-z])(line|Line|lines|column|col)\s+\d+(?:[:-]\d+)?"), r"\1 <n>",
            "line numbers move with every edit"),
    Pattern("identity_hash", re.compile(
        r"(?<![\w>])@0x[0-9a-fA-F]{1,8}\b|(?<=[\w$\]])@(?=[0-9a-f]{0,7}[a-f])(?=[a-f]{0,7}\d)"
        r"[0-9a-f]{6,8}\b"), "@<hash>",
            "the JVM names an object or an unnamed module by its identity hash "
            "(`Foo@1b6d3586`, `unnamed module @0x4d5650ae`): per run"),
    Pattern("hex_address", re.compile(r"\b0x[0-9a-fA-F]{9,}\b|(?<![\w>])(?:addr|pc|sp|fp)=0x[0-9a-fA-F]+"),
            "<addr>", "pointers and registers; short 0x codes (HRESULT 0x80131904) are kept"),
    Pattern("long_id", re.compile(r"(?<![\w>])[0-9a-zA-Z]{16,}\b"), _hexish,
            "digests, build-kit refs, image ids and mangled names mix digits and letters"),
    Pattern("short_hash", re.compile(r"(?<![\w>])[0-9a-f]{7,15}\b"), _hexish, "git short shas, pod hashes"),
    Pattern("pod_suffix", re.compile(r"\b([a-z][a-z0-9-]{0,60}?)-(?:<hash>|[a-z0-9]{8,10})-[a-z0-9]{5}\b"),
            r"\1-<pod>", "Deployment pod names end in a ReplicaSet hash and a random suffix"),
    Pattern("ipv4", re.compile(r"(?<![\w>])(?:\d{1,3}\.){3}\d{1,3}\b"), _ipv4,
            "addresses are per network; loopback is kept, it says 'talking to myself'"),
    Pattern("ipv6", re.compile(r"\[(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{1,4}\]"),
            lambda m: m.group(0) if m.group(0) == "[::1]" else "<ip>", "as ipv4"),
    Pattern("port", re.compile(r"((?:<ip>|localhost|\]|\b[\w.-]{1,100}\b)):(\d{2,5})\b"), _port,
            "ephemeral client ports (>= 10000) vary; service ports (5432, 8080) name the service"),
    Pattern("pid", re.compile(r"(?<![A-Za-z])(pid|PID|process|Process)([ =:#]{1,3})\d+"), r"\1\2<pid>",
            "process ids"),
    Pattern("bracket_pid", re.compile(r"(\w|\))\[\d{2,}\]"), r"\1[<pid>]", "syslog name[pid]"),
    Pattern("goroutine", re.compile(r"(?<![A-Za-z])goroutine \d+"), "goroutine <n>", "scheduler numbering"),
    Pattern("duration", re.compile(
        r"(?<![\w>])\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds?|m|min|minutes?|h|hours?)\b(?! ago)"
        r"(?:\s\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?))?"), "<dur>", "how long it took"),
    Pattern("size", re.compile(
        r"(?<![\w>.])\d+(?:\.\d+)?\s?(?:bytes|B|kB|KB|MB|GB|KiB|MiB|GiB|Ki|Mi|Gi)\b"), "<size>",
            "how big the payload, file or limit was varies per occurrence"),
    Pattern("temp_name", re.compile(r"(?<![A-Za-z])(?:tmp|temp)[-_]?[a-zA-Z0-9_]{5,}\b|(?<![A-Za-z])pytest-\d+\b"),
            "<tmp>", "mktemp and pytest basetemp names"),
    Pattern("semver", re.compile(
        r"(?<![\w.>])v?\d+\.\d+\.\d+(?:\.\d+)?(?:[a-z]\d*)?(?:[-+~][0-9A-Za-z][0-9A-Za-z.-]{0,40}(?<!\.))?"
        r"(?!\w|\.\w)|(?<=@)\^?~?\d+\.\d+\.\d+[\w.-]{0,40}"), "<ver>",
            "patch-level versions differ between every two machines (one that ends a "
            "sentence too: its full stop is not part of it); x.y alone (Python 3.12, "
            "rustc 1.79) is kept because it usually names the language line that matters, "
            "and tool rules keep majors where a conflict turns on them"),
    Pattern("progress", re.compile(r"\[\s*\d{1,3}%\]|\(\d+/\d+\)"), "", "build progress counters"),
    Pattern("space", re.compile(r"\s+"), " ", "wrapping and padding"),
    Pattern("severity_word", re.compile(r"^\s*(?:error|fatal|ERROR|FATAL|Error)\s+(?=[A-Z][a-z])"), "",
            "yarn, pnpm and CLI loggers put a bare level word before the sentence (`error An "
            "unexpected error occurred`); another paste or a rule that took the level off "
            "starts at the sentence"),
    Pattern("sentence_case", _SENTENCE_CASE, lambda m: m.group(1).lower(),
            "one tool prints `fatal: the remote end…`, a wrapper or logger `The remote end…`; "
            "a CamelCase name (`ModuleNotFoundError`) or an acronym keeps its case"),
    Pattern("trailing_punctuation", re.compile(r"[\s,;:.]+$"), "",
            "a wrapped or listed message ends in a comma, colon or full stop in one paste only"),
)

_PY_SUGGESTION = re.compile(r"\.? Did you mean:? '?[\w.]*'?\?$")


def normalise(text: str) -> str:
    """Apply PATTERNS in order; idempotent (`normalise(normalise(x)) == normalise(x)`)."""
    out = text[:LINE_CAP * 2]
    for _ in range(32):  # to a fixed point: a reduced token can touch what follows it
        before = out
        for pattern in PATTERNS:
            out = pattern.regex.sub(pattern.replace, out)
        out = _PY_SUGGESTION.sub("", out.strip())[:MESSAGE_CAP].strip()
        if out == before:
            break
    return out
