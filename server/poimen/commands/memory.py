"""`mem ingest`, `mem remember`, `mem import`, `mem search`: what goes in, raw lookups."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..edge import parse_import
from ..engine import SOURCES, Evidence, InputError, Proposal
from ._common import emit, engine, read_input
from .vault import progress_bar

IMPORT_BATCH = 64


def _ingest_line(result) -> str:
    if result.derived is not None:
        d = result.derived
        return (f"excluded as derived: matches {d.kind} {d.name!r} "
                f"(overlap {d.overlap:.2f} ≥ {d.threshold:.2f})")
    lines = [f"evidence {result.evidence_sha}" + ("" if result.new else " (already known)")]
    for sig in result.signatures:
        lines.append(f"  signature {sig.sig_sha[:12]}  {sig.tool}/{sig.kind}  {sig.message[:90]}")
    for kind, count in result.redactions:
        lines.append(f"  redacted {count} × {kind}")
    return "\n".join(lines)


def _remember_line(result) -> str:
    head = f"{result.verdict}: {result.reason}" + (f"\nmemory {result.sha}" if result.sha else "")
    if result.projection is not None:
        lines = result.projection["lines"]
        head += f"\nsymptom projection ({len(lines)} lines, {result.projection['model_id']})"
        head += "".join(f"\n  [{l['origin']}] {l['text']}" for l in lines)
    return head


def register(app: typer.Typer) -> None:
    @app.command()
    def ingest(ctx: typer.Context,
               files: List[str] = typer.Argument(..., help="Files to read, or - for stdin."),
               source: str = typer.Option("terminal", "--source",
                                          help="terminal|diagnostic|ci|transcript|note"),
               tool: Optional[str] = typer.Option(None, "--tool",
                                                  help="The tool that printed it (else inferred)."),
               no_derived_filter: bool = typer.Option(
                   False, "--no-derived-filter",
                   help="Debugging only: keep text that quotes our own artifacts.")):
        """Add L0 evidence; prints evidence shas, signatures and derived exclusions."""
        if source not in SOURCES:
            raise typer.BadParameter(f"--source must be one of {', '.join(SOURCES)}")
        opts_engine = engine(ctx, create=True)
        if no_derived_filter:
            typer.secho("warning: the derived-content filter is OFF; this is recorded in the log",
                        fg="red", err=True)
            opts_engine.settings.derived_filter = False
        results = []
        for start in range(0, len(files), IMPORT_BATCH):
            names = files[start:start + IMPORT_BATCH]
            got = opts_engine.ingest_many(Evidence(read_input(name), source, tool, {"file": name})
                                          for name in names)
            for name, result in zip(names, got):
                results.append({"file": name, **result.to_json()})
                if not ctx.find_root().obj.json:
                    typer.echo(f"{name}: {_ingest_line(result)}")
        if ctx.find_root().obj.json:
            emit(ctx, {"results": results})

    @app.command()
    def remember(ctx: typer.Context,
                 level: str = typer.Option(..., "--level", help="L1 (one failure) or L2 (general)."),
                 text: str = typer.Option(..., "--text", help="The lesson, as you'd explain it."),
                 parent: List[str] = typer.Option([], "--parent",
                                                  help="Evidence (L1) or lesson (L2) sha it rests on."),
                 supersedes: Optional[str] = typer.Option(None, "--supersedes",
                                                          help="The memory this one replaces."),
                 without_evidence: bool = typer.Option(
                     False, "--without-evidence", help="Written without citing evidence.")):
        """Propose a memory to the gate; prints its sha, the verdict and its projection."""
        result = engine(ctx, create=True).remember(level, text, parent, supersedes,
                                                   without_evidence)
        emit(ctx, result.to_json(), lambda: _remember_line(result))
        if result.verdict == "rejected":
            raise typer.Exit(1)

    @app.command("import")
    def import_(ctx: typer.Context,
                file: str = typer.Argument(..., help="JSONL file, or - for stdin."),
                skip_invalid: bool = typer.Option(
                    False, "--skip-invalid",
                    help="Import the valid lines and report the others (default: refuse "
                         "the whole file, writing nothing).")):
        """Bulk-import memories from JSONL (see docs/CLI.md for the line format)."""
        parsed = parse_import(read_input(file))
        if parsed.errors and not skip_invalid:
            raise InputError(f"{file}: {len(parsed.errors)} invalid line(s), nothing "
                             "imported (--skip-invalid imports the others): "
                             + "; ".join(parsed.errors[:20]))
        for error in parsed.errors:
            typer.echo(f"mem: skipped {error}", err=True)
        items = parsed.items
        eng = engine(ctx, create=True)
        counts: dict[str, int] = {}
        shas = []
        with progress_bar() as bar:
            task = bar.add_task("importing", total=len(items))
            for start in range(0, len(items), IMPORT_BATCH):
                part = items[start:start + IMPORT_BATCH]
                ingested = iter(eng.ingest_many(
                    Evidence(evidence, item.get("source") or "note", item.get("tool"))
                    for item in part for evidence in item["evidence"]))
                proposals = []
                for item in part:
                    parents = list(item["parents"])
                    for got in (next(ingested) for _ in item["evidence"]):
                        if got.evidence_sha:
                            parents.append(got.evidence_sha)
                    proposals.append(Proposal(
                        item.get("level", "L1"), item["text"], parents, item.get("supersedes"),
                        not parents, item.get("project"), item.get("tool")))
                for item, result in zip(part, eng.remember_many(proposals)):
                    counts[result.verdict] = counts.get(result.verdict, 0) + 1
                    shas.append({"id": item.get("id"), "sha": result.sha,
                                 "verdict": result.verdict, "reason": result.reason})
                bar.update(task, advance=len(part))
            if counts.get("accepted"):
                bar.add_task("indexing full text", total=None)
                eng.settle()
        emit(ctx, {"counts": counts, "memories": shas, "skipped": parsed.errors},
             lambda: f"imported {len(items)} memories: "
             + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
             + (f"; skipped {len(parsed.errors)} invalid line(s)" if parsed.errors else ""))

    @app.command()
    def search(ctx: typer.Context,
               query: str = typer.Argument(..., help="Text to search for."),
               kind: str = typer.Option("both", "--kind", help="text|symptom|both"),
               limit: int = typer.Option(10, "--limit", min=1, max=200)):
        """Raw tier-2 vector search with scores (inspection and evaluation)."""
        hits = engine(ctx).search(query, kind=kind, limit=limit)
        emit(ctx, {"hits": hits}, lambda: "\n".join(
            f"{h['score']:.3f}  {h['matched_kind']:<7} {h['level']} {h['sha'][:12]}  "
            f"{h['text'][:100]}" for h in hits) or "no hits")

