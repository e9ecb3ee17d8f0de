"""One rule set per tool family; `RULES` is the global priority order (first match on a
line wins): consequences, then the most specific phrases, then language-level blocks,
then the fallback."""

from __future__ import annotations

import re

from . import data, dotnet, generic, infra, js, jvm, memcheck, mobile, native, net, ops, python, ruby, web

LAST_RESORT = generic.LAST_RESORT
RULES = (generic.CONSEQUENCES + jvm.EARLY + net.TLS_RULES + infra.RULES + ops.RULES + net.RULES + data.RULES + web.RULES + dotnet.RULES + mobile.RULES + jvm.RULES + python.RULES + js.RULES
         + ruby.RULES + memcheck.RULES + native.RULES + generic.FALLBACK)

# Words anywhere in the input that let context-dependent rules fire (`needs=`) and name
# the HTTP server behind a status page.
HINTS = {name: re.compile(pattern, re.M) for name, pattern in {
    "terraform": r"\bterraform\b|Terraform|\.tf\b|╷|hashicorp/|\bon \S+\.tf line \d",
    "postgres": r"\bpsql\b|postgres|PostgreSQL|pg_hba|SQLSTATE|^DETAIL: |^HINT: ",
    "cargo": r"Compiling [\w-]+ v\d|\bcargo\b|\brustc\b|\.rs\b",
    "go": r"\bgo (?:build|test|run|vet|install|mod)\b|\.go:\d+|^# [\w./-]+$|\bgo\.mod\b",
    "node": r"node_modules|\bnode\b|\bnpm\b|\byarn\b|\bpnpm\b|\.m?js\b",
    "python": r"Traceback|\.py\b|\bpip\b|\bpython",
    "poetry": r"\bpoetry\b|Poetry",
    "fastlane": r"\bfastlane\b|\bFastfile\b",
    "ruby": r"\.rb\b|\bruby\b|\bgems?\b|\bbundle\b|Gemfile|\brails\b|\brake\b|\bRSpec\b",
}.items()}

def trie_pattern(words: list[str]) -> str:
    """One regex for many literals, factored by common prefix (sre tries alternatives one
    by one; a trie makes that one character test per position)."""
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        ends = "" in node
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        if len(alts) == 1 and not ends:
            return alts[0]
        return "(?:" + "|".join(alts) + ")" + ("?" if ends else "")
    return build(trie)


_KEYS = sorted({k for rule in RULES for k in rule.keys}, key=len, reverse=True)
KEY_RE = re.compile(trie_pattern(_KEYS))
# a matched key stands for every key it contains (finditer reports one key per position)
COVERS = {k: tuple(c for c in _KEYS if c in k) for k in _KEYS}
BY_KEY = {k: frozenset(n for n, rule in enumerate(RULES) if k in rule.keys) for k in _KEYS}
