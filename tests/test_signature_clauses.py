"""Clause keys (`signatures.clauses`): the failure inside a message a wrapper printed with
context, or followed by a sentence of advice, is found from a bare paste, and the
reverse; short errno endings are no key."""

from __future__ import annotations

from poimen.signatures import extract
from poimen.signatures.clauses import CLAUSE_WORDS, clause_keys

WRAPPED = ("==> Error starting agent: Failed to get advertise address: Multiple private "
           "IPs found")
BARE = "starting agent: Failed to get advertise address: Multiple private IPs found"


def test_the_message_comes_first_then_its_closing_clauses():
    keys = clause_keys(WRAPPED)
    assert keys[0] == WRAPPED
    assert keys[1:] == ("failed to get advertise address: Multiple private IPs found",)


def test_a_wrapped_and_a_bare_paste_share_a_key():
    assert set(clause_keys(WRAPPED)) & set(clause_keys(BARE))
    assert BARE not in clause_keys(WRAPPED)   # the shared key is the clause, not either whole


def test_a_clause_shorter_than_the_floor_is_no_key():
    keys = clause_keys("open settings.yaml: no such file or directory")
    assert keys == ("open settings.yaml: no such file or directory",)
    assert all(len(k.split()) >= CLAUSE_WORDS for k in clause_keys(WRAPPED)[1:])


def test_each_key_once_and_an_empty_message_has_none():
    assert clause_keys("") == ()
    message = "a: b: c d e f g h: c d e f g h"
    assert len(clause_keys(message)) == len(set(clause_keys(message)))


def test_keys_of_extracted_signatures_tie_a_logger_line_to_a_bare_error():
    """Two rules, two families, one failure: the logger's context is a prefix."""
    logged = extract("release-bot: ERROR deploy step failed: could not acquire the "
                     "deployment lock held by another release")[0]
    bare = extract("Error: could not acquire the deployment lock held by another release")[0]
    assert logged.family != bare.family and logged.sig_sha != bare.sig_sha
    assert bare.message in clause_keys(logged.message)


def test_a_first_sentence_is_a_key_when_another_tool_stops_there():
    advised = ("can not perform a '--user' install. User site-packages are not visible in "
               "this virtualenv")
    assert clause_keys(advised) == (advised, "can not perform a '--user' install")
    assert clause_keys("no such host. retry later") == ("no such host. retry later",)
