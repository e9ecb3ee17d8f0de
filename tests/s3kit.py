"""A real S3-compatible server for tests: `moto` in server mode on loopback.

`S3Server` runs `moto_server` as its own process on 127.0.0.1 and, in front of it, a
plain TCP relay on another port that clients use: `relay.stop()` makes the store
unreachable (connections refused) while moto keeps its objects, `relay.start()` brings
it back on the same port. `machine(...)` is the environment of one machine: its own
writer id, its own local state, the AWS variables (fake keys moto accepts, no config
files of this machine's user).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ACCESS_KEY = "AKIAPOIMENTEST7Q2X9Z"
SECRET_KEY = "poimenTestSecret/k8Jd2LmQ0vN5rT7wYz3Bx1Cq"
BUCKET = "team-vault"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen | None = None, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"moto_server exited ({proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def end_process(proc: subprocess.Popen | None) -> None:
    """Terminate a server started for a test (killed after 20 s)."""
    if proc is not None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Relay:
    """A TCP relay 127.0.0.1:port -> 127.0.0.1:target that can be stopped and restarted."""

    def __init__(self, target: int):
        self.target, self.port = target, free_port()
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        """Refuse new connections and cut the open ones."""
        with self._lock:
            if self._listener is not None:   # shutdown wakes the blocked accept (Linux):
                try:                          # close alone leaves the port listening
                    self._listener.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self._listener.close()
                self._listener = None
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()
            self._conns.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if listener is not self._listener:   # accepted as it stopped: refuse
                client.close()
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class S3Server:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.relay = Relay(self.port)

    def start(self) -> "S3Server":
        exe = Path(sys.executable).with_name("moto_server")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(self.workdir / "moto.log", "wb"))
        _wait_port(self.port, self.proc)
        self.relay.start()
        self.client().create_bucket(Bucket=BUCKET)
        self.client().put_bucket_versioning(   # so a test can see any overwrite
            Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        return self

    def stop(self) -> None:
        self.relay.stop()
        end_process(self.proc)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.relay.port}"

    def aws_env(self) -> dict:
        empty = str(self.workdir / "no-aws-config")
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1",
                "AWS_ALLOW_HTTP": "true", "AWS_CONFIG_FILE": empty,
                "AWS_SHARED_CREDENTIALS_FILE": empty, "POIMEN_S3_TIMEOUT_S": "2"}

    def client(self):
        """A direct client on moto's own port (the test's view, not through the relay)."""
        import boto3

        return boto3.client("s3", endpoint_url=f"http://127.0.0.1:{self.port}",
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                            region_name="us-east-1")

    def objects(self, prefix: str = "") -> dict[str, list[bytes]]:
        """Every version of every object under `prefix`: key -> bodies."""
        client, out = self.client(), {}
        pages = client.get_paginator("list_object_versions").paginate(Bucket=BUCKET,
                                                                      Prefix=prefix)
        for page in pages:
            for version in page.get("Versions", ()):
                body = client.get_object(Bucket=BUCKET, Key=version["Key"],
                                         VersionId=version["VersionId"])["Body"].read()
                out.setdefault(version["Key"], []).append(body)
        return out

    def machine(self, root: Path, writer: str, **extra: str) -> dict:
        """Environment for one machine: own writer id, own state and caches."""
        root.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, **self.aws_env(), POIMEN_WRITER=writer,
                   POIMEN_STATE_DIR=str(root / "state"), XDG_CACHE_HOME=str(root / "cache"),
                   POIMEN_SYNC_INTERVAL_S="0", PYTHONUNBUFFERED="1")
        env.pop("POIMEN_VAULT", None)
        env.update(extra)
        return env
