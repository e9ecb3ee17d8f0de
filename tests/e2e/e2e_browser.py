"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
commands on fd 3, replies on fd 4, each JSON message ending in NUL). No websocket library,
and nothing listens on a port."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--remote-debugging-pipe"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium is not installed (bash .ci/install-editors.sh installs it)"
    return found


class Browser:
    def __init__(self, url: str, profile: Path, log: Path, size: tuple[int, int] = (1400, 900)):
        cmd_read, self._cmd_write = os.pipe()
        self._reply_read, reply_write = os.pipe()
        # bash moves the pipe ends onto fds 3 and 4 and then becomes chromium
        script = f'exec 3<&{cmd_read} 4>&{reply_write} {cmd_read}<&- {reply_write}>&-; exec "$@"'
        self._log = open(log, "ab")
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", script, "chromium", chromium(), *FLAGS,
             f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}", url],
            pass_fds=(cmd_read, reply_write), stdin=subprocess.DEVNULL, stdout=self._log,
            stderr=self._log, start_new_session=True)
        os.close(cmd_read)
        os.close(reply_write)
        self._next = 0
        self._replies: dict[int, dict] = {}
        self._ready = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self._session = None

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._reply_read, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        with self._ready:
                            self._replies[message["id"]] = message
                            self._ready.notify_all()
        with self._ready:
            self._replies[-1] = {"error": {"message": "chromium closed the pipe"}}
            self._ready.notify_all()

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 60) -> dict:
        self._next += 1
        ident = self._next
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._cmd_write, json.dumps(message).encode() + b"\0")
        with self._ready:
            self._ready.wait_for(lambda: ident in self._replies or -1 in self._replies, timeout)
            reply = self._replies.pop(ident, None) or self._replies.get(-1)
        assert reply is not None, f"no reply to {method}"
        assert "error" not in reply, f"{method}: {reply['error']}"
        return reply["result"]

    def page(self) -> str:
        """A DevTools session on the (first) page, with focus emulated so the editor can show UI."""
        if self._session is None:
            targets = self.send("Target.getTargets")["targetInfos"]
            page = next(t for t in targets if t["type"] == "page")
            self._session = self.send("Target.attachToTarget",
                                      {"targetId": page["targetId"], "flatten": True})["sessionId"]
            self.send("Emulation.setFocusEmulationEnabled", {"enabled": True}, self._session)
        return self._session

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"}, self.page())["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def insert_text(self, text: str) -> None:
        """Type into the focused element, as a user would."""
        self.send("Input.insertText", {"text": text}, self.page())

    def press_enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", {"type": kind, "key": "Enter", "code": "Enter",
                                                 "windowsVirtualKeyCode": 13, "text": "\r"},
                      self.page())

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        os.close(self._cmd_write)
        self._log.close()
