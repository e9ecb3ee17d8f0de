"""`mem mcp`: the Model Context Protocol server on stdio, for coding agents."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._common import LOG_LEVELS as LEVELS, options, server_logging

HELP = (
    "Run an MCP server on stdio, for coding agents (Claude Code, Cursor, VS Code, Zed)."
    "\n\nThe agent starts this command and speaks the Model Context Protocol over its "
    "stdin and stdout; nothing else is written to stdout."
    "\n\nTools: what_do_we_know (the three-tier answer for a failure's output, a tool "
    "or a task), remember_fix (propose a lesson citing its evidence, through the memory "
    "gate), failure_signatures, show_memory. Resources: the vault's lessons, as "
    "poimen://memory/SHA."
    "\n\nVault and project: `mem --vault DIR --project NAME mcp` (or POIMEN_VAULT); "
    "the project defaults to the git root's name of the directory the agent starts it "
    "in. Configuration for each agent: docs/AGENTS.md.")


def register(app: typer.Typer) -> None:
    @app.command("mcp", help=HELP)
    def mcp(
        ctx: typer.Context,
        log_file: Optional[Path] = typer.Option(
            None, "--log-file", help="Write the server's log here (default: stderr)."),
        log_level: str = typer.Option("warning", "--log-level",
                                      help=f"One of {', '.join(LEVELS)}."),
    ):
        server_logging(log_file, log_level)

        from ..mcp_server import build

        opts = options(ctx)
        build(lambda: opts.engine(create=True)).run("stdio")
