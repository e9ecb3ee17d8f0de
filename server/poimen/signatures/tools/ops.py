"""Hosts and their services: OpenSSH client, systemd/systemctl, Ansible task results,
gcloud and Google Cloud IAM, klog lines (kubelet and other Kubernetes daemons), Compose."""

from __future__ import annotations

import re

from ..rules import Ctx, Hit, block, line

_ANSIBLE_MSG = re.compile(r"\"msg\": ?\"(?P<msg>(?:[^\"\\]|\\.){1,400})")


def _ansible(ctx: Ctx, i: int, m: re.Match):
    """`fatal: [host]: FAILED! => {… "msg": "…"}`: the host is the instance, the result's
    `msg` (on that line, or below it in YAML/pretty JSON output) is the failure."""
    for j in range(i, min(len(ctx.lines), i + 30)):
        found = _ANSIBLE_MSG.search(ctx.lines[j]) or re.match(r"^\s*msg: (?P<msg>\S.{0,400})",
                                                              ctx.lines[j])
        if found:
            msg = re.split(r"\\n|\\r", found["msg"], maxsplit=1)[0]
            return Hit("ansible", m["kind"], msg, (), i, j)
    return None


_GCP_RESOURCE = re.compile(r"\bprojects/[^\s\"',]{1,300}?(?=[\s\"',]|\.?$)")


def _gcloud(ctx: Ctx, i: int, m: re.Match):
    """`ERROR: (gcloud.group.command) msg`: the command is the kind; resource paths
    (`projects/p/zones/z/clusters/c`) are the instance."""
    return Hit("gcloud", m["kind"], _GCP_RESOURCE.sub("projects/<resource>", m["msg"]), (), i, i)


def _klog(ctx: Ctx, i: int, m: re.Match):
    """klog: `E0405 05:33:40.511159    4759 server.go:274] msg`; the daemon is the syslog
    ident in front when there is one."""
    return Hit(m["ident"] or "klog", m["sev"], m["msg"], (), i, i)


def _compose_invalid(ctx: Ctx, i: int, m: re.Match):
    """`The Compose file '…' is invalid because:` lists the reason on the next line."""
    detail = next((t.strip() for t in ctx.lines[i + 1:i + 3] if t.strip()), "")
    return Hit("docker-compose", "invalid-file", detail, (), i, i + 1) if detail else None


RULES = [
    line("ssh-negotiate", "ssh", "unable to negotiate with",
         r"Unable to negotiate with (?P<x_host>\S+) port \d+: (?P<msg>no matching [\w -]{1,60} found)",
         "negotiate"),
    line("ssh-connect", "ssh", "ssh: connect to host",
         r"ssh: connect to host \S+ port \d+: (?P<msg>.+?)\s*$", "connect"),
    line("ssh-resolve", "ssh", "could not resolve hostname",
         r"ssh: Could not resolve hostname \S+?: (?P<msg>.+?)\s*$", "resolve"),
    line("ssh-host-key", "ssh", "host key verification failed|remote host identification",
         r"(?P<msg>Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED)", "host-key"),
    # (`Load key "…": invalid format` is left to the fallback: one line, many causes)
    line("ssh-key-file", "ssh", "unprotected private key|bad owner or permissions",
         r"(?P<msg>UNPROTECTED PRIVATE KEY FILE|Bad owner or permissions on (?P<x_file>\S+))",
         "key-file"),
    line("systemd-not-booted", "systemd", "has not been booted with systemd",
         r"(?P<msg>System has not been booted with systemd as init system)", "not-booted"),
    line("systemd-bus", "systemd", "failed to connect to bus",
         r"(?P<msg>Failed to connect to bus: .+?)\s*$", "bus"),
    line("systemd-unit-not-found", "systemd", "not found|could not be found",
         r"(?P<msg>Unit [\w@.\\-]{1,200}\.(?:service|socket|timer|mount|target) "
         r"(?:not found|could not be found))", "unit-not-found"),
    block("ansible-task", "ansible", "failed! =>|unreachable! =>",
          r"^\s*fatal: \[[^\]]{1,200}\]: (?P<kind>FAILED|UNREACHABLE)! =>", _ansible),
    block("gcloud-error", "gcloud", "error: (gcloud.",
          r"ERROR: \((?P<kind>gcloud(?:\.[\w-]{1,60}){1,6})\) (?P<msg>.+?)\s*$", _gcloud),
    line("gcp-permission", "gcloud", "denied on resource",
         r"(?P<msg>Permission ['\"][\w.]{1,200}['\"] denied on resource)", "permission-denied"),
    block("klog", "klog", ".go:",
          r"(?:\b(?P<ident>[a-z][\w-]{1,40})\[\d+\]: )?\b(?P<sev>[EF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ "
          r"[\w.-]{1,100}\.go:\d+\] (?P<msg>\S.+?)\s*$", _klog),
    line("compose-external-network", "docker-compose", "declared as external",
         r"(?P<msg>network (?P<x_network>\S+) declared as external, but could not be found)",
         "network-not-found"),
    line("docker-unknown-command", "docker", "is not a docker command",
         r"(?P<msg>docker: '[\w-]{1,60}' is not a docker command)", "unknown-command"),
    block("compose-invalid-file", "docker-compose", "is invalid because",
          r"(?:The )?Compose file '[^']{1,300}' is invalid because:?\s*$", _compose_invalid),
]
