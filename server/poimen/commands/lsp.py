"""`mem lsp`: the language server on stdio (stdout is the protocol: nothing else goes there)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Optional

import typer

from ._common import LOG_LEVELS as LEVELS, leave, options, server_logging


def register(app: typer.Typer) -> None:
    @app.command("lsp")
    def lsp(
        ctx: typer.Context,
        log_file: Optional[Path] = typer.Option(
            None, "--log-file", help="Write the server's log here (default: stderr)."),
        log_level: str = typer.Option("warning", "--log-level",
                                      help=f"One of {', '.join(LEVELS)}."),
        stdio: bool = typer.Option(False, "--stdio", hidden=True,
                                   help="Accepted for editors that pass it; stdio is the only transport."),
    ):
        """Run the language server on stdio (editors start this)."""
        from ..heap import limit_arenas

        limit_arenas()   # before any thread of the server's is made
        root = server_logging(log_file, log_level)
        logging.getLogger("pygls").setLevel(max(logging.WARNING, root.level))

        from ..lsp.server import build
        from ..lsp.settings import Settings

        opts = options(ctx)
        defaults = Settings(vault=str(opts.vault) if opts.vault else None, project=opts.project)
        protocol_out = sys.stdout.buffer
        sys.stdout = sys.stderr  # a stray print must never corrupt the protocol stream
        leave(build(defaults).start_io(sys.stdin.buffer, protocol_out))
