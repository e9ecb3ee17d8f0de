"""Failure signatures on real output: the development set's recurrences and negatives,
further real excerpts from issue threads, GitHub Actions framing, odd input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from poimen.signatures import Signature, extract, infer_tool
from poimen.signatures import frames as fr
from poimen.signatures.normalise import LINE_CAP

FIXTURES = Path(__file__).parent / "fixtures" / "signatures"

# Pairs whose two pastes are different failures at exact granularity (docs/SIGNATURES.md,
# "Pairs that do not match"): they must still share a family.
DIFFERENT_AT_EXACT = {
    "go-write-to-uninitialized-map-field",          # nil map written at two code sites
    "rust-rand065-stale-lock-rand-core-mismatch",   # E0277 for two different Self types
    "rust-trait-bound-two-rand-major-versions",     # E0277, different types and traits
}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line]


def shas(sigs: list[Signature]) -> set[str]:
    return {s.sig_sha for s in sigs}


@pytest.mark.parametrize("case", rows("cases.jsonl"), ids=lambda c: c["id"])
def test_recurrence_shares_root_signature(case):
    evidence, recurrence = extract(case["evidence"]), extract(case["recurrence"])
    assert evidence and recurrence, "both pastes yield a signature"
    if case["id"] in DIFFERENT_AT_EXACT:
        assert evidence[0].sig_sha != recurrence[0].sig_sha
        assert evidence[0].family == recurrence[0].family
    else:
        assert evidence[0].sig_sha == recurrence[0].sig_sha, (evidence[0].text, recurrence[0].text)


@pytest.mark.parametrize("pair", rows("negatives.jsonl") + [r for r in rows("real_outputs.jsonl")
                                                             if r["kind"] == "negative"],
                         ids=lambda p: p["id"])
def test_negative_pair_never_shares_a_signature(pair):
    a, b = extract(pair["a"]), extract(pair["b"])
    assert a or b
    assert not shas(a) & shas(b), [s.text for s in a + b]


@pytest.mark.parametrize("pair", [r for r in rows("real_outputs.jsonl") if r["kind"] == "pair"],
                         ids=lambda p: p["id"])
def test_real_recurrence_pairs_match(pair):
    a, b = extract(pair["a"]), extract(pair["b"])
    assert a and b and a[0].sig_sha == b[0].sig_sha, ([s.text for s in a], [s.text for s in b])


@pytest.mark.parametrize("single", [r for r in rows("real_outputs.jsonl") if r["kind"] == "single"],
                         ids=lambda s: s["id"])
def test_single_outputs_read_by_their_tool_rule(single):
    sig = extract(single["text"])[0]
    assert sig.tool == single["tool"]
    if single["expect_kind"]:
        assert sig.kind == single["expect_kind"]


def test_every_case_and_negative_side_yields_a_signature():
    texts = [c[k] for c in rows("cases.jsonl") for k in ("evidence", "recurrence")]
    texts += [n[k] for n in rows("negatives.jsonl") for k in ("a", "b")]
    assert [t[:60] for t in texts if not extract(t)] == []


def test_tool_rules_do_not_collapse_into_one_signature():
    """False-pass guard: distinct distractor failures of one tool keep distinct signatures."""
    by_tool: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for row in rows("distractors.jsonl"):
        for sig in extract(row["evidence"])[:1]:
            by_tool.setdefault(sig.tool, set()).add(sig.sig_sha)
            counts[sig.tool] = counts.get(sig.tool, 0) + 1
    crowded = {t: (len(by_tool[t]), n) for t, n in counts.items() if n >= 3}
    assert crowded and all(distinct == n for distinct, n in crowded.values()), crowded


def gha_log(step_output: list[str], filler: int) -> str:
    """An Actions job log: per-line timestamps, ##[group] framing, a failing step."""
    out, t = [], 0

    def emit(line: str) -> None:
        nonlocal t
        t += 1
        out.append(f"2024-03-0{1 + t // 40000}T10:{(t // 60) % 60:02d}:{t % 60:02d}.{t:07d}Z {line}")

    emit("##[group]Run actions/checkout@v4")
    emit("with:")
    emit("  repository: acme/widgets")
    emit("##[endgroup]")
    emit("##[group]Run cargo build --release")
    for n in range(filler):
        emit(f"   Compiling crate{n} v0.{n % 9}.{n % 7}")
    out.extend(f"2024-03-01T11:00:00.0000000Z {line}" for line in step_output)
    emit("##[endgroup]")
    emit("##[error]Process completed with exit code 101.")
    emit("##[group]Post job cleanup.")
    emit("[command]/usr/bin/git version")
    emit("##[endgroup]")
    return "\r\n".join(out)


def test_actions_log_of_50kb_yields_root_failure_first():
    case = next(c for c in rows("cases.jsonl") if c["id"] == "cargo-linker-cc-missing")
    log = gha_log(case["recurrence"].splitlines(), filler=1000)
    assert len(log) > 50_000
    sigs = extract(log)
    assert sigs[0].sig_sha == extract(case["evidence"])[0].sig_sha
    assert sigs[0].line > 900, "the root error sits in the middle of the log"
    assert all("exit code" not in s.message for s in sigs)


def test_root_error_in_the_middle_is_found_and_ordered_first():
    case = next(c for c in rows("cases.jsonl") if c["id"] == "pandas2-dataframe-append-removed")
    noise = "\n".join(f"INFO processing batch {n}" for n in range(3000))
    sigs = extract(noise + "\n" + case["evidence"] + "\nError: Process completed with exit code 1.")
    assert sigs[0].kind == "AttributeError" and sigs[0].line == 3000


def test_tool_hint_orders_but_never_changes_hashes():
    case = next(c for c in rows("cases.jsonl") if c["id"] == "gha-bot-push-denied-readonly-default")
    plain, hinted = extract(case["evidence"]), extract(case["evidence"], tool="git")
    assert shas(plain) == shas(hinted)
    unknown = extract(case["evidence"], tool="no-such-tool")
    assert [s.sig_sha for s in unknown] == [s.sig_sha for s in plain]


def test_infer_tool_reports_rule():
    case = next(c for c in rows("cases.jsonl") if c["id"] == "npm-eresolve-peer-react-major")
    assert infer_tool(case["evidence"]) == ("npm", "npm-eresolve")
    assert infer_tool("all good\n") is None


def test_bytes_invalid_utf8_and_binary_do_not_crash():
    case = next(c for c in rows("cases.jsonl") if c["id"] == "cargo-linker-cc-missing")
    raw = b"\xff\xfe\x00garbage\x80\n" + case["evidence"].encode() + b"\n\xc3\x28\x00\x01\x02"
    assert extract(raw)[0].sig_sha == extract(case["evidence"])[0].sig_sha
    assert extract(bytes(range(256)) * 64) == []
    with pytest.raises(TypeError, match="str or bytes"):
        extract(12345)  # type: ignore[arg-type]


def test_very_long_line_is_clipped_not_scanned():
    huge = "x" * 5_000_000
    sigs = extract("error: linker `cc` not found\n" + huge + "\nfatal: " + huge)
    assert sigs[0].kind == "linker-not-found"
    assert all(len(s.excerpt) <= LINE_CAP and len(s.message) <= LINE_CAP for s in sigs)


def test_limit_bounds_result():
    text = "\n".join(f"fatal: refusing to work with branch{chr(97 + n)}" for n in range(20))
    assert len(extract(text, limit=3)) == 3
    assert extract(text, limit=0) == []


def test_signature_json_shape():
    data = extract("fatal: not a git repository (or any of the parent directories): .git")[0].to_dict()
    assert set(data) == {"tool", "kind", "message", "frames", "sig_sha", "family", "rule",
                         "excerpt", "line", "loose"}
    assert re.fullmatch(r"[0-9a-f]{64}", data["sig_sha"])


def test_frames_fold_generated_code_and_collapse_recursion():
    frames = [fr.make(f, "Walker.java") for f in ("a.Walker.visit", "a.Walker.visit",
                                                   "a.Walker.visit", "a.Main.lambda$main$0")]
    assert [f.text for f in fr.collapse(frames)] == ["a.Walker.visit (Walker.java)",
                                                     "a.Main.lambda$main (Walker.java)"]
    assert fr.make("X.y$$Lambda$123/0x0000000800c0b8c8.apply", "").function == "X.y$$Lambda.apply"
    assert fr.make("new Hash", "node:internal/crypto/hash") is None
    assert fr.make("createHash", "node:crypto") == fr.make("createHash", "crypto.js")


def test_mangled_go_trace_from_fuzzing_still_extracts():
    """Regression: a corrupt byte inside a Go argument list once made a regex backtrack
    exponentially; the frame parser now cuts arguments at the last `(`."""
    case = next(c for c in rows("cases.jsonl") if c["id"] == "go-write-to-uninitialized-map-field")
    mangled = case["recurrence"].encode().replace(b"0xc420bfa900, ", b"0xc420bfa900\xc9 ")
    assert mangled != case["recurrence"].encode()
    sig = extract(mangled)[0]
    assert (sig.kind, sig.message) == ("panic", "assignment to entry in nil map")
    assert sig.frames == ("github.(*ClientPool).Subscribe (client.go)",)


def test_a_last_resort_line_is_loose_and_a_known_rule_is_not():
    """Loose signatures name a failure no rule knows; the lookup gives them tier 1 only
    where the content agrees (tests/test_tier1_loose.py)."""
    loose = extract("Unable to reach the licence daemon on 10.0.0.7: handshake refused")
    assert loose and all(sig.loose for sig in loose)
    strong = extract("fatal: not a git repository (or any of the parent directories): .git")
    assert strong and not strong[0].loose


# Two pastes of one failure that differ only where a tool, a locale or a wrapper does:
# each pair must give one signature (docs/SIGNATURES.md, normalisation table).
SAME_FAILURE_TWO_WAYS = [
    ("smart-quotes", "main.c:3:14: error: \u2018bool\u2019 cannot be defined via \u2018typedef\u2019",
     "main.c:3:14: error: 'bool' cannot be defined via 'typedef'"),
    ("path-before-a-full-stop",
     "Error: Dependencies lock file is not found in /home/runner/work/app/app. Supported "
     "file patterns: package-lock.json",
     "Error: Dependencies lock file is not found in /github/workspace. Supported file "
     "patterns: package-lock.json"),
    ("sentence-case", "fatal: The remote end hung up unexpectedly",
     "fatal: the remote end hung up unexpectedly"),
    ("wrapped-generic-error",
     "Error: buildx failed with: ERROR: multiple platforms feature is currently not "
     "supported for docker driver.",
     "ERROR: multiple platforms feature is currently not supported for docker driver"),
    ("chromium-log-prefix",
     "[1025/084740.006078:ERROR:zygote_host_impl_linux.cc(88)] Running as root without "
     "--no-sandbox is not supported. See https://crbug.com/638180.",
     "[0808/045944.133174:ERROR:zygote_host_impl_linux.cc(90)] Running as root without "
     "--no-sandbox is not supported. See https://crbug.com/638180."),
    ("logfmt-err-value",
     'ts=2024-03-01T10:00:00.000Z caller=main.go:1033 level=error component=tsdb '
     'err="opening storage failed: lock DB directory: open lock: permission denied"',
     "opening storage failed: lock DB directory: open lock: permission denied"),
    ("terminal-wide-banner",
     "_____________________ ERROR collecting tests/test_api.py _____________________\n"
     "E   fixture not found",
     "_______ ERROR collecting tests/test_api.py _______\nE   fixture not found"),
    ("markdown-fence-on-the-line",
     "```\nValueError: Excel file format cannot be determined, you must specify an engine ```",
     "ValueError: Excel file format cannot be determined, you must specify an engine"),
    ("jvm-identity-hash",
     "java.lang.IllegalAccessError: class org.apache.spark.storage.StorageUtils$ (in unnamed "
     "module @0x4d5650ae) cannot access class sun.nio.ch.DirectBuffer",
     "java.lang.IllegalAccessError: class org.apache.spark.storage.StorageUtils$ (in unnamed "
     "module @0x5a6d67c3) cannot access class sun.nio.ch.DirectBuffer"),
    ("version-ending-a-sentence",
     "Error: build requires toolkit 2.4.1. Please upgrade the toolkit",
     "Error: build requires toolkit 2.4.7. Please upgrade the toolkit"),
]


@pytest.mark.parametrize("first, second", [p[1:] for p in SAME_FAILURE_TWO_WAYS],
                         ids=[p[0] for p in SAME_FAILURE_TWO_WAYS])
def test_one_failure_printed_two_ways_gives_one_signature(first, second):
    a, b = extract(first), extract(second)
    assert a and b and a[0].sig_sha == b[0].sig_sha, (a[0].text, b[0].text)


def test_sentence_case_folds_a_plain_word_only():
    """`The` → `the`; a CamelCase error name and an acronym keep their case."""
    assert extract("fatal: The remote end hung up")[0].message.startswith("the remote")
    assert extract("error: ModuleNotFoundError: no module named 'yaml'")[0].message \
        == "ModuleNotFoundError: no module named 'yaml'"
    assert extract("error: EACCES: permission denied")[0].message.startswith("EACCES")


def test_a_bare_level_word_before_a_sentence_goes():
    """yarn's `error An unexpected…` and a paste without the level word: one message (the
    rules differ, yarn's and a generic one, so tier 1 matches them as "same message")."""
    yarn = extract('[ERROR] error An unexpected error occurred: "https://registry.yarnpkg.com/'
                   'x: ESOCKETTIMEDOUT".')[0]
    bare = extract('An unexpected error occurred: "https://registry.npmjs.org/x: '
                   'ESOCKETTIMEDOUT".')[0]
    assert yarn.message == bare.message == \
        'an unexpected error occurred: "<https url>: ESOCKETTIMEDOUT"'
    assert extract("ERROR Failed to compile with 3 errors")[0].message.startswith("failed")
