"""Installable outside the repo: a wheel built from the repo, installed in a fresh venv
outside it, runs `mem demo` and `mem lsp`; prompts, the symptom catalogue, the fusion
weights and the model files are found through package resources, not the checkout."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import client_capabilities, make_test_lsp_client

from poimen.commands.demo import FIRST_FAILURE

REPO = Path(__file__).resolve().parents[1]


def run(*cmd, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=clean_env(), text=True,
                          capture_output=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def clean_env() -> dict:
    """This process's environment less anything pointing Python at the checkout."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("POIMEN_")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("wheel")
    assert REPO not in root.resolve().parents
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", root / "dist", REPO,
        cwd=root)
    wheel, = (root / "dist").glob("poimen-*.whl")
    run(sys.executable, "-m", "venv", root / "venv", cwd=root)
    run(root / "venv" / "bin" / "pip", "install", "-q", wheel, cwd=root)
    yield {"root": root, "bin": root / "venv" / "bin", "vault": root / "vault"}
    shutil.rmtree(root / "venv")   # some 700 MB of dependencies


@pytest.fixture(scope="module")
def demo(installed) -> str:
    return run(installed["bin"] / "mem", "--vault", installed["vault"], "demo",
               cwd=installed["root"]).stdout


def test_poimen_is_imported_from_the_fresh_venv(installed):
    where = run(installed["bin"] / "python", "-c", "import poimen; print(poimen.__file__)",
                cwd=installed["root"]).stdout.strip()
    assert Path(where).is_relative_to(installed["root"] / "venv"), where
    assert "what_do_we_know" in run(installed["bin"] / "mem", "mcp", "--help",
                                    cwd=installed["root"]).stdout


def test_mem_demo_runs_from_the_wheel(demo):
    projected = next(line for line in demo.splitlines() if "symptom projection:" in line)
    assert int(projected.split(":")[1].split()[0]) > 0   # the packaged catalogue
    assert "Tier 1 · seen 2×" in demo                     # signatures, the store
    assert "Tier 2 · similar (symptom" in demo            # the packaged model, fusion weights


def test_mem_lsp_runs_from_the_wheel(installed, demo):
    async def hover() -> str:
        client = make_test_lsp_client()
        await client.start_io(str(installed["bin"] / "mem"), "lsp", cwd=installed["root"],
                              env=clean_env())
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("neovim"),
            initialization_options={"vault": str(installed["vault"]), "project": "demo",
                                    "legTimeoutS": 60, "debounceMs": 0}))
        uri = from_fs_path(str(installed["root"] / "build.log"))
        rng = types.Range(types.Position(1, 0), types.Position(1, 20))
        client.protocol.notify("poimen/diagnostics", {"uri": uri, "diagnostics": [
            {"range": client.protocol._converter.unstructure(rng), "severity": 1,
             "source": "webpack", "message": FIRST_FAILURE}]})
        result = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=rng.start))
        await client.shutdown_session()
        await client.stop()
        return result.contents.value if result else ""
    card = asyncio.run(asyncio.wait_for(hover(), 300))
    assert card.startswith("Tier 1"), card
    assert "webpack 5" in card
