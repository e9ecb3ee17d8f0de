"""`mem ref add PATH…`: import documentation as R reference chunks (tier 3)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List

import typer

from ._common import emit, engine, options


def register(app: typer.Typer) -> None:
    ref = typer.Typer(no_args_is_help=True, help="The R reference corpus (tier 3).")
    app.add_typer(ref, name="ref")

    @ref.command("add")
    def add(ctx: typer.Context,
            paths: List[Path] = typer.Argument(..., help="Markdown, rst or text files, "
                                               "or folders of them.")):
        """Chunk documents by heading and import the chunks as R nodes."""
        from ..references import ReferenceImportError, add as add_references

        eng = engine(ctx)
        try:
            chunks = add_references(eng.vault, paths, options(ctx).project or eng.project)
        except ReferenceImportError as exc:
            sys.stderr.write(f"mem: error: {exc}\n")
            raise typer.Exit(2)
        new = sum(c["new"] for c in chunks)
        emit(ctx, {"chunks": chunks, "new": new},
             lambda: "\n".join([f"{c['sha'][:12]} {'new ' if c['new'] else 'known'} "
                                f"{c['heading']}" for c in chunks]
                               + [f"{new} new of {len(chunks)} chunks"]))
