"""The token budget of a context answer and its fixed truncation order.

Order: drop references (R, lowest rank first), then trim tier-2 lessons toward the
floor, then drop skills, then trim tier 2 below the floor. Tier-1 lessons are never
dropped, even when they alone exceed the limit. `used` is the token count, by the
project's tokenizer, of every `text` that is returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
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


def token_counter(tokenizer_path) -> tuple[Callable[[str], int], str | None]:
    """The project's tokenizer (the embedder's tokenizer.json, untruncated) as a
    counter (memoised by text), and a degraded note when it is missing and whitespace
    words are counted.
    """
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.no_padding()
        tokenizer.no_truncation()
    except Exception:  # noqa: BLE001 - any failure means no usable tokenizer file
        return (lambda text: len(text.split()),
                "budget: tokenizer unavailable, counted whitespace words")

    @lru_cache(maxsize=COUNT_CACHE)
    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    return count, None
