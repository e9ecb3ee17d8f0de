"""`mem sync`, `mem push`: a team vault on an object store (see docs/TEAM.md)."""

from __future__ import annotations

import typer

from ..vault import VaultError
from ._common import emit, engine


def _team(ctx: typer.Context):
    vault = engine(ctx).vault
    if not hasattr(vault, "sync"):
        raise VaultError("this vault is a folder; give --vault s3://bucket/prefix or az://container/prefix")
    return vault


def register(app: typer.Typer) -> None:
    @app.command()
    def sync(ctx: typer.Context):
        """Pull the other writers' records into this machine's copy and push ours."""
        vault = _team(ctx)
        result = vault.sync()
        result["pulled"] += vault.opened["pulled"]   # the sync when the vault opened
        result["pushed_chunks"] += vault.opened["pushed_chunks"]
        emit(ctx, result, lambda: (
            f"pulled {result['pulled']} records, pushed {result['pushed_chunks']} chunks"
            if result["ok"] else f"store unreachable: {result['error']}; "
            "this machine's writes are kept and pushed on the next sync")
            + "".join(f"\nproblem: {p}" for p in result["problems"]))
        if not result["ok"] or result["problems"]:
            raise typer.Exit(1)

    @app.command()
    def push(ctx: typer.Context,
             folder: str = typer.Argument(..., help="A folder vault to copy into the team vault.")):
        """Move a folder vault into the team vault given by --vault (records keep their
        time and sha; what the team vault already holds is skipped)."""
        vault = _team(ctx)
        added = vault.adopt(folder)
        last = vault.sync()
        emit(ctx, {"added": added, "sync": last}, lambda: (
            f"copied {added} records into {vault.uri}; "
            + ("pushed" if last["ok"] else f"not pushed yet ({last['error']})")))
        if not last["ok"]:
            raise typer.Exit(1)
