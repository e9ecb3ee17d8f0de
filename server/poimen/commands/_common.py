"""What every `mem` subcommand shares: the engine for this call, output, errors."""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
from pathlib import Path
from typing import Callable, NoReturn

import typer

from ..config import Settings


class Options:
    """The global options (`--vault`, `--project`, `--json`), carried in `ctx.obj`."""

    def __init__(self, vault: str | None, project: str | None, json_output: bool):
        self.vault, self.project, self.json = vault, project, json_output
        self.settings = Settings.from_env()
        self._engine = None

    def engine(self, create: bool = False, embedder=None):
        if self._engine is None:
            from ..engine import Engine

            self._engine = Engine(self.vault, self.project, self.settings, create=create,
                                  embedder=embedder)
        return self._engine


def options(ctx: typer.Context) -> Options:
    return ctx.find_root().obj


def engine(ctx: typer.Context, create: bool = False, embedder=None):
    """The command's engine; `embedder`: one a server already started loading."""
    return options(ctx).engine(create=create, embedder=embedder)


def emit(ctx: typer.Context, data, human: Callable[[], str] | str | None = None) -> None:
    """JSON with `--json` (stable shapes, see docs/CLI.md), else the human text."""
    if options(ctx).json or human is None:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        text = human() if callable(human) else human
        sys.stdout.write(text.rstrip("\n") + "\n")


def read_input(path: str) -> str:
    """The text of a file or any readable stream (a fifo, `/dev/fd/N`, `-` for standard
    input); bytes that are not UTF-8 are replaced. A folder or a missing file is an
    InputError (one line: `mem: error: …`)."""
    from ..engine import InputError

    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    file = Path(path)
    if file.is_dir():
        raise InputError(f"{path} is a folder, not a file")
    try:
        with open(file, "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None


LOG_LEVELS = ("debug", "info", "warning", "error")


def server_logging(log_file: Path | None, log_level: str) -> logging.Logger:
    """A stdio server's logging: one handler (the file, else stderr: stdout is the
    protocol), at `log_level`; returns the root logger."""
    if log_level.lower() not in LOG_LEVELS:
        raise typer.BadParameter(f"--log-level must be one of {', '.join(LOG_LEVELS)}")
    handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(log_level.upper())
    return root


def leave(code: int) -> NoReturn:
    """End a stdio server's process: the exit handlers run (pending occurrences applied, a
    team vault pushed, logs flushed), then the process exits without the interpreter's
    finalisation, where LanceDB's native runtime, torn down while a warm-up thread still
    uses it, could abort the process (exit -6/-11; docs/RELIABILITY.md)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (OSError, ValueError):   # closed by the client already
            pass
    os._exit(code)
