"""The project's failure corpus: every part's rows, checked, with their fixed split.

    python tests/corpus/failure_corpus.py            # counts per split, tool and part; problems

Rows come back in the shared development set's shape (`cases`, `reference`, `negatives`,
`decisions`, `distractors`), each with a `split` field (`dev` | `heldout`) fixed by a
hash of its id, so tuning code can take `dev` rows only. Nothing here prints a row.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rules import problems  # noqa: E402

HERE = Path(__file__).resolve().parent
PARTS = HERE / "parts"
SPLITS = ("dev", "heldout")
SHARED_FILES = ("cases", "reference", "negatives", "decisions", "distractors")



def split_of(row_id: str) -> str:
    """`dev` when the first byte of sha256(id) is even, else `heldout` (fixed, by id)."""
    return SPLITS[hashlib.sha256(row_id.encode("utf-8")).digest()[0] % 2]


def _rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError as exc:
                raise SystemExit(f"corpus: {path.relative_to(HERE)}:{number}: {exc}") from None
    return out


def load(root: Path = HERE) -> dict[str, list[dict]]:
    """Every part's rows in the shared set's shape; each row gains `split` and `part`."""
    out: dict[str, list[dict]] = {name: [] for name in SHARED_FILES}
    for part in sorted(p for p in (Path(root) / "parts").iterdir() if p.is_dir()):
        for row in _rows(part / "cases.jsonl"):
            out["cases"].append(dict(row, part=part.name))
        for row in _rows(part / "lookalikes.jsonl"):
            out["negatives"].append({
                "id": row["id"], "tool": row.get("tool", ""), "part": part.name,
                "a": row["a"]["evidence"], "b": row["b"]["evidence"],
                "a_memory": row["a"]["memory"], "b_memory": row["b"]["memory"],
                "why_different": row["why_different"],
                "a_sources": row["a"].get("sources", []), "b_sources": row["b"].get("sources", []),
                "sources": row["a"].get("sources", []) + row["b"].get("sources", []),
                **{k: row[k] for k in ("a_case", "a_distinct", "b_case", "b_distinct")
                   if row.get(k)}})
        for row in _rows(part / "references.jsonl"):
            out["reference"].append(dict(row, part=part.name))
        for row in _rows(part / "distractors.jsonl"):
            out["distractors"].append(dict(row, part=part.name))
    for rows in out.values():
        for row in rows:
            row["split"] = split_of(row["id"])
    return out


def of_split(rows: dict[str, list[dict]], split: str) -> dict[str, list[dict]]:
    """The rows of one split; distractors and decisions are shared by both (they are
    the crowd every query is measured in, never a query themselves)."""
    return {name: [r for r in items if name in ("distractors", "decisions")
                   or r["split"] == split] for name, items in rows.items()}


def main() -> int:
    rows = load()
    for name, items in rows.items():
        by_split = Counter(r["split"] for r in items)
        print(f"{name:12s} {len(items):5d}  dev {by_split['dev']:4d}  heldout "
              f"{by_split['heldout']:4d}  parts {dict(Counter(r['part'] for r in items))}")
    tools = Counter(r["tool"] for r in rows["cases"])
    print(f"case tools: {len(tools)}")
    issues = problems(rows)
    for line in issues:
        print("problem:", line)
    return 1 if issues else 0


if __name__ == "__main__":
    sys.exit(main())
