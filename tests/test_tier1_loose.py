"""Tier 1 on a loose signature (a last-resort rule's generic line): a lesson it links is
tier 1 only when the fused order agrees, so one generic headline over two recorded
causes answers with the cause whose details the paste shares, and leaves the other at
tier 2. A real vault (LanceDB, the ONNX model)."""

from __future__ import annotations

import pytest

from poimen.engine import Engine
from poimen.signatures import extract

HEAD = "licensed: Unable to reach the licence daemon on {ip}: handshake refused"
CAUSES = {
    "certificate": ("  cause: the certificate served by the daemon host expired last night",
                    "The licence daemon's TLS certificate had lapsed; renewing it on the "
                    "daemon host and restarting the service fixed the builds."),
    "firewall": ("  cause: firewall drops port 27000 between the build agents and the daemon",
                 "A firewall rule dropped the licence port between the build agents and the "
                 "daemon host; opening it for the agent subnet fixed the builds."),
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    engine = Engine(tmp_path_factory.mktemp("loose") / "vault", project="p")
    lessons = {}
    for cause, (detail, lesson) in CAUSES.items():
        evidence = engine.ingest(HEAD.format(ip="10.0.0.7") + "\n" + detail).evidence_sha
        lessons[engine.remember("L1", lesson, parents=[evidence]).sha] = cause
    return engine, lessons


def test_the_headline_is_loose():
    sigs = extract(HEAD.format(ip="10.0.0.7"))
    assert sigs and all(sig.loose for sig in sigs)


@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_the_cause_whose_details_the_paste_shares_is_tier_1_the_other_tier_2(vault, cause):
    engine, lessons = vault
    paste = HEAD.format(ip="10.20.30.40") + "\n" + CAUSES[cause][0]
    body = engine.context({"signature_source": paste})
    tiers = {lessons[i["sha"]]: i["tier"] for i in body["lessons"] if i["sha"] in lessons}
    other = next(c for c in CAUSES if c != cause)
    assert tiers[cause] == 1 and body["tier"] == 1
    assert tiers.get(other, 2) == 2
    sig = body["signatures"][0]
    assert sig["loose"] and sig["known"] and sig["lessons"] == 2
