"""Trigram similarity: the lookup's measure when there are no vectors, and of how
nearly two normalised failure messages agree."""

from __future__ import annotations


def trigrams(text: str) -> set[str]:
    t = " ".join(text.lower().split())
    return {t[i:i + 3] for i in range(max(len(t) - 2, 0))}


def trigram_similarity(a: set[str], b: set[str]) -> float:
    """Dice coefficient of two trigram sets."""
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0
