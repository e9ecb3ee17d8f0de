"""Where an ANN index pays: the vector leg alone at sizes the end-to-end vaults don't reach.

Vectors are the real ones from a built vault, resampled with small noise (renormalised)
up to each size, in a LanceDB table with the store's filter columns; each size times the
store's query shape (cosine, `kind`/`level`/`live` prefilter, top 30) as a flat scan,
with an IVF_HNSW_SQ index (and its recall@30 against the flat scan), numpy brute
force over the symptom rows, and the resident copy's search as `poimen.resident` runs it
(every row's dot product, the filter, an exact sort). A microbenchmark of one leg.
"""

from __future__ import annotations

import tempfile
import time

import lancedb
import numpy as np
import pyarrow as pa

from latency import stats_ms
from poimen.resident import nearest

LIMIT = 30
WHERE = "kind = 'symptom' AND level IN ('L1', 'L2') AND live = true"


def resample(base: np.ndarray, size: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picked = base[rng.integers(0, len(base), size)]
    noisy = picked + rng.normal(0, 0.03, picked.shape).astype(np.float32)
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def _table(db, matrix: np.ndarray):
    n, dim = matrix.shape
    kinds = np.where(np.arange(n) % 2 == 0, "symptom", "text")
    data = pa.table({"id": [str(i) for i in range(n)], "kind": kinds.tolist(),
                     "level": ["L1"] * n, "live": [True] * n,
                     "vector": pa.FixedSizeListArray.from_arrays(
                         pa.array(matrix.reshape(-1)), dim)})
    return db.create_table(f"v{n}", data=data)


def _search(tbl, query: np.ndarray, flat: bool) -> list[str]:
    search = tbl.search(query).metric("cosine").where(WHERE, prefilter=True)
    if flat:
        search = search.bypass_vector_index()
    return [r["id"] for r in search.limit(LIMIT).select(["id"]).to_list()]


def measure(base: np.ndarray, queries: np.ndarray, sizes: list[int],
            index_from: int = 5000) -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory(prefix="bench-ann-") as tmp:
        db = lancedb.connect(tmp)
        for size in sizes:
            matrix = resample(base, size, seed=size)
            tbl = _table(db, matrix)
            symptom = matrix[::2]
            row = {"vectors": size}
            flat_t, truth = [], []
            for q in queries:
                t = time.perf_counter()
                truth.append(_search(tbl, q, flat=True))
                flat_t.append(time.perf_counter() - t)
            np_t = []
            for q in queries:
                t = time.perf_counter()
                scores = symptom @ q
                top = np.argpartition(-scores, LIMIT)[:LIMIT]
                top[np.argsort(-scores[top])]
                np_t.append(time.perf_counter() - t)
            resident_t = []
            kinds = np.where(np.arange(size) % 2 == 0, "symptom", "text").astype(object)
            norms = np.linalg.norm(matrix, axis=1)
            for q in queries:
                t = time.perf_counter()
                nearest(matrix, norms, np.flatnonzero(kinds == "symptom"), q, LIMIT)
                resident_t.append(time.perf_counter() - t)
            row.update(lancedb_flat=stats_ms(flat_t), numpy_bruteforce=stats_ms(np_t),
                       resident_numpy=stats_ms(resident_t),
                       resident_matrix_mb=round(matrix.nbytes / 1e6, 1))
            if size >= index_from:
                t = time.perf_counter()
                tbl.create_index(metric="cosine", vector_column_name="vector",
                                 index_type="IVF_HNSW_SQ",
                                 num_partitions=max(1, size // 4096))
                row["index_build_s"] = round(time.perf_counter() - t, 2)
                ann_t, recall = [], []
                for q, exact in zip(queries, truth):
                    t = time.perf_counter()
                    got = _search(tbl, q, flat=False)
                    ann_t.append(time.perf_counter() - t)
                    recall.append(len(set(got) & set(exact)) / max(len(exact), 1))
                row.update(lancedb_ivf_hnsw_sq=stats_ms(ann_t),
                           recall_at_30=round(float(np.mean(recall)), 4))
            out.append(row)
    return out
