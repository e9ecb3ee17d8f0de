"""Write path through the real CLI: `mem import` memories/s, `mem ingest` evidence MB/s,
`mem rebuild --from-log`.

Import: `mem import` of N generated lessons (each with evidence) into a fresh vault, after
a one-lesson import that starts a process, fills the on-disk catalogue cache and gives the
start-up time; the rate is reported for the whole command and without that start-up.
Ingest: one `mem ingest` of N evidence files and one of a single file, into fresh vaults;
MB/s is the N files' bytes over the difference (the process start-up cancels out).
Rebuild: a copy of a built vault replayed from its log; seconds per 10k log records is
extrapolated linearly from the records this vault has (stated in the report).
"""

from __future__ import annotations

import resource
import shutil
import tempfile
import time
from pathlib import Path

import corpus
from build import mem


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def import_rate(count: int = 300, seed: int = 300, keep: Path | None = None) -> dict:
    """`mem import` of `count` lessons; the vault is left at `keep` (for the rebuild)."""
    lessons = corpus.generated_lessons(count + 1, seed=seed)
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        root = Path(tmp)
        one = corpus.write_jsonl(lessons[:1], root / "one.jsonl")
        t = time.perf_counter()
        mem(root / "vault-one", "import", str(one))
        startup = time.perf_counter() - t
        source = corpus.write_jsonl(lessons[1:], root / "all.jsonl")
        vault = keep or root / "vault"
        cpu0, t = _children_cpu(), time.perf_counter()
        result = mem(vault, "import", str(source))
        wall, cpu = time.perf_counter() - t, _children_cpu() - cpu0
    return {"lessons": count, "counts": result.get("counts", {}), "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "one_lesson_s": round(startup, 1),
            "memories_per_s_wall": round(count / wall, 2),
            "memories_per_s_cpu": round(count / cpu, 2) if cpu else None,
            "memories_per_s_without_startup": round(count / max(wall - startup, 1e-9), 2)}


def ingest_rate(count: int = 200, seed: int = 4242) -> dict:
    evidence = [r["evidence"] for r in corpus.generated_lessons(count, seed=seed)]
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        root = Path(tmp)
        files = []
        for n, text in enumerate(evidence):
            path = root / f"e{n}.log"
            path.write_text(text)
            files.append(str(path))
        timings = {}
        for label, names in (("one", files[:1]), ("all", files)):
            t = time.perf_counter()
            mem(root / f"vault-{label}", "ingest", *names)
            timings[label] = time.perf_counter() - t
    size = sum(len(e.encode()) for e in evidence)
    work = max(timings["all"] - timings["one"], 1e-9)
    return {"files": count, "bytes": size, "one_file_s": round(timings["one"], 2),
            "all_files_s": round(timings["all"], 2),
            "evidence_mb_per_s": round(size / work / 1e6, 4),
            "records_per_s": round((count - 1) / work, 1)}


def rebuild_rate(vault: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-rebuild-") as tmp:
        copy = Path(tmp) / "vault"
        shutil.copytree(vault, copy)
        t = time.perf_counter()
        result = mem(copy, "rebuild", "--from-log")
        seconds = time.perf_counter() - t
    records = result.get("records") or 0
    return {"records": records, "seconds": round(seconds, 1),
            "projection_drift": len(result.get("projection_drift") or []),
            "seconds_per_10k_records_extrapolated":
                round(seconds / records * 10_000, 1) if records else None}


def embedding_batching(count: int = 24, seed: int = 77, repeats: int = 2) -> dict:
    """Why import is embedding-bound: `Embedder.embed` runs one ONNX call per distinct
    token length (spread over worker threads), so varied texts get batches of ~1. Compared with one padded batch
    (masked mean pooling), over the same texts; cosine agreement shows it is the same
    vector."""
    import numpy as np

    from poimen.embed import Embedder

    lessons = corpus.generated_lessons(count, seed=seed)
    texts = [r["text"] for r in lessons] + [r["evidence"] for r in lessons]
    embedder = Embedder()
    embedder.embed(texts[:2])
    tokenizer, session = embedder._load()
    encodings = tokenizer.encode_batch(texts)
    lengths = len({len(e.ids) for e in encodings})
    current = []
    for _ in range(repeats):
        t = time.perf_counter()
        reference = embedder._compute(texts)  # not embed(): that memoises
        current.append(time.perf_counter() - t)
    padded = []
    for _ in range(repeats):
        t = time.perf_counter()
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, enc in enumerate(encodings):
            ids[i, :len(enc.ids)], mask[i, :len(enc.ids)] = enc.ids, 1
        hidden = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                    "token_type_ids": np.zeros_like(ids)})[0]
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        vectors = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        padded.append(time.perf_counter() - t)
    sorted_runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), 16):
            rows = order[start:start + 16]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for j, i in enumerate(rows):
                ids[j, :len(encodings[i].ids)], mask[j, :len(encodings[i].ids)] = encodings[i].ids, 1
            session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                "token_type_ids": np.zeros_like(ids)})
        sorted_runs.append(time.perf_counter() - t)
    agreement = float(np.min(np.sum(vectors * reference, axis=1)))
    best = lambda xs: round(min(xs), 3)  # noqa: E731 - least disturbed by other load
    return {"texts": len(texts), "distinct_token_lengths": lengths,
            "per_length_groups_s": best(current), "one_padded_batch_s": best(padded),
            "length_sorted_batches_of_16_s": best(sorted_runs),
            "min_cosine_padded_vs_current": round(agreement, 5)}


def embeddings_per_memory(count: int = 32, seed: int = 99) -> dict:
    """Texts and tokens the write path embeds per memory (in process, same code as
    `mem import`; memoised and cached vectors are not counted), the catalogue's one-off
    embedding (or its load from the on-disk cache) counted apart."""
    from poimen.embed import Embedder
    from poimen.engine import Engine, Evidence, Proposal

    calls = {"texts": 0, "tokens": 0, "seconds": 0.0}
    original = Embedder._compute

    def counting(self, texts):
        tokenizer, _ = self._load()
        calls["texts"] += len(texts)
        calls["tokens"] += sum(len(e.ids) for e in tokenizer.encode_batch(texts or []))
        t = time.perf_counter()
        out = original(self, texts)
        calls["seconds"] += time.perf_counter() - t
        return out

    lessons = corpus.generated_lessons(count + 1, seed=seed)
    with tempfile.TemporaryDirectory(prefix="bench-embeds-") as tmp:
        engine = Engine(Path(tmp) / "vault", "bench")
        Embedder._compute = counting
        try:
            def remember(batch):
                got = engine.ingest_many(Evidence(r["evidence"], "note", r["tool"]) for r in batch)
                engine.remember_many([Proposal("L1", r["text"], [g.evidence_sha])
                                      for r, g in zip(batch, got)])
            remember(lessons[:1])  # pays the catalogue's embedding
            warm = dict(calls)
            t = time.perf_counter()
            remember(lessons[1:])
            wall = time.perf_counter() - t
        finally:
            Embedder._compute = original
    per = lambda key: round((calls[key] - warm[key]) / count, 1)  # noqa: E731
    return {"memories": count, "texts_per_memory": per("texts"),
            "tokens_per_memory": per("tokens"),
            "embedding_s_per_memory": round((calls["seconds"] - warm["seconds"]) / count, 3),
            "wall_s_per_memory": round(wall / count, 3),
            "first_memory_texts_incl_catalogue": warm["texts"],
            "first_memory_embedding_s_incl_catalogue": round(warm["seconds"], 1)}
