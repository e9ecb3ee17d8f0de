"""`mem serve`: the HTTP API (`POST /memory/context`), on 127.0.0.1 by default."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from ._common import engine, options


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(ctx: typer.Context,
              host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
              port: int = typer.Option(7878, "--port", min=1, max=65535),
              token: Optional[str] = typer.Option(
                  None, "--token", help="Require `Authorization: Bearer TOKEN` "
                  "(needed to bind beyond loopback; default $POIMEN_TOKEN)."),
              max_body: int = typer.Option(2 * 1024 * 1024, "--max-body", min=1,
                                           help="Request size limit in bytes.")):
        """Serve the context lookup over HTTP (OpenAPI schema at /openapi.json)."""
        from ..config import default_vault, missing_vault
        from ..embed import preload
        from ..heap import limit_arenas
        from ..http import ServeError, check_binding, serve as run

        limit_arenas()   # before any thread of the server's is made
        location = options(ctx).vault or default_vault()
        token = token or os.environ.get("POIMEN_TOKEN") or None
        try:
            check_binding(host, token)   # refused before the model starts loading
            missing = missing_vault(location)
            if missing:   # said now: the engine itself opens while the server starts
                raise ServeError(missing)
            embedder = preload()   # the model loads beside the vault's opening
            run(lambda: engine(ctx, embedder=embedder), str(location), host, port, token,
                max_body)
        except ServeError as exc:
            sys.stderr.write(f"mem: error: {exc}\n")
            raise typer.Exit(2)
