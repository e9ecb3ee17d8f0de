"""TLS certificate failures, nginx, Kong, HTTP status lines, PostgreSQL, MySQL, git."""

from __future__ import annotations

import re

from ..rules import Ctx, Hit, block, line

# (phrase, kind): the runtime's own words for a failed verification, each its own failure.
TLS_PHRASES = (
    ("self[- ]signed certificate in certificate chain", "SELF_SIGNED_CERT_IN_CHAIN"),
    ("unable to get local issuer certificate", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"),
    ("unable to verify the first certificate", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"),
    ("certificate has expired", "CERT_HAS_EXPIRED"),
    ("self[- ]signed certificate", "DEPTH_ZERO_SELF_SIGNED_CERT"),
    ("x509: certificate signed by unknown authority", "x509-unknown-authority"),
    ("x509: certificate has expired or is not yet valid", "x509-expired"),
    ("x509: certificate is valid for", "x509-hostname-mismatch"),
    ("x509: certificate relies on legacy Common Name field", "x509-legacy-cn"),
    ("PKIX path building failed", "PKIX"),
    ("The certificate chain was issued by an authority that is not trusted", "untrusted-root"),
    ("SSL certificate problem: [a-z ]+", "curl-ssl-certificate"),
    ("CERTIFICATE_VERIFY_FAILED", "CERTIFICATE_VERIFY_FAILED"),
    ("Hostname mismatch, certificate is not valid for", "hostname-mismatch"),
)
_TLS = re.compile("|".join(f"(?P<k{n}>{p})" for n, (p, _) in enumerate(TLS_PHRASES)), re.I)
_WRAPPERS = re.compile(r"^(?:\s*(?:\*|npm (?:ERR!|error)|Error response from daemon|HTTPS ERROR|error|"
                       r"Error|ERROR|fatal|warning|WARN)\s*:?\s*)+")


def _tls(ctx: Ctx, i: int, m: re.Match):
    """The phrase with generic wrappers (`Error:`, `npm ERR!`) removed; the client's own
    context (`Kubernetes cluster unreachable: Get …`) is kept so clients stay apart."""
    kind = next(TLS_PHRASES[int(name[1:])][1] for name, v in m.groupdict().items() if v)
    text = _WRAPPERS.sub("", ctx.lines[i]).strip()
    if kind == "CERTIFICATE_VERIFY_FAILED":
        verify = re.search(r"certificate verify failed: ([a-z ]+)", text)
        text = "certificate verify failed" + (f": {verify.group(1).strip()}" if verify else "")
    elif kind == "PKIX":
        text = m.group(0)
    return Hit("tls", kind, text, (), i, i)


_NGINX_TAIL = re.compile(r", (?:client|server|request|upstream|host|referrer): .*$")


def _nginx(ctx: Ctx, i: int, m: re.Match):
    msg = _NGINX_TAIL.sub("", m["msg"])
    msg = re.sub(r" in \S+?:\d+$", "", msg)  # config file position
    return Hit("nginx", m["level"], msg, (), i, i)


def _git_permission(ctx: Ctx, i: int, m: re.Match):
    user = m["user"] if m["user"].endswith("[bot]") else "<user>"
    return Hit("git", "remote-permission-denied", f"Permission to <repo> denied to {user}", (), i, i)


_PG_USER = re.compile(r'\b(user|role|database) "[^"]{1,200}"')


def _postgres(ctx: Ctx, i: int, m: re.Match):
    return Hit("postgres", m["level"], _PG_USER.sub(r'\1 "<\1>"', m["msg"]), (), i, i)


TLS_RULES = [
    block("tls-certificate", "tls", "certificate|pkix|x509", _TLS.pattern, _tls, flags=re.I),
]
RULES = [
    block("nginx-log", "nginx", "[emerg]|[error]|[crit]|[alert]",
          r"\[(?P<level>emerg|alert|crit|error)\] (?:\d+#\d+: )?(?:\*\d+ )?(?P<msg>.+)$", _nginx),
    line("kong-message", "kong", "message",
         r"\"message\"\s*:\s*\"(?P<msg>An invalid response was received from the upstream server|"
         r"no Route matched with those values|failure to get a peer from the ring-balancer|"
         r"name resolution failed|The upstream server is timing out|An unexpected error occurred)\"",
         "kong"),
    line("postgres-connect", "postgres", "could not connect to server|connection to server",
         r"(?:could not connect to server|connection to server (?P<x_where>at .{1,200}?|on socket "
         r".{1,200}?) failed): (?P<msg>[^.]+)", "connect"),
    block("postgres-fatal", "postgres", "fatal:|panic:",
          r"\b(?P<level>FATAL|PANIC):\s+(?P<msg>.+)$", _postgres, needs="postgres"),
    block("postgres-error", "postgres", "error:", r"^(?:.{0,120}\s)?(?P<level>ERROR):\s+(?P<msg>.+)$",
          _postgres, needs="postgres"),
    line("mysql-client", "mysql", "error ",
         r"ERROR (?P<kind>\d{4}) \((?P<state>\w{5})\)(?: at line \d+)?: (?P<msg>.+)$", flags=0),
    line("mysql-server", "mysql", "[error]",
         r"\[ERROR\] \[(?P<kind>MY-\d+)\] \[\w+\] (?P<msg>.+)$"),
    line("sqlstate", "mysql", "sqlstate[",
         r"SQLSTATE\[(?P<kind>\w+)\]:?(?: \[\d+\])? (?P<msg>[^(\"]+)"),
    block("git-remote-permission", "git", "remote: permission to",
          r"remote: Permission to (?P<repo>\S+) denied to (?P<user>\S+?)\.?$", _git_permission),
    line("git-rejected", "git", "[rejected]|[remote rejected]",
         r"! \[(?:remote )?rejected\]\s+(?P<x_ref>\S+) -> (?P<x_ref2>\S+) \((?P<msg>[^)]+)\)",
         "push-rejected"),
    line("git-dubious-ownership", "git", "dubious ownership",
         r"(?P<msg>detected dubious ownership in repository) at ", "dubious-ownership"),
    line("git-ssh-publickey", "git", "permission denied (publickey",
         r"(?P<msg>Permission denied \(publickey[^)]*\))", "ssh-publickey"),
    line("git-password-auth", "git", "support for password authentication",
         r"(?P<msg>Support for password authentication was removed)", "password-auth-removed"),
    line("git-http-status", "git", "unable to access",
         r"fatal: (?P<msg>unable to access '[^']*': The requested URL returned error: \d+)",
         "http-status", weak=True),
    line("git-fatal", "git", "fatal: ", r"^\s*fatal: (?P<msg>.+)$", "fatal"),
]
