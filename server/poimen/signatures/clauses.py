"""Clause keys: the failure inside a message that a wrapper or logger printed with context.

One paste says `==> Error starting agent: Failed to get advertise address: Multiple private
IPs found`, another `starting agent: Failed to get advertise address: …`; one
`invalid Kustomization: json: cannot unmarshal string into Go struct field …`, another
the `json:` part alone. One tool adds a second sentence of advice (`can not perform a
'--user' install. User site-packages are not visible in this virtualenv`), another stops
after the first. A message's keys are the message itself, every clause after a `: ` and
its first sentence (before the first `. `), each of at least `CLAUSE_WORDS` words, a
clause sentence-cased like a message. Two messages sharing a key (whatever tool or rule
printed them) name the same failure in different company; tier 1 answers on that only
when the content agrees (`lookup.tier1`).
"""

from __future__ import annotations

from .normalise import sentence_case

# more words than the errno phrases that end many unrelated messages
# ("no such file or directory", "address already in use")
CLAUSE_WORDS = 6
SEPARATOR = ": "
SENTENCE_END = ". "


def clause_keys(message: str) -> tuple[str, ...]:
    """The message, its first sentence, then its closing clauses (longest first), each of
    `CLAUSE_WORDS` words or more, each once."""
    keys = [message] if message else []
    head = message.split(SENTENCE_END, 1)[0]
    if head != message and len(head.split()) >= CLAUSE_WORDS:
        keys.append(head)
    at = message.find(SEPARATOR)
    while at >= 0:
        clause = sentence_case(message[at + len(SEPARATOR):].strip())
        if len(clause.split()) >= CLAUSE_WORDS and clause not in keys:
            keys.append(clause)
        at = message.find(SEPARATOR, at + len(SEPARATOR))
    return tuple(keys)
