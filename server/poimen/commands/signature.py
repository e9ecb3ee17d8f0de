"""`mem signature FILE|- [--tool T] [--json]`: the failure signatures in some output, with
the normalised text each hash covers, so a person can see why two failures match or not."""

from __future__ import annotations

from typing import Optional

import typer

from ..signatures import extract
from ._common import emit, options, read_input


def human(sigs) -> str:
    if not sigs:
        return "no failure signature found (no rule matched a failure line)"
    blocks = []
    for n, sig in enumerate(sigs, 1):
        frames = "".join(f"\n    at {f}" for f in sig.frames)
        excerpt = "\n".join("    | " + t for t in sig.excerpt.splitlines()[:6])
        blocks.append(f"{n}. {sig.tool} {sig.kind}   sig {sig.sig_sha[:16]}   "
                      f"family {sig.family}\n   rule {sig.rule}, input line {sig.line + 1}\n"
                      f"   normalised: {sig.message}{frames}\n{excerpt}")
    return "\n\n".join(blocks)


def register(app: typer.Typer) -> None:
    @app.command()
    def signature(ctx: typer.Context,
                  source: str = typer.Argument(..., metavar="FILE|-",
                                               help="A log file, or - for standard input."),
                  tool: Optional[str] = typer.Option(
                      None, "--tool", help="Tool hint (npm, cargo, …): its signatures first; "
                      "never changes a sig_sha."),
                  limit: int = typer.Option(8, "--limit", min=1, help="At most this many."),
                  json_output: bool = typer.Option(False, "--json", help="Print stable JSON.")):
        """Extracted failure signatures: tool, kind, sig_sha and the normalised text."""
        if json_output:
            options(ctx).json = True
        sigs = extract(read_input(source), tool=tool, limit=limit)
        emit(ctx, {"signatures": [s.to_dict() for s in sigs]}, lambda: human(sigs))
