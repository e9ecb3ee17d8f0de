"""npm, yarn, pnpm, Node runtime errors, webpack, vite/esbuild, tsc, jest."""

from __future__ import annotations

import re

from .. import frames as fr
from ..rules import Ctx, Hit, block, line

_NPM = re.compile(r"^\s*npm (?:ERR!|error) ?(?P<body>.*)$")
_NPM_META = re.compile(
    r"^(?:code |errno |syscall |path |dest |argv |node v|npm v|Windows_NT|Linux \d|Darwin \d|cwd |"
    r"A complete log|Log files|Please include|If you need help|\s*$|command |signal |"
    r"This is probably|Tell the author|Failed at the|Exit status|enoent This is related|"
    r"enoent  ?$|\S+@\S+ \S+: `)")
TLS_CODES = {"SELF_SIGNED_CERT_IN_CHAIN", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "CERT_HAS_EXPIRED",
             "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "DEPTH_ZERO_SELF_SIGNED_CERT",
             "ERR_TLS_CERT_ALTNAME_INVALID", "CERT_NOT_YET_VALID"}
_CONSEQUENCE_CODES = {"ELIFECYCLE", "1", "127", "E1"}


def _npm_body(lines: list[str], j: int) -> str | None:
    m = _NPM.match(lines[j])
    return m["body"].strip() if m else None


def _npm_code(ctx: Ctx, i: int, m: re.Match):
    """`npm ERR! code X` then the first message line that is not metadata."""
    code = m["code"]
    if code in TLS_CODES or code in _CONSEQUENCE_CODES:
        return None  # the TLS rule reads the phrase; lifecycle codes are consequences
    for j in range(i + 1, min(len(ctx.lines), i + 12)):
        body = _npm_body(ctx.lines, j)
        if body is None:
            continue
        if _NPM_META.match(body):
            continue
        if code == "E404":
            for k in range(j, min(len(ctx.lines), j + 4)):
                spec = re.search(r"'(\S+?)(?:@[^'@]*)?' is not in (?:this|the npm) registry",
                                 ctx.lines[k])
                if spec:
                    return Hit("npm", code, f"'{spec.group(1)}' is not in this registry", (), i, k)
        return Hit("npm", code, body, (), i, j)
    return Hit("npm", code, code, (), i, i)


_FOUND = re.compile(r"Found: (?P<pkg>(?:@[\w.-]+/)?[\w.-]+)@(?P<ver>\S+)")
_PEER = re.compile(r"peer (?:dep(?:endency)? )?(?P<pkg>(?:@[\w.-]+/)?[\w.-]+)@\"?(?P<range>[^\"]+)\"? from")
_MAJOR = re.compile(r"(\d+)(?:\.[\dx*]+){0,2}")


def _majors(text: str) -> list[int]:
    return [int(v) for v in _MAJOR.findall(text)]


def _eresolve(ctx: Ctx, i: int, m: re.Match):
    """A peer conflict is identified by the package and the majors: found vs newest accepted
    (npm 7's "unable to resolve dependency tree" and npm 8+'s "could not resolve" fold)."""
    head, found, peer, end = "", None, None, i
    for j in range(i + 1, min(len(ctx.lines), i + 40)):
        body = _npm_body(ctx.lines, j)
        if body is None:
            if ctx.lines[j].strip():
                break
            continue
        end = j
        if not head and body.startswith("ERESOLVE"):
            head = body
        found = found or _FOUND.search(body)
        peer = peer or _PEER.search(body)
    if not (found and peer):
        return Hit("npm", "ERESOLVE", head or "ERESOLVE", (), i, end)
    have = _majors(found["ver"])[:1]
    accepted = _majors(peer["range"])
    msg = (f"ERESOLVE: found {found['pkg']}@{have[0] if have else '?'}; "
           f"peer {peer['pkg']}@<={max(accepted) if accepted else '?'}")
    return Hit("npm", "ERESOLVE", msg, (), i, end)


JS_ERROR = re.compile(
    r"^\s*(?:Uncaught |\[\w+\] )?(?P<kind>(?:[A-Z]\w{0,40})?(?:Error|Exception))"
    r"(?: \[(?P<code>[A-Z][A-Z0-9_]+)\])?: (?P<msg>.+)$")
_HEADER = re.compile(r"^\s*(?P<file>\S{1,500}\.(?:m?js|cjs|jsx?|tsx?|vue|svelte)):\d+$")
_REQUIRE_STACK = re.compile(r"^\s*(?:Require stack:|- \S)")
_MODULE_KINDS = ("ERR_MODULE_NOT_FOUND", "MODULE_NOT_FOUND")


def _js_error(ctx: Ctx, i: int, m: re.Match):
    lines, found, end = ctx.lines, [], i
    gap = framed = 0
    for j in range(i + 1, min(len(lines), i + 200)):
        frame = fr.JS_FRAME.match(lines[j])
        if not frame:
            if _REQUIRE_STACK.match(lines[j]):
                continue
            gap += 1
            if framed or gap > 3:
                break
            continue
        end, framed = j, 1
        made = fr.make(frame["func"] or "<anonymous>", frame["file"] or frame["bare"] or "")
        if made:
            found.append(made)
    header = None
    for j in range(i - 1, max(-1, i - 8), -1):
        h = _HEADER.match(lines[j])
        if h:
            header = fr.make("", h["file"])
            break
    if not (framed or header or m["code"] or lines[i].lstrip().startswith("Uncaught ")):
        return None
    kind = m["kind"] + (f" [{m['code']}]" if m["code"] else "")
    msg = m["msg"]
    if m["code"] in _MODULE_KINDS or msg.startswith("Cannot find module"):
        site: tuple[str, ...] = ()
    elif header and (m["kind"] == "SyntaxError" or not found):
        site = (header.file,)
    else:
        site = fr.raise_site(found, True)
    return Hit("node", kind, msg, site, i, end)


def _next_line(tool: str, kind: str):
    """The failure is the first non-empty line after a heading."""
    def build(ctx: Ctx, i: int, m: re.Match):
        for j in range(i + 1, min(len(ctx.lines), i + 6)):
            if ctx.lines[j].strip():
                return Hit(tool, kind, ctx.lines[j].strip(), (), i, j)
        return None
    return build


def _jest_test(ctx: Ctx, i: int, m: re.Match):
    """`● suite › test` names the test; the first line of its report says what failed."""
    for j in range(i + 1, min(len(ctx.lines), i + 5)):
        if ctx.lines[j].strip():
            detail = re.sub(r"\s+// .*$", "", ctx.lines[j].strip())  # the matcher's comment
            return Hit("jest", "test-failed", f"{m['title']}: {detail}", (), i, j)
    return None


RULES = [
    block("npm-eresolve", "npm", "eresolve", r"^\s*npm (?:ERR!|error) code ERESOLVE", _eresolve),
    block("npm-code", "npm", "npm err!|npm error",
          r"^\s*npm (?:ERR!|error) code (?P<code>\S+)$", _npm_code),
    line("npm-gyp", "npm", "gyp err!", r"^gyp ERR! (?:stack |find Python )?(?P<msg>(?:Error: )?"
         r"(?!stack |cwd |node -v|node-gyp -v|System |command |not ok)\S.*)$", "gyp"),
    line("yarn-berry", "yarn", "yn0", r"YN(?P<kind>\d{4}): (?:│ )?(?P<msg>(?!.*YN0000).+)$"),
    line("yarn-classic", "yarn", "error an unexpected error|error couldn't find|error package",
         r"^error (?P<msg>(?:An unexpected error occurred: |Couldn't find |Package ).+)$", "error"),
    line("pnpm-error", "pnpm", "err_pnpm_",
         r"ERR_PNPM_(?P<kind>[A-Z_]+)\s+(?P<msg>.+)$"),
    line("webpack-module-not-found", "webpack", "module not found",
         r"Module not found: (?:Error: )?(?P<msg>Can't resolve '[^']+'(?: in '?(?P<x_dir>[^']+)'?)?)",
         "module-not-found"),
    line("webpack-build-failed", "webpack", "module build failed",
         r"(?P<msg>Module build failed \(from (?P<x_loader>\S+?)\)):?$", "module-build-failed",
         weak=True),
    line("vite-resolve-import", "vite", "failed to resolve import",
         r"(?P<msg>(?:Rollup )?failed to resolve import \"[^\"]+\" from \"(?P<x_file>[^\"]+)\")",
         "unresolved-import", flags=re.I),
    line("vite-internal", "vite", "[vite]", r"\[vite\]:? (?:Internal server error: )?(?P<msg>.+)$",
         "vite"),
    line("esbuild-error", "vite", "[error]", r"✘ \[ERROR\] (?P<msg>.+)$", "esbuild"),
    line("tsc-error", "tsc", "error ts",
         r"\berror (?P<kind>TS\d{3,5}): (?P<msg>.+)$"),
    line("jest-environment", "jest", "test environment",
         r"(?P<msg>Test environment \S+ cannot be found)", "environment-missing"),
    line("node-heap-oom", "node", "javascript heap out of memory",
         r"FATAL ERROR: .{0,200}?(?P<msg>JavaScript heap out of memory)", "heap-out-of-memory"),
    line("node-fatal", "node", "fatal error:", r"^FATAL ERROR: (?P<msg>.+)$", "FATAL ERROR"),
    line("node-unhandled-rejection", "node", "unhandledpromiserejection",
         r"^\[UnhandledPromiseRejection: (?P<msg>.+?)\]? ?\{?$", "ERR_UNHANDLED_REJECTION"),
    line("eslint-problem", "eslint", "error  ",
         r"^\s+\d+:\d+\s+error\s+(?P<msg>\S.{0,300}?)\s{2,}(?P<kind>[@\w/-]{1,100})$"),
    block("jest-test-failed", "jest", "● ", r"^\s*● (?P<title>(?!Test suite failed)\S.{0,300} › .+?)\s*$",
          _jest_test),
    line("jest-resolve", "jest", "cannot find module",
         r"(?P<msg>Cannot find module '[^']{1,300}') from '(?P<x_file>[^']{1,300})'", "module-not-found"),
    line("esbuild-platform", "esbuild", "installed esbuild for another platform|needed by esbuild|"
         "does not match binary version",
         r"(?P<msg>You installed esbuild for another platform than the one you're currently using|"
         r"The package \"[\w@/.-]{1,100}\" could not be found, and is needed by esbuild|"
         r"Host version \"[^\"]+\" does not match binary version \"[^\"]+\")", "platform"),
    line("yarn-usage-error", "yarn", "usage error:", r"^Usage Error: (?P<msg>\S.+?)\s*$", "usage"),
    line("cypress-dependency", "cypress", "missing the dependency",
         r"(?P<msg>Your system is missing the dependency: \S+)", "missing-dependency"),
    line("yarn-engine", "yarn", "is incompatible with this module",
         r"^error \S+?: (?P<msg>The engine \"[\w-]+\" is incompatible with this module)", "engine"),
    block("jest-suite-failed", "jest", "test suite failed to run",
          r"●\s+Test suite failed to run", _next_line("jest", "suite-failed")),
    line("vite-blocked-host", "vite", "blocked request",
         r"(?P<msg>Blocked request\. This host \(\"(?P<x_host>[^\"]+)\"\) is not allowed)",
         "blocked-host"),
    block("node-error", "node", "error|exception", JS_ERROR.pattern, _js_error),
]
