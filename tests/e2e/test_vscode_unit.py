"""The extension's pure logic (server discovery, payloads, ANSI stripping, settings),
unit tested with `node --test` (editors/vscode/test/)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from e2e_codeserver import INSTALL_HINT, NODE_BIN
from e2e_support import REPO

EXTENSION = REPO / "editors" / "vscode"


def test_extension_unit_tests_pass():
    assert (EXTENSION / "node_modules").is_dir(), INSTALL_HINT
    env = os.environ | {"PATH": f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}"}
    npm = shutil.which("npm", path=env["PATH"])
    assert npm, "npm is not installed"
    proc = subprocess.run([npm, "test", "--silent"], cwd=EXTENSION, env=env, capture_output=True,
                          text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    passed = re.search(r"^ℹ pass (\d+)$", out, re.M)
    failed = re.search(r"^ℹ fail (\d+)$", out, re.M)
    assert passed and int(passed.group(1)) >= 20 and failed and failed.group(1) == "0", out
