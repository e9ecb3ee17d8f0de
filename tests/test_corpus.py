"""The corpus rules (tests/corpus/rules.py) on rows written here, the likeness they rest
on, the repo's corpus passing them, and the benchmark vault taking a look-alike's `a`
as its case."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
sys.path.insert(0, str(ROOT / "bench"))

import failure_corpus  # noqa: E402
import retrieval  # noqa: E402
import rules  # noqa: E402
from likeness import (Paste, alike_pairs, headline, headline_likeness,  # noqa: E402
                      headlines, likeness, ratio, words)

TRACE = """$ python manage.py migrate
Traceback (most recent call last):
  File "/srv/app/manage.py", line 22, in <module>
    main()
  File "/srv/app/.venv/lib/python3.11/site-packages/django/db/utils.py", line 91, in load
    raise ImproperlyConfigured(msg)
django.core.exceptions.ImproperlyConfigured: 'postgresql' isn't an available database backend
Try using 'django.db.backends.XXX', where XXX is one of: 'mysql', 'oracle', 'sqlite3'"""
WORDS = ("the build cache of this runner holds a stale artifact from another branch and "
         "the job restores it before compiling so every module links against old headers "
         "while the lock file names the new ones and nothing warns about the mismatch").split()


# -- likeness ------------------------------------------------------------------------------

def test_words_collapse_numbers_paths_hashes_and_urls():
    assert words("Error at /home/ci/app/src/x.py:120 (commit 3fa9c21b0e) see https://x.io/a") \
        == ["error", "at", "_path_", "0", "commit", "_hex_", "see", "_url_"]
    assert words(r"C:\Users\ana\AppData\npm.log port 0x1F") == ["_path_", "port", "_hex_"]


def test_an_edited_number_path_or_hash_leaves_two_pastes_equal():
    edited = (TRACE.replace("22", "87").replace("/srv/app", "/home/bo/shop")
              .replace("3.11", "3.12"))
    assert edited != TRACE and likeness(TRACE, edited) == 1.0


def test_one_word_in_a_hundred_changed_is_just_below_one_and_unrelated_text_is_low():
    rng = random.Random(3)
    text = " ".join(rng.sample(WORDS, len(WORDS)) + rng.sample(WORDS, len(WORDS)))
    changed = text.replace("mismatch", "drift", 1)
    assert 0.98 <= likeness(text, changed) < 1.0
    assert likeness(text, TRACE) < 0.2
    assert likeness("", "") == 1.0 and likeness("x", "") == 0.0


def test_alike_pairs_finds_what_comparing_every_pair_finds():
    rng = random.Random(7)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))) for _ in range(30)]
    texts += [t.replace(rng.choice(t.split()), "other", 1) for t in texts[:10]]
    pastes = [Paste(t, n) for n, t in enumerate(texts)]
    for threshold in (0.6, 0.8, 0.95):
        found = {(a.key, b.key) for a, b, _ in alike_pairs(pastes, pastes, threshold)}
        every = {(a.key, b.key) for a in pastes for b in pastes
                 if a is not b and ratio(a, b) >= threshold}
        assert found == every and found


def test_headline_is_the_first_error_line_past_prompts_stamps_and_prefixes():
    assert headline("2024-05-01T10:00:01.123Z npm notice\n"
                    "2024-05-01T10:00:02.001Z npm ERR! code E404") == "npm ERR! code E404"
    assert headline("#12 0.390 Collecting numpy\n#12 1.204 ERROR: No matching distribution"
                    ) == "ERROR: No matching distribution"
    assert headline("db-1  | FATAL:  role \"app\" does not exist") == \
        'FATAL:  role "app" does not exist'
    assert headline("> │ Error: quoted in a box") == "Error: quoted in a box"
    assert headline("ana@box:~/shop$ make\nall done") == "all done"   # no error line: first


def test_headline_candidates_take_a_tracebacks_exception_and_what_a_lead_in_announces():
    assert headlines(TRACE) == [
        "Traceback (most recent call last):",
        "django.core.exceptions.ImproperlyConfigured: 'postgresql' isn't an available "
        "database backend"]
    assert headlines("go: errors parsing go.mod:\n/src/app/go.mod:5: unknown directive: x") \
        == ["go: errors parsing go.mod:", "/src/app/go.mod:5: unknown directive: x"]


def test_headline_likeness_sets_quoted_names_aside_and_takes_the_best_candidate():
    one = "$ ng build\nError: Cannot find module 'left-pad'\nRequire stack: x"
    other = "Error: Cannot find module '@scope/some-other-package/dist/index.js'"
    assert headline_likeness(one, other) == 1.0
    assert headline_likeness("go: errors parsing go.mod:\n/a/b/go.mod:5: unknown directive: x",
                             "go.mod:5: unknown directive: x") >= 0.7
    assert headline_likeness("npm ERR! code ERESOLVE", "fatal: not a git repository") < 0.3


# -- the rules -----------------------------------------------------------------------------

def case(n: int, **fields) -> dict:
    row = {"id": f"t-case-{n}", "tool": "tool", "evidence": TRACE,
           "recurrence": f"Error: the {n} widget exploded in module w{n}",
           "memory": "The settings named a backend package that is not installed; "
                     "install the driver extra.",
           "variant_query": "migrations stopped working", "sources": [f"o/r#{n}", f"o/s#{n}"]}
    return dict(row, **fields)


def lookalike(n: int, a: str, b: str, **fields) -> dict:
    row = {"id": f"t-neg-{n}", "tool": "tool", "a": a, "b": b,
           "a_memory": "cause one, fix one", "b_memory": "cause two, fix two",
           "why_different": "two causes", "a_sources": [f"o/a#{n}"], "b_sources": [f"o/b#{n}"]}
    return dict(row, **fields)


def corpus(cases=(), negatives=(), distractors=()) -> dict:
    return {"cases": list(cases), "negatives": list(negatives), "reference": [],
            "decisions": [], "distractors": list(distractors)}


def test_a_lesson_sharing_six_consecutive_words_with_a_paste_quotes_it():
    six = case(1, memory="We saw the 1 widget exploded in module w1 and fixed the wiring.")
    five = case(2, memory="We saw the 2 widget exploded in the wiring, fixed it.")
    side = lookalike(3, "Error: the 3 widget exploded in module w3", "Error: other",
                     a_memory="Whenever the 3 widget exploded in module w3 we rebuilt.")
    found = rules.near_quotes(corpus([six, five], [side]))
    assert found == ["t-case-1: the lesson quotes its recurrence",
                     "t-neg-3: lesson a quotes its error"]


def test_a_recurrence_that_is_the_evidence_edited_needs_a_verified_flag():
    edited = case(1, recurrence=TRACE.replace("22", "23").replace("/srv/app", "/opt/x"))
    other = case(2)
    assert [p.split(":")[0] for p in rules.edited_recurrences(corpus([edited, other]))] \
        == ["t-case-1"]
    assert rules.edited_recurrences(corpus([dict(edited, recurrence_checked=True)])) == []


def test_look_alike_headlines_must_be_nearly_the_same():
    same = lookalike(1, "$ npm ci\nnpm ERR! code ERESOLVE\nnpm ERR! peer react@17",
                     "npm ERR! code ERESOLVE\nnpm ERR! peer vue@3")
    differ = lookalike(2, "npm ERR! code ERESOLVE", "npm ERR! 404 Not Found - GET https://x.io/y")
    found = rules.headlines(corpus(negatives=[same, differ]))
    assert len(found) == 1 and found[0].startswith("t-neg-2: the headlines")


def test_a_look_alike_side_that_is_a_case_must_name_it():
    known = case(1)
    by_paste = lookalike(1, TRACE.replace("/srv/app", "/home/x"), "Error: b")
    by_thread = lookalike(2, "Error: a", "Error: b", a_sources=["o/s#1"])
    named = lookalike(3, TRACE, "Error: b", a_case="t-case-1")
    wrong = lookalike(4, "Error: nothing alike", "Error: b", a_case="t-case-1")
    other_cause = lookalike(5, TRACE, "Error: b", a_distinct=["t-case-1"])
    b_side = lookalike(6, "Error: a", TRACE)
    b_named = lookalike(7, "Error: a", TRACE, b_case="t-case-1")
    found = rules.side_cases(corpus([known], [by_paste, by_thread, named, wrong, other_cause,
                                              b_side, b_named]))
    assert found == ["t-neg-1: a is case t-case-1; record it as a_case",
                     "t-neg-2: a is case t-case-1; record it as a_case",
                     "t-neg-4: a_case t-case-1 is not the same failure as a",
                     "t-neg-6: b is case t-case-1; record it as b_case"]


def test_a_distractor_copying_a_collected_paste_is_found():
    copy = {"id": "dist-copy", "tool": "tool", "memory": "m",
            "evidence": TRACE.replace("postgresql", "mysql")}
    other = {"id": "dist-other", "tool": "tool", "memory": "m",
             "evidence": "error: linker `cc` not found\n  = note: No such file or directory"}
    refs = {"id": "t-ref-1", "tool": "tool", "query": other["evidence"].replace("cc", "gcc")}
    found = rules.distractor_copies(dict(corpus([case(1)], distractors=[copy, other]),
                                         reference=[refs]))
    assert [p.split(" (")[0] for p in found] == [
        "dist-copy: the evidence copies t-case-1's failure",
        "dist-other: the evidence copies t-ref-1's failure"]


def test_a_thread_backing_two_rows_is_a_problem_unless_the_side_names_its_case():
    first, second = case(1), case(2, sources=["o/r#1", "o/x#2"])
    named = lookalike(1, TRACE, "Error: b", a_sources=["o/r#1"], a_case="t-case-1")
    reused = lookalike(2, "Error: a", "Error: b", b_sources=["o/s#1"])
    b_named = lookalike(3, "Error: a", TRACE, b_sources=["o/s#1"], b_case="t-case-1")
    found = rules.duplicate_threads(corpus([first, second], [named, reused, b_named]))
    assert found == ["o/r#1: the thread backs t-case-1, t-case-2",
                     "o/s#1: the thread backs t-case-1, t-neg-2"]


def test_the_repo_corpus_breaks_no_rule():
    assert rules.problems(failure_corpus.load()) == []


# -- the benchmark vault -----------------------------------------------------------------

@pytest.fixture(scope="module")
def rows() -> dict:
    named = lookalike(1, TRACE, "Error: b", a_case="t-case-1")
    own = lookalike(2, "Error: its own failure", "Error: b")
    out = corpus([case(1)], [named, own])
    for items in out.values():
        for row in items:
            row["split"] = failure_corpus.split_of(row["id"])
    return out


def test_a_look_alike_naming_its_case_gets_no_second_lesson(rows):
    assert [line["id"] for line in retrieval.lesson_lines(rows)] == ["t-case-1", "t-neg-2"]
    alone = dict(rows, cases=[])   # its case not in the vault: its own lesson again
    assert [line["id"] for line in retrieval.lesson_lines(alone)] == ["t-neg-1", "t-neg-2"]


def test_the_vault_answers_a_look_alike_with_its_cases_lesson(rows, tmp_path):
    built = retrieval.build_vault(rows, tmp_path / "vault", tmp_path / "docs")
    lessons = built["lessons"]
    assert lessons["t-neg-1"] == lessons["t-case-1"] and lessons["t-neg-2"]
    assert len(set(lessons.values())) == 2
    imported = json.loads((tmp_path / "retrieval-import.jsonl").read_text().splitlines()[0])
    assert imported["id"] == "t-case-1"
