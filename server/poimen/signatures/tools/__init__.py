"""One rule set per tool family; `RULES` is the global priority order (first match on a
line wins): consequences, then the most specific phrases, then language-level blocks,
then the fallback."""

from __future__ import annotations

import re

from . import generic, infra, js, jvm, native, net, python

RULES = (generic.CONSEQUENCES + jvm.EARLY + net.TLS_RULES + infra.RULES + net.RULES + jvm.RULES + python.RULES + js.RULES
         + native.RULES + generic.FALLBACK)

# Words anywhere in the input that let context-dependent rules fire (`needs=`) and name
# the HTTP server behind a status page.
HINTS = re.compile(
    r"(?P<terraform>\bterraform\b|Terraform|\.tf\b|╷)|"
    r"(?P<postgres>\bpsql\b|postgres|PostgreSQL|pg_hba|SQLSTATE|^DETAIL: |^HINT: )|"
    r"(?P<cargo>Compiling [\w-]+ v\d|\bcargo\b|\brustc\b|\.rs\b)|"
    r"(?P<go>\bgo (?:build|test|run|vet|install|mod)\b|\.go:\d+|^# [\w./-]+$|\bgo\.mod\b)|"
    r"(?P<node>node_modules|\bnode\b|\bnpm\b|\byarn\b|\bpnpm\b|\.m?js\b)|"
    r"(?P<python>Traceback|\.py\b|\bpip\b|\bpython)|(?P<poetry>\bpoetry\b|Poetry)|"
    r"(?P<nginx>nginx|openresty)|(?P<kong>\bkong\b|Kong)|(?P<cloudflare>cloudflare)|"
    r"(?P<envoy>envoy)|(?P<traefik>traefik)|(?P<apache>Apache)", re.I)

_KEYS = sorted({k for rule in RULES for k in rule.keys}, key=len, reverse=True)
KEY_RE = re.compile("|".join(re.escape(k) for k in _KEYS))
# a matched key stands for every key it contains (finditer reports one key per position)
COVERS = {k: tuple(c for c in _KEYS if c in k) for k in _KEYS}
BY_KEY = {k: frozenset(n for n, rule in enumerate(RULES) if k in rule.keys) for k in _KEYS}
