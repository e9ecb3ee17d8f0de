"""A bare JSON-RPC client for `mem lsp` over stdio: frames written by hand, so tests can
also send what no well-behaved client would (broken headers, invalid JSON, floods).

Server-to-client requests are answered with `null`; notifications are kept in order.
"""
from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Wire:
    def __init__(self, argv: list[str], stderr_path: Path, env: dict | None = None):
        self.stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env)
        self.responses: dict[int, queue.Queue] = {}
        self.notifications: list[dict] = []
        self.closed = False      # the server's stdout ended: pending requests fail at once
        self._next = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    # -- sending ------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        with self._lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(frame(json.dumps({"jsonrpc": "2.0", **message}).encode()))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any = None, timeout: float = 600) -> dict:
        """The whole response message ({"result": …} or {"error": …}); ConnectionError
        when the server goes away first."""
        with self._lock:
            self._next += 1
            rid = self._next
            self.responses[rid] = queue.Queue()
            if self.closed:
                raise ConnectionError("the server has exited")
        self.send({"id": rid, "method": method, "params": params})
        message = self.responses[rid].get(timeout=timeout)
        if message is None:
            raise ConnectionError(f"the server exited before answering {method}")
        return message

    def initialize(self, options: dict, root: Path) -> dict:
        answer = self.request("initialize", {"processId": None, "rootUri": root.as_uri(),
                                             "capabilities": {},
                                             "initializationOptions": options})
        self.notify("initialized", {})
        return answer

    def hover(self, uri: str, line: int, character: int = 5, timeout: float = 600):
        return self.request("textDocument/hover", {
            "textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
            timeout=timeout)

    def close(self) -> int:
        try:
            self.request("shutdown", timeout=60)
            self.notify("exit")
        except (OSError, queue.Empty, ValueError):
            pass
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.stderr.close()
        return code

    # -- receiving ----------------------------------------------------------------------
    def _read(self) -> None:
        try:
            self._read_messages()
        finally:
            with self._lock:
                self.closed = True
                for pending in self.responses.values():
                    pending.put(None)

    def _read_messages(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            message = json.loads(out.read(length))
            if "method" in message and "id" in message:        # the server asks us
                self.send({"id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") in self.responses:
                self.responses[message["id"]].put(message)


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return round(fields["VmRSS"], 1), round(fields["VmHWM"], 1)
