"""Issue 4's nine acceptance assertions, through the real Engine, LanceDB, ONNX model and CLI.

Fixture: five memories that explain failures (three with L0 evidence, two without), three
that explain none, one R reference chunk, and the corpus's dev distractor lessons
(same tools, other causes) so the vault is crowded as a real one is; the queries are raw error strings from another
occurrence of each failure, sharing no meaningful vocabulary with the memory text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from poimen.engine import Engine, Proposal
from poimen.references import add as add_references

import dev_rows

FAILURES = {
    "proxy-body-cap": dict(
        memory=("Big file uploads were cut off at the edge: the reverse proxy in front of the "
                "API caps incoming bodies at its one-megabyte default, so the app never saw "
                "them. We raised the proxy's body size limit for the upload route."),
        evidence=('2026/03/02 10:14:07 [error] 31#31: *8812 client intended to send too large '
                  'body: 5242880 bytes, client: 10.1.2.3, server: api.example.com, '
                  'request: "POST /v2/files HTTP/1.1", host: "api.example.com"'),
        query=("<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
               "<center><h1>413 Request Entity Too Large</h1></center>\r\n"
               "<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>")),
    "unallocated-lookup-table": dict(
        memory=("The worker crashed whenever a job carried labels, because the struct's lookup "
                "table was declared but never allocated before the first insert; we now create "
                "it in the constructor."),
        evidence=None,
        query=("panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\n"
               "main.(*Cache).Put(...)\n\t/app/cache.go:31 +0x1d\nexit status 2")),
    "os-owned-interpreter": dict(
        memory=("Provisioning broke after moving the base image to the latest Debian: the "
                "distro now marks its interpreter as owned by the OS package manager, so adding "
                "libraries to it is refused. We create a virtualenv in the image and use that."),
        evidence=("error: externally-managed-environment\n\n"
                  "× This environment is externally managed\n"
                  "╰─> To install Python packages system-wide, try apt install\n"
                  "    python3-xyz, where xyz is the package you are trying to\n    install."),
        query=("$ pip3 install -r requirements.txt\nerror: externally-managed-environment\n"
               "note: If you believe this is a mistake, please contact your Python installation "
               "or OS distribution provider. You can override this, at the risk of breaking "
               "your Python installation or OS, by passing --break-system-packages.\n"
               "hint: See PEP 668 for the detailed specification.")),
    "checkout-owned-by-other-uid": dict(
        memory=("Our release container could not read the checkout because the workspace folder "
                "belongs to a different uid than the one the container runs as; the "
                "version-control tool now refuses such folders unless they are allow-listed, so "
                "the job allow-lists that path first."),
        evidence=None,
        query=("fatal: detected dubious ownership in repository at '/__w/app/app'\n"
               "To add an exception for this directory, call:\n\n"
               "\tgit config --global --add safe.directory /__w/app/app\n"
               "Error: Process completed with exit code 128.")),
    "watcher-stock-identity": dict(
        memory=("The cluster watcher died on start: it ran under the namespace's stock identity, "
                "which has no permissions to read workloads. We gave it its own account with a "
                "role allowing get/list/watch."),
        evidence=('E0418 09:12:44.118 1 reflector.go:138] failed to list *v1.Deployment: '
                  'deployments.apps is forbidden: User "system:serviceaccount:ops:default" '
                  'cannot list resource "deployments" in API group "apps" at the cluster scope'),
        query=('Error from server (Forbidden): pods is forbidden: User '
               '"system:serviceaccount:monitoring:default" cannot watch resource "pods" in '
               'API group "" in the namespace "monitoring"')),
}
NON_FAILURES = [
    "We keep service configuration in environment variables with defaults documented next to "
    "the code, and never commit per-environment files.",
    "The team picked PostgreSQL over MongoDB for the billing service because we need "
    "transactions across tables and the ops team already runs it.",
    "Code review: every change needs one approval, and we squash-merge to keep the main "
    "branch's history linear.",
]
REFERENCE = """# Upload limits

Uploads larger than the configured body size are refused by the gateway.
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("symptom-acceptance")
    engine = Engine(root / "vault", project="acme")
    shas, evidence_of = {}, {}
    for name, case in FAILURES.items():
        parents = []
        if case["evidence"]:
            ingested = engine.ingest(case["evidence"], source="terminal")
            parents = [ingested.evidence_sha]
            evidence_of[name] = ingested
        result = engine.remember("L1", case["memory"], parents,
                                 without_evidence=not parents)
        assert result.verdict == "accepted", result.reason
        shas[name] = result.sha
    for i, text in enumerate(NON_FAILURES):
        result = engine.remember("L1", text, without_evidence=True)
        assert result.verdict == "accepted", result.reason
        shas[f"non-failure-{i}"] = result.sha
    crowd = [row["memory"] for row in dev_rows.rows("distractors")]
    results = engine.remember_many(Proposal("L1", text, (), None, True) for text in crowd)
    assert sum(r.verdict == "accepted" for r in results) >= 100
    doc = root / "limits.md"
    doc.write_text(REFERENCE)
    add_references(engine.vault, [doc], "acme")
    return engine, shas, evidence_of, root


def symptom_vectors(engine) -> dict[str, np.ndarray]:
    return {r["memory_sha"]: np.array(r["vector"]) for r in engine.store.dump("vectors")
            if r["kind"] == "symptom"}


def rank(engine, query, kind, sha) -> int:
    hits = engine.search(query, kind=kind, limit=50)
    order = [h["sha"] for h in hits]
    return order.index(sha) + 1 if sha in order else len(order) + 1


def test_1_failure_memories_gain_a_symptom_vector(world):
    engine, shas, _, _ = world
    vectors = symptom_vectors(engine)
    for name in FAILURES:
        assert shas[name] in vectors, name
        assert engine.symptoms(shas[name])["lines"]


def test_2_non_failure_memories_gain_none(world):
    engine, shas, _, _ = world
    vectors = symptom_vectors(engine)
    for i in range(len(NON_FAILURES)):
        sha = shas[f"non-failure-{i}"]
        assert sha not in vectors
        assert engine.symptoms(sha)["lines"] == []  # empty is recorded, not an error


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_3_symptom_search_with_raw_error_finds_its_memory_at_the_top(world, name):
    """Among the first three, not first: the corpus's crowd holds other teams' lessons for
    some of these very failures (a nil-map write, a proxy's body cap), right answers too."""
    engine, shas, _, _ = world
    assert rank(engine, FAILURES[name]["query"], "symptom", shas[name]) <= 3


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_4_text_search_ranks_it_strictly_lower(world, name):
    engine, shas, _, _ = world
    query = FAILURES[name]["query"]
    assert rank(engine, query, "text", shas[name]) > rank(engine, query, "symptom", shas[name])


def test_5_generating_twice_is_byte_identical(world):
    engine, shas, _, root = world
    fresh = Engine(root / "vault", project="acme")
    for name, case in FAILURES.items():
        memory = engine.memory(shas[name])
        evidence = engine.vault.evidence_messages(memory["parents"])
        first = engine.generator.project(case["memory"], evidence)
        second = fresh.generator.project(case["memory"], evidence)
        assert json.dumps(first.to_dict()) == json.dumps(second.to_dict())
        stored = engine.symptoms(shas[name])
        assert stored["lines"] == first.to_dict()["lines"]


def test_6_drop_and_rebuild_gives_equal_projections_and_vectors(world):
    engine, _, _, _ = world
    before_rows = engine.store.dump("projections")
    before_vectors = symptom_vectors(engine)
    report = engine.rebuild()
    assert report["projection_drift"] == []
    assert engine.store.dump("projections") == before_rows
    after_vectors = symptom_vectors(engine)
    assert after_vectors.keys() == before_vectors.keys()
    for sha, vector in before_vectors.items():
        assert np.array_equal(after_vectors[sha], vector)


def test_7_evidence_with_parseable_error_links_signature_to_memory(world):
    engine, shas, evidence_of, _ = world
    for name, ingested in evidence_of.items():
        assert ingested.signatures, f"{name}: evidence should hold a parseable failure"
        sig = ingested.signatures[0]
        links = [l for l in engine.store.signature_links(sig.sig_sha) if l.memory_sha == shas[name]]
        assert links and links[0].tool == sig.tool and links[0].tool


def test_8_no_l0_or_r_node_has_a_symptom_vector(world):
    engine, _, _, _ = world
    levels = {r["sha"]: r["level"] for r in engine.store.dump("memories")}
    assert "L0" in levels.values() and "R" in levels.values()
    assert {levels[sha] for sha in symptom_vectors(engine)} <= {"L1", "L2"}


def test_9_log_record_names_model_and_prompt_sha(world):
    engine, shas, _, _ = world
    records = {e.rec["memory"]: e.rec for e in engine.vault.log.entries()
               if e.rec.get("type") == "projection"}
    for sha in shas.values():
        rec = records[sha]
        assert rec["model_id"] == engine.generator.model_id
        assert rec["prompt_sha"] == engine.generator.prompt_sha
        assert len(rec["projection_sha"]) == 64


def test_cli_symptoms_show(world):
    engine, shas, _, root = world
    mem = Path(sys.executable).with_name("mem")
    env = {**os.environ, "POIMEN_VAULT": str(root / "vault")}
    out = subprocess.run([str(mem), "--json", "symptoms", "show", shas["proxy-body-cap"]],
                         capture_output=True, text=True, env=env, check=True)
    shown = json.loads(out.stdout)
    assert shown == json.loads(json.dumps(engine.symptoms(shas["proxy-body-cap"])))
    assert {l["origin"] for l in shown["lines"]} == {"evidence", "generated"}
    human = subprocess.run([str(mem), "symptoms", "show", shas["proxy-body-cap"]],
                           capture_output=True, text=True, env=env, check=True).stdout
    assert "[evidence]" in human and "[generated]" in human and shown["model_id"] in human
    missing = subprocess.run([str(mem), "symptoms", "show", "0" * 64],
                             capture_output=True, text=True, env=env)
    assert missing.returncode == 1 and "no symptom projection" in missing.stderr
