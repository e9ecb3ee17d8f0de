"""What the real-editor tests share: a workspace with a failing program and a
vault seeded through the real `mem` CLI (one lesson from the repo's dev corpus, one
about the workspace's own failure, each with its evidence as parent)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import dev_rows  # noqa: E402

BIN = Path(sys.executable).parent
MEM = BIN / "mem"
ARTIFACTS = Path(__file__).parent / "artifacts"
CASE = "py-python312-removed-imp-module"   # a dev corpus row (tests/dev_rows.py)
PROJECT = "shop"

APP = '''"""Load the service settings and print the service name."""
import json


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


print(load("settings.json")["name"])
'''
APP_FAILING_LINE = 9  # 0-based: the `print(load(...))` line, the traceback's outer frame
TEST_FILE = '''def test_loader(tmpdir):
    import imp
    assert imp
'''
SETTINGS_LESSON = ("The service reads settings.json from the working directory, and that file is "
                   "generated, not committed: run `make settings` (it renders settings.json from "
                   "settings.example.json) before starting the service or its tests.")


@dataclass(frozen=True)
class Seeded:
    vault: Path
    workspace: Path
    project: str
    case: dict               # the data-set case whose lesson answers the diagnostic
    document: Path           # the file the other source's diagnostic is on
    diagnostic: dict         # {line, col, end_col, message, source}
    app: Path                # the program that fails in the terminal
    command: list[str]       # how the terminal runs it
    terminal_lesson: str


def mem(vault: Path, *args: str, stdin: str | None = None) -> dict:
    """Run the real `mem` CLI with --json and return what it printed."""
    proc = subprocess.run([str(MEM), "--vault", str(vault), "--project", PROJECT, "--json", *args],
                          input=stdin,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"mem {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout)


def remember_with_evidence(vault: Path, evidence: str, lesson: str) -> str:
    ingested = mem(vault, "ingest", "--source", "terminal", "-", stdin=evidence)
    sha = ingested["results"][0]["evidence_sha"]
    assert sha, ingested
    remembered = mem(vault, "remember", "--level", "L1", "--text", lesson, "--parent", sha)
    assert remembered["verdict"] == "accepted", remembered
    return remembered["sha"]


def editor_env(home: Path) -> dict:
    """The environment for an editor process: private XDG folders, no inherited vault."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("POIMEN_")}
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        path = home / name.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[f"XDG_{name}_HOME"] = str(path)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def seed(root: Path) -> Seeded:
    vault, workspace = root / "vault", root / "shop"
    workspace.mkdir()
    app = workspace / "app.py"
    app.write_text(APP, encoding="utf-8")
    document = workspace / "test_loader.py"
    document.write_text(TEST_FILE, encoding="utf-8")
    case = dev_rows.row(CASE)
    remember_with_evidence(vault, case["evidence"], case["memory"])
    # the workspace program's own failure, produced for real once, remembered with its fix
    command = [sys.executable, "app.py"]
    run = subprocess.run(command, cwd=workspace, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "FileNotFoundError" in run.stderr, run
    remember_with_evidence(vault, run.stdout + run.stderr, SETTINGS_LESSON)
    line = TEST_FILE.splitlines()[1]
    diagnostic = {"line": 1, "col": line.index("import"), "end_col": len(line),
                  "message": "ModuleNotFoundError: No module named 'imp'", "source": "pytest"}
    ARTIFACTS.mkdir(exist_ok=True)
    return Seeded(vault, workspace, PROJECT, case, document, diagnostic, app, command,
                  SETTINGS_LESSON)


def first_line(lines: list[str]) -> str:
    return next((line.strip() for line in lines if line.strip()), "")


def read_results(path: Path) -> dict[str, dict]:
    """Steps by name (the last of each) from a driver's JSON-lines results file."""
    steps: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                steps[record["step"]] = record
    return steps
