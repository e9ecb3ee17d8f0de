"""Targets check, markdown tables and PNG plots for one benchmark run's JSON.

    .venv/bin/python bench/report.py bench/results/<stamp>.json   # re-render .md and plots
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# retrieval.SLICES; runs V4/V5 named the wave-2 slice "heldout-late"
SLICES = ("dev", "heldout", "heldout-late", "heldout-w2", "heldout-w3", "heldout-w4", "heldout-w5",
          "heldout-w6", "heldout-w7", "heldout-w8", "heldout-w9",
          "heldout-w10", "heldout-w11", "heldout-w12",
          "heldout-w13")
METHODS = ("poimen", "bm25", "dense")


def _at(result: dict, size: int) -> dict | None:
    return next((s for s in result.get("scale", []) if s["size"] == size), None)


def _check(name: str, value, limit, ok: bool | None, where: str = "") -> dict:
    status = "not measured" if value is None else ("met" if ok else "missed")
    return {"target": name, "value": value, "limit": limit, "status": status, "where": where}


def targets(result: dict) -> list[dict]:
    out = []
    for size, limit in ((10_000, 20), (100_000, 40)):
        entry = _at(result, size)
        value = entry["in_process"]["context_first_pass"]["p50_ms"] if entry else None
        out.append(_check(f"context p50 at {size // 1000}k (ms)", value, limit,
                          value is not None and value <= limit))
    scale = result.get("scale") or []
    largest = max(scale, key=lambda s: s["size"]) if scale else None
    if largest:
        where = f"at {largest['size']} memories"
        hover = largest["lsp"]["hover_from_cache"]["p50_ms"]
        out.append(_check("hover from cache p50 (ms)", hover, 5, hover <= 5, where))
        cold = largest["lsp"]["cold_start_to_first_answer_ms"]
        out.append(_check("LSP cold start to first answer (ms)", cold, 1500, cold <= 1500, where))
        cold = largest["http"]["cold_start_to_first_answer_ms"]
        out.append(_check("HTTP cold start to first answer (ms)", cold, 1500, cold <= 1500, where))
        if not (result.get("write") or {}).get("import"):
            rate = largest["build"]["memories_per_s_wall"]
            out.append(_check("mem import (memories/s)", rate, 80, rate >= 80,
                              where + (" (reused build)" if largest["build"].get("reused") else "")))
        at100k = _at(result, 100_000)
        rss = (at100k or largest)["lsp"]["rss_after_answering"]["peak_rss_mb"]
        out.append(_check("mem lsp peak RSS (MB) at 100k", rss if at100k else None, 300,
                          rss <= 300, f"{rss} MB {where}" if not at100k else ""))
    imported = (result.get("write") or {}).get("import")
    if imported:
        rate = imported["memories_per_s_wall"]
        out.append(_check("mem import (memories/s)", rate, 80, rate >= 80,
                          f"{imported['lessons']} lessons, whole command; "
                          f"{imported['memories_per_s_without_startup']}/s without start-up"))
    r = (result.get("retrieval") or {}).get("heldout")
    if r:
        rec, bm25 = (r["recurrence"][m]["top1"] for m in ("poimen", "bm25"))
        out.append(_check("held-out recurrence top-1 (≥ 0.9 and > BM25)", f"{rec} vs {bm25}",
                          0.9, rec >= 0.9 and rec > bm25))
        out.append(_check("held-out tier-1 share of recurrences", r["tier1_share"], 0.5,
                          r["tier1_share"] >= 0.5))
        look = r["lookalikes"]["tier1_other"]
        out.append(_check("held-out look-alikes at tier 1 with the other's lesson", look, 0,
                          look == 0, f"of {r['lookalikes']['n']}"))
        var, bm25 = (r["variant"][m]["mrr"] for m in ("poimen", "bm25"))
        out.append(_check("held-out variant MRR (≥ BM25 + 0.10)", f"{var} vs {bm25}", "+0.10",
                          var >= bm25 + 0.10))
        refs = r["references"]["share_first"]
        out.append(_check("held-out right reference first", refs, 0.8,
                          refs is not None and refs >= 0.8))
    return out


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if c is None else str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _cpu(in_process: dict) -> str:
    cpu = in_process.get("cpu_ms_per_lookup")
    return "" if not cpu else \
        f"{cpu['first_pass']} / {cpu['second_pass']} vs {cpu['query_embedding']}"


def _p(stat: dict | None) -> str:
    return "" if not stat else f"{stat['p50_ms']} / {stat['p95_ms']}"


def retrieval_markdown(r: dict) -> str:
    """poimen beside the naive baselines, dev and held-out side by side."""
    splits = [s for s in SLICES if s in r]
    rows = []
    for query in ("recurrence", "variant"):
        for method in METHODS:
            rows.append([query, method] + [
                f"{r[s][query][method]['top1']} ({r[s][query][method]['top1_count']}/"
                f"{r[s][query][method]['n']}) · {r[s][query][method]['mrr']}" for s in splits])
    for kind in ("symptom", "text"):
        rows.append(["variant", f"`mem search --kind {kind}`"] + [
            f"{r[s]['variant_paths'][kind]['top1']} · {r[s]['variant_paths'][kind]['mrr']}"
            for s in splits])
    rows.append(["recurrence", "answered at tier 1"] + [r[s]["tier1_share"] for s in splits])
    rows.append(["look-alike", "other's lesson at tier 1"] + [
        f"{r[s]['lookalikes']['tier1_other']} of {r[s]['lookalikes']['n']}" for s in splits])
    rows.append(["reference", "right one first"] + [
        f"{r[s]['references']['first']} of {r[s]['references']['n']}" for s in splits])
    return (_table(["query", "method", *[f"{s}: top-1 · MRR" for s in splits]], rows)
            + f"\n\nVault: {r['vault']['counts']}; data `{r['data']}`, rows per split "
            f"{r['rows']}.")


def markdown(result: dict, plots: list[str]) -> str:
    m = result["machine"]
    parts = [f"# poimen benchmark run {result['date']}",
             f"`{result['command']}` — profile {result['profile']}, commit {m['commit']}, "
             f"{m['cpu']} ({m['cores']} cores, {m['memory_gb']} GB), Python {m['python']}; "
             f"load average {m['loadavg_start']} at start, {m['loadavg_end']} at end "
             f"(shared machine); {result['elapsed_s']} s in all. Data: `{result['data']}`."]
    if result.get("retrieval"):
        parts += ["## Retrieval quality", retrieval_markdown(result["retrieval"])]
    if result.get("scale"):
        rows = []
        for s in result["scale"]:
            ip, http, lsp = s["in_process"], s["http"], s["lsp"]
            rows.append([s["size"], _p(ip["context_first_pass"]), _p(ip["context_second_pass"]),
                         _p(http["post_context"]), _p(lsp["hover_needing_lookup"]),
                         _p(lsp["hover_from_cache"]), _p(ip["floor_query_embedding"]),
                         _p(ip["lancedb_vector_search"]), _p(ip["lancedb_fulltext_search"]),
                         _p(ip["floor_numpy_bruteforce"]), _cpu(ip)])
        parts += ["## Latency (p50 / p95 ms)", _table(
            ["memories", "context (1st pass)", "context (2nd pass)", "POST /memory/context",
             "hover, lookup", "hover, cached", "floor: query embedding",
             "LanceDB vector leg", "LanceDB full text", "floor: numpy brute force",
             "CPU ms per lookup (1st / 2nd) vs embedding"], rows)]
        rows = [[s["size"], s["in_process"]["cold_start_to_first_answer_ms"],
                 s["http"]["cold_start_to_first_answer_ms"],
                 s["lsp"]["cold_start_to_first_answer_ms"],
                 s["lsp"]["rss_idle_after_initialize"]["rss_mb"],
                 s["lsp"]["rss_after_answering"]["peak_rss_mb"],
                 s["http"]["rss_after_answering"]["peak_rss_mb"]] for s in result["scale"]]
        parts += ["## Cold start (ms) and memory (MB)", _table(
            ["memories", "in process", "mem serve", "mem lsp", "lsp RSS idle",
             "lsp peak RSS after answering", "serve peak RSS"], rows)]
        legs = result["scale"][-1]["in_process"]["legs"]
        parts += [f"## Lookup legs at {result['scale'][-1]['size']} (p50 / p95 ms)",
                  _table(["leg", "p50 / p95"], [[k, _p(v)] for k, v in legs.items()])]
        rows = [[s["size"], s["build"]["lessons"], s["build"]["counts"],
                 s["build"]["import_wall_s"], s["build"]["import_cpu_s"],
                 s["build"]["memories_per_s_wall"], s["build"]["memories_per_s_cpu"],
                 s["build"]["built"] + (" (reused)" if s["build"].get("reused") else "")]
                for s in result["scale"]]
        parts += ["## mem import", _table(["vault", "lines", "verdicts", "wall s", "CPU s",
                                           "memories/s (wall)", "memories/s (CPU)", "built"], rows)]
    w = result.get("write")
    if w:
        i = w["ingest"]
        m = w.get("import")
        text = (f"`mem import`: {m['lessons']} lessons with evidence in {m['wall_s']} s wall, "
                f"{m['cpu_s']} s CPU: {m['memories_per_s_wall']} memories/s wall "
                f"({m['memories_per_s_without_startup']}/s without the {m['one_lesson_s']} s "
                f"a one-lesson import takes), {m['memories_per_s_cpu']} per CPU-second. "
                if m else "")
        text += (f"`mem ingest`: {i['files']} files, {i['bytes']} bytes in "
                f"{i['all_files_s']} s minus {i['one_file_s']} s for one file: "
                f"{i['evidence_mb_per_s']} MB/s, {i['records_per_s']} records/s.")
        if "rebuild" in w:
            r = w["rebuild"]
            text += (f" `mem rebuild --from-log`: {r['records']} records in {r['seconds']} s, "
                     f"{r['seconds_per_10k_records_extrapolated']} s per 10k records "
                     f"(extrapolated linearly).")
        if "embeddings_per_memory" in w:
            e = w["embeddings_per_memory"]
            text += (f"\n\nPer memory the write path embeds {e['texts_per_memory']} texts "
                     f"({e['tokens_per_memory']} tokens): {e['embedding_s_per_memory']} s of "
                     f"embedding in {e['wall_s_per_memory']} s wall; a process's first memory, "
                     f"symptom catalogue included (read from the on-disk cache when it holds "
                     f"it), embeds {e['first_memory_texts_incl_catalogue']} texts in "
                     f"{e['first_memory_embedding_s_incl_catalogue']} s.")
        if "embedding_batching" in w:
            b = w["embedding_batching"]
            text += (f" Batching: {b['texts']} texts with {b['distinct_token_lengths']} distinct "
                     f"token lengths take {b['per_length_groups_s']} s as now (one ONNX call per "
                     f"length), {b['one_padded_batch_s']} s as one padded batch, "
                     f"{b['length_sorted_batches_of_16_s']} s in length-sorted batches of 16.")
        parts += ["## Write path", text]
    if result.get("ann"):
        rows = [[a["vectors"], _p(a["numpy_bruteforce"]), _p(a["lancedb_flat"]),
                 _p(a.get("lancedb_ivf_hnsw_sq")), a.get("recall_at_30"), a.get("index_build_s")]
                for a in result["ann"]]
        parts += ["## Vector leg alone: flat vs ANN (p50 / p95 ms)", _table(
            ["vectors", "numpy", "LanceDB flat", "LanceDB IVF_HNSW_SQ", "recall@30",
             "index build s"], rows)]
    spots = next((s["hotspots"] for s in result.get("scale", []) if "hotspots" in s), None)
    if spots and "error" not in spots:
        rows = [[f"`{f}`", p] for f, p in spots["inclusive_pct"][:12]]
        parts += [f"## Where a warm lookup's time goes (py-spy, {spots['samples']} samples "
                  "inside the lookup, waits excluded)", _table(["function (inclusive)", "%"], rows),
                  _table(["function (self)", "%"], [[f"`{f}`", p]
                                                    for f, p in spots["self_pct"][:10]])]
    parts += ["## Targets", _table(["target", "value", "limit", "status", "note"],
                                   [[t["target"], t["value"], t["limit"], t["status"], t["where"]]
                                    for t in result["targets"]])]
    parts += [f"![{Path(p).stem}]({Path(p).name})" for p in plots]
    return "\n\n".join(parts) + "\n"


def plots(result: dict, out: Path, stamp: str) -> list[str]:
    """retrieval and latency-vs-size PNGs; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    r = result.get("retrieval")
    if r:
        splits = [s for s in SLICES if s in r]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        width = 0.8 / (len(METHODS) * len(splits))
        labels = [f"{q} ({s})" for q in ("recurrence", "variant") for s in splits]
        for n, method in enumerate(METHODS):
            values = [r[s][q][method]["mrr"] for q in ("recurrence", "variant") for s in splits]
            ax.bar([x + n * width for x in range(len(labels))], values, width, label=method)
        ax.set_xticks([x + width for x in range(len(labels))], labels, fontsize=8)
        ax.set_ylabel("MRR")
        ax.set_ylim(0, 1)
        ax.set_title("Retrieval: poimen vs naive baselines")
        ax.legend(fontsize=8)
        made.append(_save(fig, out, stamp, "quality"))
    scale = result.get("scale") or []
    if scale or result.get("ann"):
        fig, ax = plt.subplots(figsize=(7, 3.5))
        sizes = [s["size"] for s in scale]
        series = {"context (in process)": ("in_process", "context_first_pass"),
                  "POST /memory/context": ("http", "post_context"),
                  "hover, lookup": ("lsp", "hover_needing_lookup"),
                  "floor: query embedding": ("in_process", "floor_query_embedding")}
        for label, (part, key) in series.items():
            if scale:
                ax.plot(sizes, [s[part][key]["p50_ms"] for s in scale], "o-", label=label)
        for key, label in (("numpy_bruteforce", "vector leg: numpy"),
                           ("lancedb_flat", "vector leg: LanceDB flat"),
                           ("lancedb_ivf_hnsw_sq", "vector leg: LanceDB ANN")):
            points = [(a["vectors"], a[key]["p50_ms"]) for a in result.get("ann", []) if key in a]
            if points:
                ax.plot(*zip(*points), "s--", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("memories / vectors")
        ax.set_ylabel("p50 ms")
        ax.set_title("Latency vs vault size")
        ax.legend(fontsize=7)
        made.append(_save(fig, out, stamp, "latency"))
    return made


def _save(fig, out: Path, stamp: str, name: str) -> str:
    import shutil

    path = out / f"{stamp}-{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    shutil.copyfile(path, out / f"{name}.png")
    return str(path)


if __name__ == "__main__":
    source = Path(sys.argv[1])
    run = json.loads(source.read_text())
    run["targets"] = targets(run)
    source.write_text(json.dumps(run, indent=2))
    made = plots(run, source.parent, source.stem)
    source.with_suffix(".md").write_text(markdown(run, made))
    print(source.with_suffix(".md").read_text())
