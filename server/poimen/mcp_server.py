"""`mem mcp`: the Model Context Protocol adapter (the official `mcp` SDK, stdio).

Four tools and one resource template over the same `Engine` the CLI, HTTP and LSP
adapters call. Like them it translates and decides nothing: the answer is
`Engine.context`, the gate is `Engine.remember`, redaction and the derived filter are
`Engine.ingest`'s. Engine calls run one at a time (the SDK runs tools in threads).
"""

from __future__ import annotations

import json
import threading
from typing import Annotated, Any, Callable, Literal, Optional

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import Field

from .lsp.cards import headline

MEMORY_URI = "poimen://memory/{sha}"
LISTED_MEMORIES = 500

INSTRUCTIONS = """\
poimen remembers how software failures in this team's projects were fixed. When a \
command, test or build fails, call what_do_we_know with the error output before \
debugging from scratch: a tier-1 answer is this exact failure seen before, with the \
lesson recorded then; tier 2 is a similar failure's lesson; tier 3 is documentation \
only. After fixing a failure, call remember_fix with the error output and one or two \
sentences on the cause and the fix, so the next person gets it."""


class PoimenMCP(MCPServer):
    """An MCPServer whose resource list is the vault's live L1/L2 memories."""

    def __init__(self, call: Callable[[Callable], Any], **kwargs):
        super().__init__(**kwargs)
        self._call = call

    async def list_resources(self) -> list[Resource]:
        memories = await anyio.to_thread.run_sync(self._call, lambda e: e.memories())
        return await super().list_resources() + [
            Resource(uri=MEMORY_URI.format(sha=m["sha"]), name=m["sha"][:12],
                     title=_first_line(m["text"]), mime_type="application/json",
                     description=f"{m['level']} lesson, project {m['project'] or '?'}, "
                                 f"recorded {str(m['created'])[:10]}")
            for m in memories[:LISTED_MEMORIES]]


def build(open_engine: Callable[[], Any]) -> PoimenMCP:
    """The server; `open_engine()` is called once, on the first tool call."""
    lock, engines = threading.Lock(), []

    def call(fn: Callable):
        with lock:
            try:
                if not engines:
                    engines.append(open_engine())
                return fn(engines[0])
            except told_errors() as exc:   # the caller's to read; the SDK hides others
                raise ToolError(str(exc)) from exc

    server = PoimenMCP(call, name="poimen", title="poimen: what we know about failures",
                       instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             idempotent_hint=False, open_world_hint=False))
    def what_do_we_know(
        signature_source: Annotated[Optional[str], Field(
            description="The failure's raw output, pasted as printed: traceback, compiler "
                        "or test-runner errors, a CI log excerpt. The best key: its "
                        "failure signature finds exact past occurrences.")] = None,
        tool: Annotated[Optional[str], Field(
            description="The tool that failed or that the task is about (npm, pytest, "
                        "cargo, docker…); inferred from signature_source when omitted.")] = None,
        task: Annotated[Optional[str], Field(
            description="What you are trying to do, in a sentence, when there is no "
                        "error output yet (e.g. 'upgrade to Python 3.12').")] = None,
        scope: Annotated[Optional[Literal["project", "all-projects"]], Field(
            description="'project': lessons of this project only; 'all-projects': every "
                        "project in the vault. Default: all-projects when "
                        "signature_source is given, else project.")] = None,
        budget: Annotated[Optional[int], Field(
            gt=0, description="Most tokens the answer may use (default 1200). Tier-1 "
                              "lessons are never dropped.")] = None,
        request_id: Annotated[Optional[str], Field(
            max_length=200, description="Any id of this occurrence of the failure; asking "
                                        "again with the same id does not count it as seen "
                                        "again.")] = None,
    ) -> CallToolResult:
        """What do we already know about this failure, tool or task? Call it first when a
        command, build or test fails (pass the error output as signature_source), or
        before a task that has gone wrong here before (pass tool and task). Give at
        least one of signature_source, tool, task.

        The answer's `tier` says how it was found: 1 = this exact failure signature was
        seen here before and the lessons recorded for it follow (trust these most); 2 =
        lessons about similar failures (check they apply); 3 = documentation only,
        nobody here has hit it; null = nothing known. Each lesson carries its own tier,
        level, sha (for show_memory), seen_count and the evidence shas it rests on."""
        request = {"signature_source": signature_source, "tool": tool, "task": task,
                   "scope": scope, "budget": budget, "request_id": request_id}
        body = call(lambda e: e.context({k: v for k, v in request.items() if v is not None}))
        text = f"{headline(body)}\n\n{json.dumps(body, indent=1, ensure_ascii=False)}"
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=body)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             idempotent_hint=False, open_world_hint=False))
    def remember_fix(
        lesson: Annotated[str, Field(
            min_length=1, description="How the failure was fixed and why it happened, in "
                                      "one to three plain sentences a colleague can act on.")],
        evidence: Annotated[Optional[str], Field(
            description="The failure's raw output (what you would pass to "
                        "what_do_we_know). Recorded as the lesson's evidence; secrets "
                        "are redacted first.")] = None,
        parents: Annotated[Optional[list[str]], Field(
            description="Shas of evidence already recorded (for an L1), or of L1/L2 "
                        "lessons (for an L2).")] = None,
        level: Annotated[Literal["L1", "L2"], Field(
            description="L1: a lesson about one failure (default). L2: a general lesson "
                        "drawn from several L1 lessons, given as parents.")] = "L1",
        tool: Annotated[Optional[str], Field(
            description="The tool that printed the evidence, when known.")] = None,
        supersedes: Annotated[Optional[str], Field(
            description="Sha of a recorded lesson this one corrects (it is then no "
                        "longer given as an answer).")] = None,
    ) -> dict[str, Any]:
        """Propose a lesson about a failure you fixed, citing its evidence, so the next
        person who hits it gets the answer. Call it after a fix is confirmed (the
        command or test passes), not for guesses. An L1 must cite evidence: pass the
        error output as `evidence`, or evidence shas as `parents`.

        The memory gate decides: `verdict` is `accepted` (new lesson, `sha` is its id),
        `reinforced` (a near-duplicate exists: `sha` is that lesson) or `rejected`
        (`reason` says why, e.g. no evidence). Evidence that quotes poimen's own output
        is not taken as evidence (`evidence.derived` says what it matched)."""
        def run(engine):
            cited = list(parents or [])
            ingested = None
            if evidence is not None:
                ingested = engine.ingest(evidence, source="transcript", tool=tool)
                if ingested.evidence_sha:
                    cited.append(ingested.evidence_sha)
            result = engine.remember(level, lesson, cited, supersedes)
            return {**result.to_json(), "parents": cited,
                    "evidence": ingested.to_json() if ingested else None}
        return call(run)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def failure_signatures(
        output: Annotated[str, Field(description="Raw failure output (log, traceback, "
                                                 "compiler errors).")],
        tool: Annotated[Optional[str], Field(
            description="Tool hint; orders its signatures first, never changes a "
                        "sig_sha.")] = None,
    ) -> dict[str, Any]:
        """The normalised failure signatures found in some output: tool, kind, the
        normalised message and frames each `sig_sha` covers, and the rule that matched.
        Use it to see why two failures count as the same one (equal sig_sha) or not;
        it records nothing."""
        return {"signatures": [s.to_dict() for s in call(lambda e: e.signatures(output, tool))]}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def show_memory(
        sha: Annotated[str, Field(min_length=1, description="A memory's full sha, as "
                                  "what_do_we_know or remember_fix returned it.")],
    ) -> dict[str, Any]:
        """One recorded memory in full: its text, level, project, the evidence or lessons
        it rests on, its signatures, what superseded it, and its symptom projection
        (the error messages and behaviour it is expected to explain, with the model
        that wrote them)."""
        memory, symptoms = call(lambda e: (e.memory(sha.strip()), e.symptoms(sha.strip())))
        if memory is None:
            raise ToolError(f"no memory {sha!r}: pass a full sha from what_do_we_know, "
                             "remember_fix or the poimen://memory/ resources")
        return {"memory": memory, "symptoms": symptoms}

    @server.resource(MEMORY_URI, name="memory", mime_type="application/json",
                     description="A recorded lesson with its symptom projection.")
    def memory_resource(sha: str) -> str:
        memory, symptoms = call(lambda e: (e.memory(sha), e.symptoms(sha)))
        if memory is None:
            raise ResourceNotFoundError(f"no memory {sha}")
        return json.dumps({"memory": memory, "symptoms": symptoms}, indent=1,
                          ensure_ascii=False)

    return server


def told_errors() -> tuple[type[Exception], ...]:
    """The errors whose message is for the caller (as `mem` prints them)."""
    from .config import SettingsError
    from .embed import EmbedderUnavailable
    from .engine import InputError
    from .log import LogCorrupt
    from .lookup import BadContextRequest
    from .vault import VaultError

    return (InputError, BadContextRequest, SettingsError, VaultError, LogCorrupt,
            EmbedderUnavailable, OSError)


def _first_line(text: str, limit: int = 100) -> str:
    line = next((l.strip() for l in text.splitlines() if l.strip()), "")
    return line if len(line) <= limit else line[:limit - 1] + "…"
