"""The token budget of a context answer and its fixed truncation order.

Order: drop references (R, lowest rank first), then trim tier-2 lessons toward the
floor, then drop skills, then trim tier 2 below the floor. Tier-1 lessons are never
dropped, even when they alone exceed the limit. `used` is the token count, by the
project's tokenizer, of every `text` that is returned.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

TIER2_FLOOR = 1
COUNT_CACHE = 8192  # texts whose token counts are kept (answers repeat the same memories)


@dataclass
class Sections:
    """The ranked candidates of one answer, best first within each list."""

    tier1: list[dict] = field(default_factory=list)
    tier2: list[dict] = field(default_factory=list)
    skills: list[dict] = field(default_factory=list)
    references: list[dict] = field(default_factory=list)


def tokens_of(items: list[dict], count: Callable[[str], int]) -> int:
    return sum(count(item["text"]) for item in items)


def _drop_plan(sections: Sections, floor: int):
    """(section name, list, keep at least) in the fixed truncation order."""
    return [("references", sections.references, 0),
            ("tier2", sections.tier2, min(floor, len(sections.tier2))),
            ("skills", sections.skills, 0),
            ("tier2", sections.tier2, 0)]


def apply(sections: Sections, limit: int, count: Callable[[str], int],
          floor: int = TIER2_FLOOR) -> dict:
    """Truncate `sections` in place to fit `limit`; return the `budget` object."""
    cost = {id(item): count(item["text"]) for name in ("tier1", "tier2", "skills",
                                                        "references")
            for item in getattr(sections, name)}
    used = sum(cost.values())
    dropped = []
    for name, items, keep in _drop_plan(sections, floor):
        while used > limit and len(items) > keep:
            item = items.pop()
            used -= cost[id(item)]
            dropped.append({"section": name, "tier": item["tier"],
                            "sha": item["sha"], "tokens": cost[id(item)]})
    return {"limit": limit, "used": used, "dropped": dropped,
            "over": used > limit}


class TokenCounter:
    """Token counts of texts, memoised by text (answers repeat the same memories);
    `prime` counts many at once in the tokenizer's own threads, e.g. inside a leg."""

    def __init__(self, encode_batch: Callable[[list[str]], list[int]]):
        self._encode_batch = encode_batch
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, text: str) -> int:
        count = self._counts.get(text)
        return count if count is not None else self.prime([text])[0]

    def prime(self, texts: list[str]) -> list[int]:
        known = self._counts
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        counted = dict(zip(missing, self._encode_batch(missing))) if missing else {}
        if counted:
            with self._lock:
                if len(self._counts) + len(counted) > COUNT_CACHE:
                    self._counts = {}
                self._counts.update(counted)
        return [counted[t] if t in counted else known[t] for t in texts]


def token_counter(tokenizer_path) -> tuple[TokenCounter, str | None]:
    """The project's tokenizer (the embedder's tokenizer.json, untruncated) as a
    counter, and a degraded note when it is missing and whitespace words are counted.
    """
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.no_padding()
        tokenizer.no_truncation()
    except Exception:  # noqa: BLE001 - any failure means no usable tokenizer file
        return (TokenCounter(lambda texts: [len(t.split()) for t in texts]),
                "budget: tokenizer unavailable, counted whitespace words")
    return TokenCounter(lambda texts: [len(e.ids) for e in tokenizer.encode_batch(
        texts, add_special_tokens=False)]), None
