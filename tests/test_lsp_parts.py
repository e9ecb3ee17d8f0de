"""The language server's own parts: settings, cards, the intake, frames, resolution capture.

The end-to-end behaviour (through the protocol, over a real vault) is in test_lsp.py.
"""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from pygls.uris import from_fs_path

from poimen.lsp import cards
from poimen.lsp.cache import AnswerCache, Intake
from poimen.lsp.inputs import frames_in_workspace, strip_ansi
from poimen.lsp.resolution import changed_since, snapshot
from poimen.lsp.settings import Settings, parse


# -- settings ----------------------------------------------------------------------------
def test_settings_take_camel_case_and_a_poimen_section():
    settings, errors = parse({"poimen": {"debounceMs": 20, "queueLimit": 8,
                                         "generatorUrl": "http://127.0.0.1:9/v1"}})
    assert errors == []
    assert (settings.debounce_ms, settings.queue_limit) == (20, 8)
    assert settings.generator_url == "http://127.0.0.1:9/v1"


def test_an_invalid_setting_is_reported_and_keeps_its_default_while_others_apply():
    settings, errors = parse({"budget": -5, "generator": "gpt", "project": "shop"})
    assert settings.budget == Settings().budget
    assert settings.generator == "embedded"
    assert settings.project == "shop"
    assert len(errors) == 2 and any("'budget'" in e for e in errors)


def test_settings_that_are_not_an_object_are_reported():
    settings, errors = parse(["vault"])
    assert settings == Settings() and "must be an object" in errors[0]


def test_later_settings_lay_over_earlier_ones():
    first, _ = parse({"project": "shop", "budget": 300})
    second, _ = parse({"budget": 900}, first)
    assert (second.project, second.budget) == ("shop", 900)


# -- cards -------------------------------------------------------------------------------------
LESSON = {"level": "L1", "sha": "a" * 64, "text": "Pin the widget to 2.x.", "parents": ["e" * 64],
          "matched_kind": "signature", "score": 0.93}


def test_tier_one_headline_counts_and_dates():
    response = {"tier": 1, "lessons": [dict(LESSON, tier=1, seen_count=3,
                                            last_seen="2026-07-02T10:00:00Z")]}
    assert cards.card(response).splitlines()[0] == "Tier 1 · seen 3× · last 2026-07-02"


def test_tier_one_without_a_lesson_says_so():
    response = {"tier": 1, "lessons": [], "signatures": [
        {"known": True, "seen_count": 2, "last_seen": "2026-06-30"}]}
    text = cards.card(response)
    assert text.splitlines()[0] == "Tier 1 · seen 2× · last 2026-06-30"
    assert cards.NO_LESSON in text


def test_tier_two_headline_names_the_matched_kind_and_score():
    response = {"tier": 2, "lessons": [dict(LESSON, tier=2, matched_kind="symptom", score=0.7061)]}
    assert cards.headline(response) == "Tier 2 · similar (symptom 0.71)"


def test_tier_comes_from_the_response_not_from_which_items_come_first():
    """A tier-3 response whose lessons list is not empty still says tier 3 and leads with
    the reference (the lesson is below the floor the engine keeps for tier 2)."""
    reference = {"tier": 3, "level": "R", "sha": "r" * 64, "text": "Use a token.",
                 "heading": "Cloning with HTTPS URLs", "score": 0.5}
    response = {"tier": 3, "lessons": [dict(LESSON, tier=2)], "references": [reference]}
    text = cards.card(response)
    assert text.splitlines()[0] == "Tier 3 · reference: nobody here has hit this"
    assert "Use a token." in text and "Pin the widget" not in text.split("Also:")[0]


def test_no_answer_at_all():
    assert cards.headline({"tier": None, "lessons": []}) == cards.NO_ANSWER


def test_card_shows_provenance_and_link():
    response = {"tier": 1, "lessons": [dict(LESSON, tier=1, seen_count=1)]}
    provenance = {"e" * 64: {"level": "L0", "source": "terminal", "project": "shop",
                             "created": "2026-07-01T09:00:00Z"}}
    text = cards.card(response, provenance, "file:///tmp/a.md")
    assert "L0 `eeeeeeeeee` · terminal · shop · 2026-07-01" in text
    assert "[Full answer](file:///tmp/a.md)" in text
    assert "L1 · memory `aaaaaaaaaa`" in text


# -- the cache and the intake ---------------------------------------------------------------
def test_answer_cache_is_bounded_least_recently_used():
    cache = AnswerCache(limit=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and len(cache) == 2


def test_intake_runs_only_the_latest_input_per_key():
    ran = []

    async def scenario():
        intake = Intake(lambda job: job(), delay=0.05, limit=10)
        for n in range(5):
            intake.submit("file:///a.log", _job(ran, ("a", n)))
        intake.submit("file:///b.log", _job(ran, ("b", 0)))
        await intake.settle("file:///a.log")
        await intake.settle("file:///b.log")

    asyncio.run(scenario())
    assert sorted(ran) == [("a", 4), ("b", 0)]


def test_intake_is_bounded_and_counts_what_it_dropped():
    ran = []

    async def scenario():
        intake = Intake(lambda job: job(), delay=10, limit=3)
        for n in range(8):
            intake.submit(f"uri{n}", _job(ran, n))
        assert intake.waiting() == 3
        for n in range(8):
            await intake.settle(f"uri{n}")
        return intake.dropped

    assert asyncio.run(scenario()) == 5
    assert sorted(ran) == [5, 6, 7]


def test_a_failing_job_does_not_stop_the_intake():
    ran = []

    async def boom():
        raise RuntimeError("engine down")

    async def scenario():
        intake = Intake(lambda job: job(), delay=0, limit=10)
        intake.submit("a", boom)
        await intake.settle("a")
        intake.submit("b", _job(ran, "b"))
        await intake.settle("b")

    asyncio.run(scenario())
    assert ran == ["b"]


def _job(ran, value):
    async def job():
        ran.append(value)
    return job


# -- terminal output ------------------------------------------------------------------------------
def test_ansi_is_stripped():
    assert strip_ansi("\x1b[31mError\x1b[0m: boom\r\n") == "Error: boom\n"


def test_frames_map_to_workspace_files_only(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("import os\n" * 5)
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "x.py").write_text("x\n")
    output = (f'tests/conftest.py:4: in <module>\n'
              f'  File "{tmp_path}/.venv/lib/x.py", line 1, in f\n'
              f'  File "/home/someone/elsewhere/main.py", line 30, in <module>\n'
              f'src/missing.py:3: error\n')
    frames = frames_in_workspace(output, str(tmp_path), [str(tmp_path)])
    assert frames == [(from_fs_path(str(tmp_path / "tests" / "conftest.py")), 3)]


# -- resolution capture ------------------------------------------------------------------------------
def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_changed_since_sees_only_what_changed_after_the_failure(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 1\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "init")
    (tmp_path / "b.py").write_text("b = 2\n")          # dirty already when it failed
    snap = snapshot(str(tmp_path))
    (tmp_path / "a.py").write_text("a = 2\n")          # the fix
    (tmp_path / "new.py").write_text("n = 1\n")
    assert changed_since(snap) == ["a.py", "new.py"]
    (tmp_path / "b.py").write_text("b = 3\n")
    assert sorted(changed_since(snap)) == ["a.py", "b.py", "new.py"]


def test_no_snapshot_outside_git(tmp_path):
    assert snapshot(str(tmp_path)) is None and changed_since(None) == []


@pytest.mark.parametrize("bad", [None, 0, "x"])
def test_parse_never_raises(bad):
    settings, _ = parse(bad)
    assert isinstance(settings, Settings)

