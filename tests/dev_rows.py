"""Dev-split rows of the repo's corpus (tests/corpus), by id, for tests.

`row(id)` raises KeyError for a held-out id, so no test can depend on a held-out row.
Decisions (memories that explain no failure) are fixtures written here:
tests/fixtures/decisions.jsonl.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "corpus"))
import failure_corpus  # noqa: E402

DECISIONS = TESTS / "fixtures" / "decisions.jsonl"


@cache
def _dev() -> dict[str, dict[str, dict]]:
    rows = failure_corpus.load()
    rows["decisions"] = [dict(json.loads(line), split="dev")
                         for line in DECISIONS.read_text().splitlines() if line.strip()]
    return {kind: {r["id"]: r for r in items if r["split"] == "dev"}
            for kind, items in rows.items()}


def row(row_id: str) -> dict:
    """The dev row with this id, of any kind; KeyError when it is held out or unknown."""
    for by_id in _dev().values():
        if row_id in by_id:
            return by_id[row_id]
    split = failure_corpus.split_of(row_id)
    raise KeyError(f"{row_id}: {'held out' if split == 'heldout' else 'no such dev row'}")


def rows(kind: str) -> list[dict]:
    """Every dev row of one kind (`cases`, `reference`, `negatives`, `decisions`,
    `distractors`), in corpus order."""
    return list(_dev()[kind].values())
