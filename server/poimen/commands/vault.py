"""`mem init`, `mem stats`, `mem rebuild`, `mem verify`: the vault itself."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ._common import emit, engine, options


def progress_bar() -> Progress:
    from rich.console import Console

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True)


def salvage(ctx: typer.Context) -> list[dict]:
    """`--repair`: salvage the log before the vault opens (a bad line stops the opening);
    projection offsets are then stale, so projection.json goes and the vault rebuilds."""
    from ..config import default_vault
    from ..log import Log

    vault = options(ctx).vault
    path = (Path(vault) if vault else default_vault()).expanduser()
    repairs = Log(path / "log").salvage() if (path / "log").is_dir() else []
    if repairs:
        (path / "projection.json").unlink(missing_ok=True)
    return repairs


def _team_lines(team: dict | None) -> list[str]:
    if not team:
        return []
    last = team["last_sync"]
    lines = [f"team        writer {team['writer']}, local copy {team['local_copy']}",
             f"last sync   {last.get('at', 'never')} "
             + ("ok" if last.get("ok") else f"failed: {last.get('error', '')}"),
             f"unpushed    {team['unpushed_bytes']} bytes"
             + ("" if team["reachable"] else " (store unreachable now)")]
    for writer, info in sorted(team["writers"].items()):
        lines.append(f"  {writer:<20} pulled {info['pulled_chunks']} of "
                     f"{info.get('store_chunks', '?')} chunks")
    return lines


def register(app: typer.Typer) -> None:
    @app.command()
    def init(ctx: typer.Context):
        """Create a vault (or open an existing one) and say where it is."""
        eng = engine(ctx, create=True)
        where = getattr(eng.vault, "uri", str(eng.vault.path))
        emit(ctx, {"vault": where, "project": eng.project},
             f"vault ready at {where} (project {eng.project})")

    @app.command()
    def stats(ctx: typer.Context):
        """Counts of memories per level, vectors, signatures and log size."""
        data = engine(ctx).stats()
        emit(ctx, data, lambda: "\n".join(
            [f"vault       {data['vault']}",
             "memories    " + "  ".join(f"{k} {v}" for k, v in data["memories"].items()),
             f"superseded  {data['superseded']}",
             "vectors     " + "  ".join(f"{k} {v}" for k, v in data["vectors"].items()),
             f"signatures  {data['signatures']}   occurrences {data['occurrences']}",
             f"log         {data['log_records']} records, {data['log_bytes']} bytes"]
            + _team_lines(data.get("team"))))

    @app.command()
    def rebuild(ctx: typer.Context,
                from_log: bool = typer.Option(False, "--from-log",
                                              help="Drop every projection and replay the log.")):
        """Recreate every projection (tables, symptom vectors, indexes) from the log."""
        if not from_log:
            raise typer.BadParameter("say --from-log: rebuilding always replays the log")
        eng = engine(ctx)
        with progress_bar() as bar:
            task = bar.add_task("rebuilding", total=None)
            result = eng.rebuild(lambda done, total: bar.update(task, completed=done,
                                                               total=total))
        emit(ctx, result, lambda: f"rebuilt from {result['records']} log records; "
             + (f"{len(result['projection_drift'])} symptom projections differ from the log "
                "(generator changed): " + ", ".join(result["projection_drift"])
                if result["projection_drift"] else "projections match the log"))

    @app.command()
    def verify(ctx: typer.Context,
               derived_filter: bool = typer.Option(
                   False, "--derived-filter",
                   help="Also check that no evidence matches an emitted artifact."),
               repair: bool = typer.Option(
                   False, "--repair",
                   help="Move unreadable log lines to log/torn/, keep every good record, "
                        "rebuild the projections.")):
        """Check log integrity (every sha) and that projections hold what the log says."""
        salvaged = salvage(ctx) if repair else []
        eng = engine(ctx)
        problems = eng.vault.verify()
        if derived_filter:
            problems += eng.derived_violations()
        data = {"ok": not problems, "problems": problems}
        if repair:
            data["salvaged"] = salvaged
        emit(ctx, data, lambda: "\n".join(
            [f"moved unreadable record at byte {r['offset']} of {r['segment']} to log/torn/"
             for r in salvaged] + (["vault ok"] if not problems else
                                   [f"problem: {p}" for p in problems])))
        if problems:
            raise typer.Exit(1)

