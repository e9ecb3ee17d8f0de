"""The vectors' ANN index: built past ANN_MIN_VECTORS rows, new rows folded in batches
of ANN_FOLD_ROWS (searched flat until then), retrained once ANN_MAX_SEGMENTS delta
segments pile up. Sizes are shrunk so the policy shows in a few hundred rows."""

from __future__ import annotations

import numpy as np
import pytest

from poimen import store as store_module
from poimen.store import Store

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def small_ann(monkeypatch):
    monkeypatch.setattr(store_module, "ANN_MIN_VECTORS", 600)
    monkeypatch.setattr(store_module, "ANN_PARTITION_ROWS", 300)
    monkeypatch.setattr(store_module, "ANN_FOLD_ROWS", 100)
    monkeypatch.setattr(store_module, "ANN_MAX_SEGMENTS", 2)


def _rows(start: int, count: int, rng) -> list[dict]:
    vectors = rng.standard_normal((count, store_module.DIM)).astype(np.float32)
    return [{"id": f"m{i}:symptom", "memory_sha": f"m{i}", "kind": "symptom", "level": "L1",
             "project": "p", "model": "test", "live": True, "vector": vectors[i - start]}
            for i in range(start, start + count)]


def _segments(store: Store) -> tuple[int, int] | None:
    ann = store_module._ann_index(store.table("vectors"))
    return None if ann is None else (ann.num_segments, ann.num_unindexed_rows)


def _found(store: Store, row: dict) -> bool:
    hits = store.search_vectors(row["vector"], kind="symptom", limit=3)
    return bool(hits) and hits[0].memory_sha == row["memory_sha"]


def test_index_built_folded_in_batches_and_retrained(tmp_path, small_ann):
    rng = np.random.default_rng(7)
    store = Store(tmp_path / "lance")
    store.put("vectors", _rows(0, 500, rng))
    store.optimize()
    assert _segments(store) is None            # below ANN_MIN_VECTORS: no index

    store.put("vectors", _rows(500, 150, rng))
    store.optimize()
    assert _segments(store) == (1, 0)          # built from every row

    history = []
    start = 650
    for _ in range(12):                        # 12 writes of 40 rows, optimize after each
        batch = _rows(start, 40, rng)
        store.put("vectors", batch)
        start += 40
        store.optimize()
        history.append(_segments(store))
        assert _found(store, batch[-1]), "a row not yet folded in must still be found"
    segments = [s for s, _ in history]
    unindexed = [u for _, u in history]
    assert max(unindexed) < 100 + 40           # folded once ANN_FOLD_ROWS were waiting
    assert 0 in unindexed[2:]                  # ... and folds did happen
    assert max(segments) <= 3                  # never more than ANN_MAX_SEGMENTS + the new fold
    assert segments.count(1) >= 2, history     # retrained at least once after the first build
    assert store.count("vectors") == 1130
