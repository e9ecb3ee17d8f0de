"""`mem symptoms show SHA`: a memory's symptom projection, its lines' origins, model id, prompt sha."""

from __future__ import annotations

import sys

import typer

from ._common import emit, engine


def _human(projection: dict) -> str:
    lines = [f"memory      {projection['memory_sha']}",
             f"model id    {projection['model_id']}",
             f"prompt sha  {projection['prompt_sha']}",
             f"projection  {projection['projection_sha']}"]
    if not projection["lines"]:
        lines.append("(empty projection: this memory explains no failure the generator knows)")
    lines += [f"  [{line['origin']}] {line['text']}" for line in projection["lines"]]
    lines += [f"  dropped ({reason}): {text}" for text, reason in projection["dropped"]]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    symptoms = typer.Typer(no_args_is_help=True, help="Symptom projections of memories.")
    app.add_typer(symptoms, name="symptoms")

    @symptoms.command("show")
    def show(ctx: typer.Context, sha: str = typer.Argument(..., help="The memory's sha.")):
        """Print a memory's projection: lines with origins, model id, prompt sha."""
        projection = engine(ctx).symptoms(sha.strip())
        if projection is None:
            sys.stderr.write(f"mem: error: no symptom projection for {sha!r} "
                             "(unknown sha, or not an accepted L1/L2 memory)\n")
            raise typer.Exit(1)
        emit(ctx, projection, lambda: _human(projection))
