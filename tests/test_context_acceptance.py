"""Issue 5's twelve acceptance assertions, against real running `mem serve` processes.

The vault is built with the real CLI (`mem import`, `mem ref add`, `mem skill draft`,
`mem remember --supersedes`) from the repo's corpus (dev rows only): every dev case and
150 dev distractors as lessons with their evidence, the decision fixtures, one case under another project, a
superseded lesson, a reference corpus and a promoted skill. Fault injection uses the
engine's own `POIMEN_FAULTS` setting; the "embedder unavailable" server points
`POIMEN_MODEL` at a missing file; the "no symptom vectors" server runs over a copy of
the vault whose symptom vectors were deleted from LanceDB.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import lancedb
import pytest

import dev_rows

MEM = [str(Path(sys.executable).parent / "mem")]
# Dev corpus rows whose outcome has a wide margin in this vault (measured when chosen):
OTHER_PROJECT_CASE = "infra-terraform-archived-template-provider-apple-silicon"
SUPERSEDED_CASE = "py-pyyaml6-load-requires-explicit-loader"
NPM_CASE = "js-webpack5-no-node-core-polyfills"   # tier 1; the doc below quotes its recurrence
SYMPTOM_CASE = "data-rails-concurrent-ruby-135-logger-require"  # its variant: found by symptom
SEEN_CASE = "data-cabal-link-missing-libgmp-dev"   # one signature: one occurrence a request
INFERRED_CASE, INFERRED_TOOL = "py-poetry18-stale-lock-hash-now-fatal", "poetry"
SAME_BYTES_CASE = "infra-docker-gpus-flag-without-nvidia-container-toolkit"
UNKNOWN_REF = "py-ref-gunicorn-worker-timeout-sync-workers"   # no lesson; its reference
DISTRACTORS = 150

NPM_DOC = """# webpack documentation

## Resolving Node core modules

Since webpack 5 the browser build no longer injects polyfills for Node's core modules,
so a dependency that imports one stops the build:

```
{error}
```

Add a resolve.fallback entry for each module (a browser port, or false to leave it out),
or use a browser build of the dependency.
"""

CASES = {c["id"]: c for c in dev_rows.rows("cases")}
REFERENCES = dev_rows.rows("reference")


def mem(vault: Path, *args: str, project: str = "alpha", stdin: str | None = None,
        env: dict | None = None) -> dict:
    done = subprocess.run(MEM + ["--vault", str(vault), "--project", project, "--json",
                                 *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=1800)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A real `mem serve` subprocess on a free loopback port."""

    def __init__(self, vault: Path, env_extra: dict | None = None, log_dir: Path = None,
                 extra_args: list[str] = ()):
        self.port = _free_port()
        env = dict(os.environ, **(env_extra or {}))
        self.stderr = open(log_dir / f"serve-{self.port}.log", "w+")
        self.proc = subprocess.Popen(
            MEM + ["--vault", str(vault), "--project", "alpha", "serve", "--port",
                   str(self.port), *extra_args], env=env, stdout=subprocess.DEVNULL, stderr=self.stderr)
        self.url = f"http://127.0.0.1:{self.port}"
        for _ in range(600):
            if self.proc.poll() is not None:
                raise RuntimeError(f"mem serve exited: {self.log()}")
            try:
                httpx.get(self.url + "/openapi.json", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise RuntimeError("mem serve did not start: " + self.log())

    def log(self) -> str:
        self.stderr.flush()
        return Path(self.stderr.name).read_text()

    def raw(self, **request) -> httpx.Response:
        return httpx.post(self.url + "/memory/context", json=request, timeout=120)

    def ask(self, **request) -> dict:
        response = self.raw(**request)
        assert response.status_code == 200, response.text
        return response.json()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.stderr.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("context")
    vault = root / "vault"
    mem(vault, "init")
    alpha = [dict(id=c["id"], text=c["memory"], evidence=c["evidence"], tool=c["tool"])
             for c in CASES.values() if c["id"] != OTHER_PROJECT_CASE]
    alpha += [dict(id=d["id"], text=d["memory"], evidence=d["evidence"], tool=d["tool"])
              for d in dev_rows.rows("distractors")[:DISTRACTORS]]
    alpha += [dict(id=d["id"], text=d["memory"]) for d in dev_rows.rows("decisions")]
    lines = "\n".join(json.dumps(item) for item in alpha)
    shas = {m["id"]: m["sha"] for m in mem(vault, "import", "-", stdin=lines)["memories"]}
    beta = CASES[OTHER_PROJECT_CASE]
    beta_line = json.dumps(dict(id=beta["id"], text=beta["memory"],
                                evidence=beta["evidence"], tool=beta["tool"],
                                project="beta"))
    shas.update({m["id"]: m["sha"] for m in
                 mem(vault, "import", "-", stdin=beta_line, project="beta")["memories"]})
    old = shas[SUPERSEDED_CASE]
    successor = mem(vault, "remember", "--level", "L1", "--supersedes", old,
                    "--without-evidence", "--text",
                    "Correction: pinning the YAML library below 6 only postpones it. Pass "
                    "the safe loader explicitly at every load call (or call safe_load); "
                    "the loader-less load call is gone for good.")["sha"]
    general = mem(vault, "remember", "--level", "L2", "--parent", shas[NPM_CASE], "--text",
                  "After a major upgrade of the browser bundler, any dependency written "
                  "for the server breaks the build by importing Node built-ins: list "
                  "which dependencies need them before upgrading, and add fallbacks only "
                  "for the modules really used.")["sha"]
    docs = root / "docs"
    docs.mkdir()
    (docs / "webpack.md").write_text(NPM_DOC.format(error=CASES[NPM_CASE]["recurrence"]))
    for ref in REFERENCES:
        (docs / f"{ref['id']}.md").write_text(
            f"# {ref['tool']}\n\n## {ref['heading']}\n\n{ref['reference']}\n")
    (docs / "handbook.rst").write_text(
        "Release handbook\n================\n\n" + "\n\n".join(
            f"Step {i}\n-------\n\nTag the release, write the changelog entry number {i}, "
            "announce it in the team channel and archive the build artefacts." * 3
            for i in range(6)) + "\n")
    mem(vault, "ref", "add", str(docs))
    skill = mem(vault, "skill", "draft", "--name", "webpack5-node-polyfills", "--from",
                shas[NPM_CASE], "--title", "webpack 5 and Node core modules")
    return {"root": root, "vault": vault, "shas": shas, "successor": successor,
            "general": general,
            "superseded": old, "skill": skill}


@pytest.fixture(scope="module")
def servers(seeded):
    started: dict[str, Server] = {}
    root = seeded["root"]

    def get(name: str) -> Server:
        if name not in started:
            # Legs get 8 s, not the default 2 s: the suite shares a loaded CI machine, and
            # a tier-1 leg that times out there would fail a test about precedence.
            vault, env = seeded["vault"], {"POIMEN_LEG_TIMEOUT_S": "8"}
            if name == "skills-fail":
                env["POIMEN_FAULTS"] = "skills=fail"
            elif name == "legs-fail":
                env["POIMEN_FAULTS"] = "tier2=fail,tier3=fail,occurrence=fail"
            elif name == "skills-slow":
                env["POIMEN_FAULTS"] = "skills=delay:20"
            elif name == "no-embedder":
                env["POIMEN_MODEL"] = str(root / "missing-model.onnx")
            elif name == "no-symptoms":
                vault = root / "vault-no-symptoms"
                shutil.copytree(seeded["vault"], vault)
                table = lancedb.connect(str(vault / "lance")).open_table("vectors")
                table.delete("kind = 'symptom'")
                assert table.count_rows("kind = 'symptom'") == 0
            started[name] = Server(vault, env, root)
        return started[name]

    yield get
    for server in started.values():
        server.stop()


def lead(text: str, chars: int = 60) -> str:
    """The first words of a text, whitespace collapsed."""
    return " ".join(text.split())[:chars]


def _lesson(body: dict, sha: str) -> dict | None:
    return next((item for item in body["lessons"] if item["sha"] == sha), None)


def _occurrences(vault: Path, request_id: str) -> int:
    count = 0
    for segment in (vault / "log" / "segments").glob("*.jsonl"):
        for line in segment.read_text().splitlines():
            rec = json.loads(line)["rec"]
            count += rec.get("type") == "occurrence" and rec.get("request_id") == request_id
    return count


# 1
def test_tier1_exact_hit_names_the_memory_and_tiers_2_and_3_still_answer(seeded, servers):
    case = CASES[NPM_CASE]
    body = servers("main").ask(signature_source=case["recurrence"], tool="webpack",
                               request_id="t1", budget=4000)
    assert body["tier"] == 1
    assert body["lessons"][0]["tier"] == 1
    assert body["lessons"][0]["sha"] == seeded["shas"][NPM_CASE]
    assert body["lessons"][0]["matched_kind"] == "signature"
    assert body["lessons"][0]["parents"], "a tier-1 lesson lists its evidence"
    general = _lesson(body, seeded["general"])
    assert general is not None and general["tier"] == 2, "tier 1 short-circuited tier 2"
    assert general["level"] == "L2"
    assert body["references"] and all(r["tier"] == 3 for r in body["references"])
    assert all(item["level"] in ("L1", "L2") for item in body["lessons"])


# 2
def test_seen_count_grows_per_request_and_a_retry_counts_once(seeded, servers):
    case = CASES[SEEN_CASE]
    server = servers("main")
    first = server.ask(signature_source=case["recurrence"], request_id="seen-1")
    second = server.ask(signature_source=case["recurrence"], request_id="seen-2")
    retry = server.ask(signature_source=case["recurrence"], request_id="seen-2")
    sha = seeded["shas"][SEEN_CASE]
    one, two, again = (_lesson(b, sha) for b in (first, second, retry))
    assert one["tier"] == two["tier"] == 1
    assert two["seen_count"] == one["seen_count"] + 1
    assert again["seen_count"] == two["seen_count"]
    assert two["last_seen"] is not None
    assert _occurrences(seeded["vault"], "seen-1") == 1
    assert _occurrences(seeded["vault"], "seen-2") == 1


# 3
def test_novel_wording_is_tier2_through_the_symptom_projection(seeded, servers):
    case = CASES[SYMPTOM_CASE]
    body = servers("main").ask(task=case["variant_query"], scope="all-projects")
    hit = _lesson(body, seeded["shas"][SYMPTOM_CASE])
    assert hit is not None, body["lessons"]
    assert hit["tier"] == 2 and hit["matched_kind"] == "symptom"
    assert hit["scores"]["symptom"] >= hit["scores"].get("text", 0)


# 4
def test_without_symptom_vectors_the_right_memory_scores_lower(seeded, servers):
    """The score, not the rank: on the corpus's dev variants a symptom-led lesson mostly
    stays first on its text and evidence alone (19 of 20 when this was written), so a
    rank comparison would be a near-tie; the symptom's share of the score is not."""
    case = CASES[SYMPTOM_CASE]
    sha = seeded["shas"][SYMPTOM_CASE]
    request = dict(task=case["variant_query"], scope="all-projects")
    found = _lesson(servers("main").ask(**request), sha)
    without = servers("no-symptoms").ask(**request)["lessons"]
    assert found is not None and found["matched_kind"] == "symptom"
    again = next((i for i in without if i["sha"] == sha), None)
    assert again is None or again["score"] < found["score"]
    assert all(i["matched_kind"] != "symptom" for i in without)


# 5
def test_unknown_failure_gets_its_reference_and_no_lesson_claims_tier_1(servers):
    """Nobody here hit it: the reference that explains it comes first, and no lesson
    claims to be this failure. Whether a same-log-format neighbour still shows as a
    tier-2 "similar" is the fitted answer model's call (docs/BENCHMARKS.md gives how
    often it abstains on the corpus's reference cases)."""
    ref = next(r for r in REFERENCES if r["id"] == UNKNOWN_REF)
    body = servers("main").ask(signature_source=ref["query"], request_id="t5")
    assert body["tier"] in (2, 3)
    assert all(item["tier"] == 2 for item in body["lessons"])
    assert body["references"] and lead(ref["reference"]) in lead(body["references"][0]["text"], 400)
    assert all(s["known"] is False for s in body["signatures"])


# 6
def test_reference_scoring_above_tier1_still_comes_after_it(seeded, servers):
    case = CASES[NPM_CASE]
    body = servers("main").ask(signature_source=case["recurrence"], request_id="t6",
                               budget=4000)
    tier1 = body["lessons"][0]
    npm_ref = next(r for r in body["references"] if "BREAKING CHANGE: webpack" in r["text"])
    assert tier1["tier"] == 1 and npm_ref["tier"] == 3
    # The fixture: score and tier disagree (the reference quotes the error verbatim, so
    # its cosine beats the lesson's); the order still follows the tier.
    assert npm_ref["score"] > tier1["score"]
    assert body["tier"] == 1
    order = [i["tier"] for i in body["lessons"]] + [i["tier"] for i in body["references"]]
    assert order == sorted(order)


# 7
def test_superseded_memory_is_absent_and_its_successor_present(seeded, servers):
    case = CASES[SUPERSEDED_CASE]
    body = servers("main").ask(signature_source=case["recurrence"], request_id="t7")
    shas = [i["sha"] for i in body["lessons"]]
    assert seeded["superseded"] not in shas
    successor = _lesson(body, seeded["successor"])
    assert successor is not None and successor["successor_of"] == seeded["superseded"]


# 8
def test_shrinking_budget_drops_r_then_tier2_then_skills_never_tier1(seeded, servers):
    case = CASES[NPM_CASE]
    server = servers("main")
    full = server.ask(signature_source=case["recurrence"], request_id="t8", budget=20000)
    assert full["references"] and full["skills"] and \
        [i for i in full["lessons"] if i["tier"] == 2], "the fixture needs every section"
    tier1 = [i["sha"] for i in full["lessons"] if i["tier"] == 1]
    history = []
    limit = full["budget"]["used"]
    while limit >= 1:
        body = server.ask(signature_source=case["recurrence"], request_id="t8",
                          budget=limit)
        assert [i["sha"] for i in body["lessons"] if i["tier"] == 1] == tier1
        sections = [d["section"] for d in body["budget"]["dropped"]]
        assert "tier1" not in sections
        history.append((len(body["references"]),
                        len([i for i in body["lessons"] if i["tier"] == 2]),
                        len(body["skills"])))
        limit = limit * 2 // 3
    refs, tier2, skills = zip(*history)
    # references go first: tier 2 shrinks only once no reference is left
    assert all(r == 0 for r, t, _ in history if t < tier2[0])
    # tier 2 reaches its floor before skills go
    assert all(t <= 1 for _, t, s in history if s < skills[0])
    assert refs[-1] == 0 and skills[-1] == 0 and tier2[-1] == 0


# 9
@pytest.mark.parametrize("server_name", ["skills-fail", "skills-slow"])
def test_skills_leg_failure_gives_200_empty_skills_and_degraded(servers, server_name):
    case = CASES[NPM_CASE]
    response = servers(server_name).raw(signature_source=case["recurrence"],
                                        request_id="t9")
    assert response.status_code == 200
    body = response.json()
    assert body["skills"] == []
    assert any(note.startswith("skills:") for note in body["degraded"])
    assert body["lessons"][0]["tier"] == 1


def test_failing_tier2_tier3_and_occurrence_legs_still_answer_200_with_tier1(seeded,
                                                                              servers):
    case = CASES[NPM_CASE]
    response = servers("legs-fail").raw(signature_source=case["recurrence"],
                                        request_id="t9b", budget=4000)
    assert response.status_code == 200
    body = response.json()
    assert body["tier"] == 1 and body["lessons"][0]["sha"] == seeded["shas"][NPM_CASE]
    assert [i["tier"] for i in body["lessons"]] == [1] and body["references"] == []
    notes = " ".join(body["degraded"])
    assert "tier2: failed" in notes and "tier3: failed" in notes
    assert "occurrence: not recorded" in notes
    assert _occurrences(seeded["vault"], "t9b") == 0


# 10
def test_omitting_tool_infers_it(seeded, servers):
    case = CASES[INFERRED_CASE]
    body = servers("main").ask(signature_source=case["recurrence"], request_id="t10")
    assert body["tool_inferred"] is True and body["tool"] == INFERRED_TOOL
    assert body["lessons"][0]["sha"] == seeded["shas"][INFERRED_CASE]


# 11
def test_other_projects_signature_federates_only_with_all_projects(seeded, servers):
    case = CASES[OTHER_PROJECT_CASE]
    sha = seeded["shas"][OTHER_PROJECT_CASE]
    everywhere = servers("main").ask(signature_source=case["recurrence"],
                                     scope="all-projects", request_id="t11a")
    here = servers("main").ask(signature_source=case["recurrence"], scope="project",
                               request_id="t11b")
    found = _lesson(everywhere, sha)
    assert found is not None and found["tier"] == 1 and found["project"] == "beta"
    assert _lesson(here, sha) is None
    assert all(item["project"] == "alpha" for item in here["lessons"])


# 12
def test_independent_tokenisation_equals_budget_used(servers):
    from tokenizers import Tokenizer

    from poimen.embed import default_tokenizer_path

    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.no_truncation()  # a budget counts every token, not the first 256
    tokenizer.no_padding()
    case = CASES[NPM_CASE]
    for budget in (20000, 300):
        body = servers("main").ask(signature_source=case["recurrence"],
                                   request_id="t12", budget=budget)
        texts = [i["text"] for key in ("lessons", "skills", "references") for i in body[key]]
        assert texts
        counted = sum(len(tokenizer.encode(t, add_special_tokens=False).ids)
                      for t in texts)
        assert counted == body["budget"]["used"]


def test_identical_requests_give_identical_bytes(servers):
    case = CASES[SAME_BYTES_CASE]
    request = dict(signature_source=case["recurrence"], task="deploying to gpu nodes",
                   request_id="same", budget=900)
    bodies = [servers("main").raw(**request).content for _ in range(3)]
    assert bodies[0] == bodies[1] == bodies[2]


def test_embedder_unavailable_degrades_tier2_to_fulltext_and_trigrams(seeded, servers):
    case = CASES[NPM_CASE]
    response = servers("no-embedder").raw(signature_source=case["recurrence"],
                                          request_id="t-degraded")
    assert response.status_code == 200
    body = response.json()
    assert any(note.startswith("tier2:") for note in body["degraded"])
    assert body["lessons"][0]["sha"] == seeded["shas"][NPM_CASE]
    assert all(i["matched_kind"] in ("signature", "trigram", "fulltext")
               for i in body["lessons"])


def test_one_structured_log_line_per_call(servers):
    server = servers("main")
    before = server.log().count('"event": "context"')
    server.ask(task="nothing in particular", request_id="t-log")
    lines = [json.loads(line) for line in server.log().splitlines()
             if '"event": "context"' in line]
    assert len(lines) == before + 1
    assert {"tiers", "latency_ms", "scores", "dropped", "degraded"} <= set(lines[-1])
