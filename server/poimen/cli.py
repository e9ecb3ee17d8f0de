"""`mem`: the command-line adapter. Subcommands live in `poimen.commands`."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Optional

import typer

from . import commands
from .edge import SURROGATE
from .commands._common import Options

app = typer.Typer(
    name="mem", no_args_is_help=True, add_completion=False,
    help="poimen remembers how software failures were fixed.\n\n"
         "Record failures and lessons, then ask what is known about an error: "
         "answers say which tier they come from (1 exact, 2 similar, 3 reference).")

GLOBAL_FLAGS = {"--json": 0, "--vault": 1, "--project": 1}


@app.callback()
def _globals(
    ctx: typer.Context,
    vault: Optional[str] = typer.Option(
        None, "--vault", envvar="POIMEN_VAULT",
        help="Vault folder, s3://bucket/prefix or az://container/prefix (default $XDG_DATA_HOME/poimen)."),
    project: Optional[str] = typer.Option(
        None, "--project", help="Project name (default: the git root's name)."),
    json_output: bool = typer.Option(False, "--json", help="Print stable JSON."),
):
    ctx.obj = Options(vault, project, json_output)


for _module in sorted(m.name for m in pkgutil.iter_modules(commands.__path__)):
    if not _module.startswith("_"):
        importlib.import_module(f"{commands.__name__}.{_module}").register(app)


def hoist_globals(argv: list[str]) -> list[str]:
    """Let global options stand anywhere before `--` (`mem ingest --json f.log`)."""
    head, rest = [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        name = arg.split("=", 1)[0]
        if name in GLOBAL_FLAGS:
            takes = GLOBAL_FLAGS[name] and "=" not in arg
            head.extend(argv[i:i + 1 + takes])
            i += 1 + takes
            continue
        rest.append(arg)
        i += 1
    return head + rest


def main(argv: list[str] | None = None) -> None:
    from .config import SettingsError
    from .embed import EmbedderUnavailable
    from .engine import InputError
    from .log import LogCorrupt
    from .vault import VaultError

    args = hoist_globals(list(sys.argv[1:] if argv is None else argv))
    for number, arg in enumerate(args, 1):
        if SURROGATE.search(arg):   # bytes that were not UTF-8 (decoded with surrogateescape)
            sys.stderr.write(f"mem: error: argument {number} is not valid UTF-8: "
                             f"{arg.encode('utf-8', 'surrogateescape')[:60]!r}\n")
            sys.exit(2)
    try:
        app(args, prog_name="mem", standalone_mode=True)
    except (InputError, VaultError, LogCorrupt, EmbedderUnavailable, SettingsError,
            OSError) as exc:
        sys.stderr.write(f"mem: error: {exc}\n")
        sys.exit(2)
    except KeyboardInterrupt:
        sys.stderr.write("mem: interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
