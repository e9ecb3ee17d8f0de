"""A real Azure Blob Storage emulator for tests: Azurite (npm `azurite`) on loopback.

`Azurite.find()` is the `azurite-blob` program: `POIMEN_AZURITE`, else the copy
`make install-test` puts under `.cache/azurite`, else one on PATH; None when there is none.
`machine(...)` is the environment of one machine: its own writer id and local state, the
emulator's well-known development account (a public test key, not a secret of ours).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from s3kit import _wait_port, end_process, free_port

ACCOUNT = "devstoreaccount1"
KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
       "K1SZFPTOtr/KBHBeksoGMGw==")
CONTAINER = "team-vault"
LOCAL = Path(__file__).parent.parent / ".cache" / "azurite" / "node_modules" / ".bin"


class Azurite:
    def __init__(self, workdir: Path, program: str):
        self.workdir, self.program = workdir, program
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @staticmethod
    def find() -> str | None:
        return (os.environ.get("POIMEN_AZURITE") or shutil.which("azurite-blob", path=str(LOCAL))
                or shutil.which("azurite-blob"))

    def start(self) -> "Azurite":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [self.program, "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
             "--location", str(self.workdir / "data"), "--skipApiVersionCheck", "--silent"],
            stdout=subprocess.DEVNULL, stderr=open(self.workdir / "azurite.log", "wb"))
        _wait_port(self.port, self.proc)
        from azure.storage.blob import BlobServiceClient

        BlobServiceClient.from_connection_string(self.connection).create_container(CONTAINER)
        return self

    def stop(self) -> None:
        end_process(self.proc)

    @property
    def connection(self) -> str:
        return (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
                f"BlobEndpoint=http://127.0.0.1:{self.port}/{ACCOUNT};")

    def blobs(self, prefix: str) -> dict[str, bytes]:
        from azure.storage.blob import BlobServiceClient

        container = BlobServiceClient.from_connection_string(
            self.connection).get_container_client(CONTAINER)
        return {b.name: container.download_blob(b.name).readall()
                for b in container.list_blobs(name_starts_with=prefix)}

    def machine(self, root: Path, writer: str) -> dict:
        root.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, AZURE_STORAGE_CONNECTION_STRING=self.connection,
                   POIMEN_WRITER=writer, POIMEN_STATE_DIR=str(root / "state"),
                   XDG_CACHE_HOME=str(root / "cache"), POIMEN_SYNC_INTERVAL_S="0",
                   POIMEN_S3_TIMEOUT_S="5")
        env.pop("POIMEN_VAULT", None)
        return env
