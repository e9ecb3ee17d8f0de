"""Where the vault is, which project we are in, and the engine's settings."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .team.objects import is_remote


def missing_vault(location) -> str | None:
    """Why no vault is at a folder `location` (None when one is, or for a team vault's
    URI, which only opening it tells)."""
    if is_remote(location) or (Path(location).expanduser() / "log").is_dir():
        return None
    return f"no vault at {Path(location).expanduser()} (run `mem init` first)"


def default_vault() -> Path | str:
    """`POIMEN_VAULT` (a folder, an `s3://` or `az://` URI), else `$XDG_DATA_HOME/poimen` (one
    vault for all projects)."""
    if os.environ.get("POIMEN_VAULT"):
        if is_remote(os.environ["POIMEN_VAULT"]):
            return os.environ["POIMEN_VAULT"]
        return Path(os.environ["POIMEN_VAULT"]).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "poimen"


def default_project(cwd: Path | None = None) -> str:
    """The git root's name, else the folder's name."""
    cwd = Path(cwd or Path.cwd())
    try:
        root = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd,
                              capture_output=True, text=True, timeout=5, check=False)
        if root.returncode == 0 and root.stdout.strip():
            return Path(root.stdout.strip()).name
    except (OSError, subprocess.SubprocessError):
        pass
    return cwd.resolve().name or "default"


DEFAULT_LEG_TIMEOUT_S = 2.0  # how long a lookup leg may take before its answer is left out
MAX_LEG_TIMEOUT_S = 600.0    # the longest a lookup leg may be given, whichever adapter sets it


class SettingsError(ValueError):
    """An environment setting that cannot be used; the message names it."""


@dataclass
class Settings:
    """Engine settings; adapters parse their own options into this."""

    generator: dict = field(default_factory=lambda: {"backend": "embedded"})
    budget: int = 1200
    derived_filter: bool = True
    derived_thresholds: dict = field(default_factory=dict)
    near_duplicate: float = 0.95
    leg_timeout_s: float = DEFAULT_LEG_TIMEOUT_S
    fault_injection: dict = field(default_factory=dict)  # leg -> "fail" | "delay:<s>"

    @classmethod
    def from_env(cls) -> "Settings":
        settings = cls()
        if os.environ.get("POIMEN_GENERATOR"):
            settings.generator = {"backend": os.environ["POIMEN_GENERATOR"],
                                  "url": os.environ.get("POIMEN_GENERATOR_URL"),
                                  "model": os.environ.get("POIMEN_GENERATOR_MODEL")}
        if os.environ.get("POIMEN_DERIVED_THRESHOLDS"):  # e.g. "skill=0.85,reference=0.7"
            from .derived import parse_thresholds

            try:
                settings.derived_thresholds = parse_thresholds(
                    os.environ["POIMEN_DERIVED_THRESHOLDS"])
            except ValueError as exc:
                raise SettingsError(f"POIMEN_DERIVED_THRESHOLDS: {exc}") from None
        if os.environ.get("POIMEN_LEG_TIMEOUT_S"):
            try:
                settings.leg_timeout_s = float(os.environ["POIMEN_LEG_TIMEOUT_S"])
            except ValueError:
                raise SettingsError("POIMEN_LEG_TIMEOUT_S must be a number of seconds, "
                                 f"not {os.environ['POIMEN_LEG_TIMEOUT_S']!r}") from None
            if not 0 < settings.leg_timeout_s <= MAX_LEG_TIMEOUT_S:
                raise SettingsError("POIMEN_LEG_TIMEOUT_S must be between 0 and "
                                    f"{MAX_LEG_TIMEOUT_S:g} seconds")
        if os.environ.get("POIMEN_FAULTS"):  # e.g. "skills=fail,tier2=delay:3"
            for part in os.environ["POIMEN_FAULTS"].split(","):
                leg, _, mode = part.partition("=")
                settings.fault_injection[leg.strip()] = mode.strip() or "fail"
        return settings
