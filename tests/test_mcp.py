"""`mem mcp` as an agent sees it: the MCP SDK's own client over stdio against a real
vault (LanceDB, the ONNX model) seeded through the engine."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp import Client, MCPError, StdioServerParameters

from poimen.derived import record_artifact
from poimen.engine import Engine

MEM = str(Path(sys.executable).parent / "mem")
FAILURE = """\
Traceback (most recent call last):
  File "/srv/shop/tools/release.py", line 4, in <module>
    from distutils.version import LooseVersion
ModuleNotFoundError: No module named 'distutils'
"""
LESSON = ("Python 3.12 removed distutils; release.py imported LooseVersion from it. "
          "Replaced it with packaging.version.Version and added packaging to the deps.")
SKILL = ("When a release script dies on a missing distutils module, switch the version "
         "comparison to packaging.version.Version and pin packaging in the release "
         "requirements so that every builder gets the same parser.")
SECRET = "ghp_" + "Q7w8E9r0T1" * 4
OTHER_FAILURE = f"""\
error: failed to push some refs to 'https://bot:{SECRET}@git.example.com/shop.git'
fatal: unable to access 'https://git.example.com/shop.git/': The requested URL returned error: 403
"""


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> dict:
    vault = tmp_path_factory.mktemp("mcp") / "vault"
    engine = Engine(vault, "shop")
    evidence = engine.ingest(FAILURE, source="terminal").evidence_sha
    lesson = engine.remember("L1", LESSON, [evidence])
    assert lesson.verdict == "accepted"
    record_artifact(vault, "skill", "distutils-removed", SKILL)
    sig = engine.signatures(FAILURE)[0].sig_sha
    return {"vault": vault, "lesson": lesson.sha, "evidence": evidence, "sig": sig}


def session(seeded, steps):
    """Run `steps(client)` in one MCP session with a `mem mcp` subprocess."""
    server = StdioServerParameters(command=MEM, args=[
        "--vault", str(seeded["vault"]), "--project", "shop", "mcp"])

    async def run():
        async with Client(server) as client:
            return await steps(client)
    return asyncio.run(asyncio.wait_for(run(), 300))


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content)


def test_initialize_and_list_tools(seeded):
    async def steps(client):
        return client.server_info, client.server_capabilities, await client.list_tools()
    info, capabilities, listed = session(seeded, steps)
    assert info.name == "poimen"
    assert capabilities.tools is not None and capabilities.resources is not None
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {"what_do_we_know", "remember_fix", "failure_signatures",
                          "show_memory"}
    assert set(tools["what_do_we_know"].input_schema["properties"]) == {
        "signature_source", "tool", "task", "scope", "budget", "request_id"}
    assert "tier" in tools["what_do_we_know"].description.lower()
    assert tools["remember_fix"].input_schema["required"] == ["lesson"]
    for tool in tools.values():
        assert len(tool.description) > 150, tool.name


def test_a_recorded_failure_gets_its_tier_1_lesson(seeded):
    async def steps(client):
        return await client.call_tool("what_do_we_know", {"signature_source": FAILURE})
    result = session(seeded, steps)
    assert not result.is_error
    body = result.structured_content
    assert body["tier"] == 1
    lead = body["lessons"][0]
    assert (lead["tier"], lead["sha"], lead["text"]) == (1, seeded["lesson"], LESSON)
    assert seeded["evidence"] in lead["parents"]
    assert text_of(result).startswith("Tier 1 · seen")
    assert json.loads(text_of(result).split("\n\n", 1)[1]) == body


def test_a_repeated_request_id_counts_once(seeded):
    async def steps(client):
        ask = {"signature_source": FAILURE, "request_id": "ci-run-7"}
        return [(await client.call_tool("what_do_we_know", ask)).structured_content
                for _ in range(2)]
    first, again = session(seeded, steps)
    assert first["lessons"][0]["seen_count"] == again["lessons"][0]["seen_count"]


def test_bad_calls_are_errors_and_the_server_goes_on(seeded):
    async def steps(client):
        out = {"wrong type": await client.call_tool("what_do_we_know", {"budget": "ten"}),
               "no key": await client.call_tool("what_do_we_know", {}),
               "bad scope": await client.call_tool("what_do_we_know",
                                                   {"task": "x", "scope": "galaxy"}),
               "unknown tool": await client.call_tool("forget_everything", {}),
               "unknown memory": await client.call_tool("show_memory", {"sha": "f" * 64})}
        with pytest.raises(MCPError) as raised:
            await client.read_resource(f"poimen://memory/{'0' * 64}")
        out["resource"] = raised.value
        out["after"] = await client.call_tool("what_do_we_know", {"signature_source": FAILURE})
        return out
    out = session(seeded, steps)
    for name in ("wrong type", "no key", "bad scope", "unknown tool", "unknown memory"):
        assert out[name].is_error, name
    assert "budget" in text_of(out["wrong type"])
    assert "at least one of" in text_of(out["no key"])
    assert "no memory" in text_of(out["unknown memory"])
    assert "no memory" in str(out["resource"])
    assert not out["after"].is_error and out["after"].structured_content["tier"] == 1


def test_signatures_memory_and_resources(seeded):
    async def steps(client):
        return (await client.call_tool("failure_signatures", {"output": FAILURE}),
                await client.call_tool("show_memory", {"sha": seeded["lesson"]}),
                await client.list_resources(),
                await client.read_resource(f"poimen://memory/{seeded['lesson']}"))
    sigs, shown, listed, read = session(seeded, steps)
    first = sigs.structured_content["signatures"][0]
    assert (first["sig_sha"], first["kind"]) == (seeded["sig"], "ModuleNotFoundError")
    memory = shown.structured_content["memory"]
    assert memory["text"] == LESSON and memory["parents"] == [seeded["evidence"]]
    assert seeded["sig"] in memory["signatures"]
    symptoms = shown.structured_content["symptoms"]
    assert symptoms["memory_sha"] == seeded["lesson"] and symptoms["lines"]
    uris = [str(r.uri) for r in listed.resources]
    assert f"poimen://memory/{seeded['lesson']}" in uris
    assert json.loads(read.contents[0].text)["memory"]["sha"] == seeded["lesson"]


def test_remember_fix_goes_through_redaction_the_derived_filter_and_the_gate(seeded):
    async def steps(client):
        return {
            "new": await client.call_tool("remember_fix", {
                "evidence": OTHER_FAILURE, "lesson": "The bot's push token had expired; "
                "a new fine-grained token in the CI secrets fixed the 403."}),
            "asked": await client.call_tool("what_do_we_know",
                                            {"signature_source": OTHER_FAILURE}),
            "no evidence": await client.call_tool("remember_fix", {
                "lesson": "Restarting the runner fixed it."}),
            "derived": await client.call_tool("remember_fix", {
                "evidence": SKILL, "lesson": "Use packaging instead of distutils."})}
    out = session(seeded, steps)
    new = out["new"].structured_content
    assert new["verdict"] == "accepted", new
    assert new["evidence"]["redactions"] and new["parents"] == [new["evidence"]["evidence_sha"]]
    asked = out["asked"].structured_content
    assert asked["tier"] == 1 and asked["lessons"][0]["sha"] == new["sha"]
    assert out["no evidence"].structured_content["verdict"] == "rejected"
    derived = out["derived"].structured_content
    assert derived["evidence"]["derived"]["name"] == "distutils-removed"
    assert derived["verdict"] == "rejected" and derived["parents"] == []
    log = "".join(p.read_text() for p in (seeded["vault"] / "log").rglob("*.jsonl"))
    assert SECRET not in log and SECRET not in text_of(out["asked"])
