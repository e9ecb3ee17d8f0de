"""The extension's pure logic (server discovery, payloads, ANSI stripping, settings),
unit tested with `node --test` (editors/vscode/test/); the .vsix as the Marketplace gets it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zipfile

from e2e_codeserver import INSTALL_HINT, NODE_BIN, VSIX
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


def test_the_vsix_ships_one_bundled_script_and_its_manifest():
    assert VSIX.is_file(), INSTALL_HINT
    with zipfile.ZipFile(VSIX) as vsix:
        names = sorted(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
        readme = vsix.read("extension/readme.md").decode()
    assert names == ["[Content_Types].xml", "extension.vsixmanifest", "extension/dist/extension.js",
                     "extension/package.json", "extension/readme.md"], names
    assert manifest["main"] == "./dist/extension.js"
    settings = manifest["contributes"]["configuration"]["properties"]
    for name, spec in settings.items():   # the Marketplace shows each with its description
        assert spec.get("description") or spec.get("markdownDescription"), name
        assert f"`{name}`" in readme, f"{name} is not in the extension's README"
