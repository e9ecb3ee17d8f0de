"""`mem run -- CMD…`: run a command, tee its output; on failure say what is known."""

from __future__ import annotations

import subprocess
import sys
import uuid
from typing import List

import typer

from ..lsp.cards import card
from ._common import emit, engine, options

OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes of output kept for ingest (the tail)


def run_and_capture(command: list[str], echo_to_stderr: bool) -> tuple[int, str]:
    """Run `command`, echoing its combined output as it arrives; returns (code, output)."""
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except FileNotFoundError:
        raise typer.BadParameter(f"command not found: {command[0]}") from None
    kept = bytearray()
    assert proc.stdout is not None
    for chunk in iter(lambda: proc.stdout.read1(65536), b""):
        (sys.stderr if echo_to_stderr else sys.stdout).buffer.write(chunk)
        kept += chunk
        if len(kept) > 2 * OUTPUT_LIMIT:
            del kept[:-OUTPUT_LIMIT]
    code = proc.wait()
    return code, bytes(kept[-OUTPUT_LIMIT:]).decode("utf-8", errors="replace")


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_extra_args": True,
                                   "ignore_unknown_options": True})
    def run(ctx: typer.Context,
            command: List[str] = typer.Argument(..., help="The command, after `--`.")):
        """Run a command and tee its output; if it fails, ingest it and print what is known."""
        code, output = run_and_capture(command, echo_to_stderr=options(ctx).json)
        if code == 0:
            raise typer.Exit(0)
        eng = engine(ctx, create=True)
        # each run is its own evidence record; the lookup leaves it out of "seen before"
        ingested = eng.ingest(output, source="terminal",
                              meta={"command": " ".join(command), "exit_code": code,
                                    "run": uuid.uuid4().hex})
        request = {"signature_source": output}
        if ingested.evidence_sha:
            request["evidence_sha"] = ingested.evidence_sha
        answer = eng.context(request)
        sys.stdout.flush()
        if options(ctx).json:
            emit(ctx, {"exit_code": code, "ingest": ingested.to_json(), "context": answer})
        else:
            sys.stderr.write("\n── poimen ─────────────────────────────\n"
                             + card(answer) + "\n" + _record_hint(answer, ingested) + "\n")
        raise typer.Exit(code)


def _record_hint(answer: dict, ingested) -> str:
    """How to record the fix, when nothing recorded explains this failure yet."""
    if any(item["tier"] == 1 for item in answer.get("lessons", ())) or \
            not ingested.evidence_sha:
        return ""
    return ("\nOnce you have fixed it, record how, so the next person finds it:\n"
            f"  mem remember --level L1 --parent {ingested.evidence_sha} "
            "--text \"what was wrong and what changed\"\n")
