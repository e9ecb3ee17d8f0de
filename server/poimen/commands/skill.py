"""`mem skill draft`: emit a markdown skill from chosen memories."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ._common import emit, engine


def register(app: typer.Typer) -> None:
    skill = typer.Typer(no_args_is_help=True, help="Skills: artifacts promoted from memories.")
    app.add_typer(skill, name="skill")

    @skill.command("draft")
    def draft(ctx: typer.Context,
              name: str = typer.Option(..., "--name", help="Skill name (file name)."),
              shas: List[str] = typer.Option(..., "--from", help="A memory sha (repeat)."),
              title: Optional[str] = typer.Option(None, "--title", help="Heading."),
              out: Optional[Path] = typer.Option(None, "--out",
                                                 help="Also write the markdown here.")):
        """Write <vault>/skills/NAME.md and record it in the artifact manifest."""
        from ..skills import SkillError, draft as draft_skill

        try:
            made = draft_skill(engine(ctx).vault, name, shas, title)
        except SkillError as exc:
            sys.stderr.write(f"mem: error: {exc}\n")
            raise typer.Exit(2)
        if out is not None:
            out.write_text(made.text, encoding="utf-8")
        emit(ctx, {"name": made.name, "path": str(made.path), "sha": made.sha,
                   "sources": list(made.sources), "text": made.text},
             lambda: f"{made.path}\n\n{made.text}")
