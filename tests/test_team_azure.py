"""A team vault on Azure Blob Storage (`az://container/prefix`) against Azurite on
loopback: the same log layout and sync as on S3, through the azure-storage-blob SDK."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("azure.storage.blob")
from azkit import CONTAINER, Azurite  # noqa: E402

MEM = str(Path(sys.executable).with_name("mem"))


@pytest.fixture(scope="module")
def azurite(tmp_path_factory):
    program = Azurite.find()
    if program is None:
        pytest.skip("no azurite-blob (make install-test installs it with npm)")
    server = Azurite(tmp_path_factory.mktemp("azurite"), program).start()
    yield server
    server.stop()


def mem(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([MEM, *args], env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, f"mem {' '.join(args)}: {proc.stderr[-2000:]}"
    return proc


def failure(i: int) -> str:
    return (f"Traceback (most recent call last):\n  File \"/srv/az/job{i}.py\", line 2, in "
            f"<module>\n    import az_plugin_{i}\nModuleNotFoundError: No module named "
            f"'az_plugin_{i}'\n")


def test_two_machines_share_a_vault_on_azure_and_no_blob_is_overwritten(azurite, tmp_path,
                                                                         monkeypatch):
    vault = f"az://{CONTAINER}/team"
    ada, bo = (azurite.machine(tmp_path / n, n) for n in ("ada", "bo"))
    mem(ada, "--vault", vault, "--project", "az", "init")
    shas = {}
    for n, env in enumerate((ada, bo, ada)):
        (tmp_path / f"{n}.log").write_text(failure(n))
        out = mem(env, "--vault", vault, "--json", "ingest", str(tmp_path / f"{n}.log")).stdout
        shas[n] = json.loads(out)["results"][0]["evidence_sha"]
    blobs = azurite.blobs("team/log/")
    assert {key.split("/")[2] for key in blobs} == {"ada", "bo"}
    pushed = [json.loads(line)["sha"] for body in blobs.values() for line in body.splitlines()]
    assert set(shas.values()) <= set(pushed) and len(pushed) == len(set(pushed))

    cy = azurite.machine(tmp_path / "cy", "cy")
    assert "pulled" in mem(cy, "--vault", vault, "sync").stdout
    assert mem(cy, "--vault", vault, "verify").returncode == 0
    stats = json.loads(mem(cy, "--vault", vault, "--json", "stats").stdout)
    assert stats["memories"]["L0"] == 3 and set(stats["team"]["writers"]) >= {"ada", "bo"}

    from poimen.team.azure import AzureStore   # create-only: a taken name stays as it was

    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite.connection)
    store, key = AzureStore(vault), sorted(blobs)[0]
    assert not store.put_new(key, b"other")
    assert store.put_new("team/probe", b"x") and not store.put_new("team/probe", b"y")
    assert azurite.blobs("team/log/")[key] == blobs[key]
    assert azurite.blobs("team/probe") == {"team/probe": b"x"}


def test_a_missing_credential_or_container_is_a_clear_error(azurite, tmp_path):
    env = azurite.machine(tmp_path / "dee", "dee")
    env.pop("AZURE_STORAGE_CONNECTION_STRING")
    proc = mem(env, "--vault", f"az://{CONTAINER}/x", "init", check=False)
    assert proc.returncode != 0 and "AZURE_STORAGE_CONNECTION_STRING" in proc.stderr
    env = azurite.machine(tmp_path / "eve", "eve")
    proc = mem(env, "--vault", "az://no-such-container/x", "sync", check=False)
    assert proc.returncode != 0 and "failed (" in proc.stdout + proc.stderr
    assert "AccountKey" not in proc.stdout + proc.stderr
