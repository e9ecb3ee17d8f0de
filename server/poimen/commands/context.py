"""`mem context`: the three-tier lookup; prints exactly the HTTP response body."""

from __future__ import annotations

import logging
import sys
from typing import Optional

import typer

from ._common import engine, options, read_input


def register(app: typer.Typer) -> None:
    @app.command()
    def context(ctx: typer.Context,
                tool: Optional[str] = typer.Option(None, "--tool", help="Tool name."),
                task: Optional[str] = typer.Option(None, "--task", help="What you are doing."),
                signature_source: Optional[str] = typer.Option(
                    None, "--signature-source", help="File with error output, or - for stdin."),
                scope: Optional[str] = typer.Option(
                    None, "--scope", help="project | all-projects (default: all-projects "
                    "with a signature source, else project)."),
                budget: Optional[int] = typer.Option(None, "--budget", help="Token budget."),
                request_id: Optional[str] = typer.Option(
                    None, "--request-id", help="Idempotency key: a retry counts once.")):
        """What do we already know about this failure, tool or task?"""
        from ..lookup import BadContextRequest, encode_body

        request = {"tool": tool, "task": task, "scope": scope, "budget": budget,
                   "request_id": request_id, "project": options(ctx).project}
        if signature_source is not None:
            request["signature_source"] = read_input(signature_source)
        request = {k: v for k, v in request.items() if v is not None}
        _log_to_stderr()
        try:
            body = engine(ctx).context(request)
        except BadContextRequest as exc:
            sys.stderr.write(f"mem: error: {exc}\n")
            raise typer.Exit(2)
        sys.stdout.write(encode_body(body).decode("utf-8") + "\n")


def _log_to_stderr() -> None:
    """The lookup's one structured line per call goes to stderr."""
    logger = logging.getLogger("poimen.context")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
