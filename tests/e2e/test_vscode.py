"""Real VS Code (code-server from npm) driven by Debian's headless Chromium.

The extension is installed from the built .vsix. Its test-only activation path
(POIMEN_E2E_PLAN, see editors/vscode/src/e2e.ts) acts inside the extension host like a
user: another extension's diagnostic, `vscode.executeHoverProvider`, the code action
"What do we know about this error?", a failing command in the integrated terminal.
The test takes screenshots when the driver says a view is on screen."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

from e2e_browser import Browser
from e2e_codeserver import CodeServer
from e2e_support import APP_FAILING_LINE, ARTIFACTS, MEM, editor_env, read_results

SHOTS = {"hover-shown": "vscode-hover.png", "answer-shown": "vscode-answer.png",
         "remember-prompt": "vscode-remember.png", "terminal-shown": "vscode-terminal.png"}
LESSON = ("On 3.12 the old import-hooks module is gone from the standard library: port the "
          "loader to importlib (util.spec_from_file_location, then module_from_spec).")
DEADLINE_S = 420  # a bound on the whole run, so a hung editor fails instead of hanging CI


def drive(server: CodeServer, browser: Browser, results: Path, acks: Path) -> dict[str, dict]:
    """Take the screenshots the driver asks for until it is done, or fails, or the bound passes."""
    deadline = time.monotonic() + DEADLINE_S
    shot = set()
    while time.monotonic() < deadline:
        steps = read_results(results)
        for step, name in SHOTS.items():
            if step in steps and step not in shot:
                if step == "remember-prompt":  # the lesson, into the input box the command opened
                    browser.insert_text(LESSON)
                    time.sleep(0.5)
                browser.screenshot(ARTIFACTS / name)
                if step == "remember-prompt":
                    browser.press_enter()
                (acks / step).touch()
                shot.add(step)
        if "done" in steps or "error" in steps:
            return steps
        assert server.proc.poll() is None, "code-server exited"
        time.sleep(0.25)
    return read_results(results)


def test_vscode_extension_forwards_hovers_and_answers(seeded, tmp_path):
    results, acks = tmp_path / "results.jsonl", tmp_path / "acks"
    acks.mkdir()
    server_log = tmp_path / "server.log"
    answers = tmp_path / "answers"
    plan = {
        "results": str(results), "acks": str(acks), "timeoutMs": 90_000,
        "document": str(seeded.document),
        "diagnostic": {"range": {"start": {"line": seeded.diagnostic["line"],
                                           "character": seeded.diagnostic["col"]},
                                 "end": {"line": seeded.diagnostic["line"],
                                         "character": seeded.diagnostic["end_col"]}},
                       "message": seeded.diagnostic["message"], "source": seeded.diagnostic["source"]},
        "terminal": {"command": shlex.join(seeded.command), "cwd": str(seeded.workspace),
                     "frameDocument": str(seeded.app)},
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    settings = {
        "poimen.server.path": str(MEM), "poimen.vault": str(seeded.vault),
        "poimen.project": seeded.project, "poimen.answersDir": str(answers),
        "poimen.debounceMs": 50,
        "poimen.server.args": ["--log-file", str(server_log), "--log-level", "info"],
        "security.workspace.trust.enabled": False, "workbench.startupEditor": "none",
        "telemetry.telemetryLevel": "off", "update.mode": "none", "extensions.autoUpdate": False,
        "terminal.integrated.shellIntegration.enabled": True, "workbench.tips.enabled": False,
        "editor.hover.delay": 100, "editor.fontSize": 15, "chat.disableAIFeatures": True,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
    }
    env = editor_env(tmp_path / "home") | {"POIMEN_E2E_PLAN": str(tmp_path / "plan.json")}
    server = CodeServer(tmp_path / "code-server", settings, env)
    installed = server.install()
    assert "poimen.poimen@0.1.0" in installed, installed
    shipped = sorted(p.relative_to(server.extensions).as_posix()
                     for p in server.extensions.rglob("*.js"))
    assert shipped == ["poimen.poimen-0.1.0/dist/extension.js"], shipped   # the one bundle
    server.start()
    browser = Browser(server.url(seeded.workspace), tmp_path / "chromium", tmp_path / "chromium.log")
    try:
        steps = drive(server, browser, results, acks)
        if "error" in steps or "done" not in steps:
            browser.screenshot(ARTIFACTS / "vscode-failure.png")
    finally:
        browser.close()
        server.stop()
    (ARTIFACTS / "vscode-results.json").write_text(json.dumps(steps, indent=2))
    log = server_log.read_text(errors="replace")[-4000:] if server_log.exists() else ""
    assert "error" not in steps, f"{steps['error']['message']}\nserver log:\n{log}"
    assert "done" in steps, f"driver stopped at {sorted(steps)}\n{server.log.read_text()[-3000:]}"

    assert steps["ready"]["server"] == {"command": str(MEM), "origin": "setting"}
    # another extension's diagnostic was forwarded: the hover provider returns the card
    card = steps["hover"]["markdown"]
    assert card.startswith("Tier 1 · seen"), card
    assert " ".join(seeded.case["memory"].split())[:80] in " ".join(card.split())
    # the code action ran the command, which opened the full answer
    assert "What do we know about this error?" in steps["code-actions"]["titles"]
    assert "Remember how this was fixed…" in steps["code-actions"]["titles"]
    answer = steps["answer"]
    assert answer["uri"].startswith(answers.as_uri()), answer["uri"]
    assert answer["text"].startswith("# Tier 1") and "No module named 'imp'" in answer["text"]
    # the Remember code action asked for the lesson (typed into its input box) and recorded it
    assert steps["remember"]["verdict"] in ("accepted", "reinforced"), steps["remember"]
    assert steps["remember"]["parents"], steps["remember"]
    # the failing terminal command was forwarded with its exit code and answered
    assert steps["terminal-end"]["exitCode"] == 1
    own = steps["terminal-answer"]["diagnostics"]
    assert any(d["line"] == APP_FAILING_LINE and d["message"].startswith("Tier 1") for d in own), own
    assert steps["terminal-answer"]["hover"].startswith("Tier 1")
    assert "make settings" in steps["terminal-answer"]["hover"]
    for name in SHOTS.values():
        assert (ARTIFACTS / name).stat().st_size > 20_000  # a painted workbench, not a blank page
