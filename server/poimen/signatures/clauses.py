"""Clause keys: the failure inside a message that a wrapper or logger printed with context.

One paste says `==> Error starting agent: Failed to get advertise address: Multiple private
IPs found`, another `starting agent: Failed to get advertise address: …`; one
`invalid Kustomization: json: cannot unmarshal string into Go struct field …`, another
the `json:` part alone. A message's keys are the message itself and every clause after
a `: ` with at least `CLAUSE_WORDS` words, sentence-cased like a message. Two messages
sharing a key (whatever tool or rule printed them) name the same failure in different
company; tier 1 answers on that only when the content agrees (`lookup.tier1`).
"""

from __future__ import annotations

from .normalise import sentence_case

# more words than the errno phrases that end many unrelated messages
# ("no such file or directory", "address already in use")
CLAUSE_WORDS = 6
SEPARATOR = ": "


def clause_keys(message: str) -> tuple[str, ...]:
    """The message, then its closing clauses of `CLAUSE_WORDS` words or more, longest
    first, each once."""
    keys = [message] if message else []
    at = message.find(SEPARATOR)
    while at >= 0:
        clause = sentence_case(message[at + len(SEPARATOR):].strip())
        if len(clause.split()) >= CLAUSE_WORDS and clause not in keys:
            keys.append(clause)
        at = message.find(SEPARATOR, at + len(SEPARATOR))
    return tuple(keys)
