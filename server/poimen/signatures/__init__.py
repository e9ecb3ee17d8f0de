"""Failure signatures: extract, normalise and hash failures found in raw output.

`extract(text)` returns one `Signature` per distinct failure, root error first. `sig_sha`
covers (tool, kind, normalised message, raise-site frame) and is what tier 1 matches;
`family` (tool + kind) is the coarser key. See docs/SIGNATURES.md for the rules.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

from ..canonical import canonical, sha256_text
from .normalise import normalise
from .prepare import decode, lines_of
from .rules import Ctx, Hit, line_hit
from .tools import BY_KEY, COVERS, HINTS, KEY_RE, LAST_RESORT, RULES

__all__ = ["Signature", "extract", "infer_tool", "TOOL_ALIASES"]

EXCERPT_LINES = 12
EXCERPT_CHARS = 1200
SCAN_HITS = 512  # distinct hits after which a scan stops (bounded work on hostile input)

# `--tool` values and the rule tools they prefer (the hint orders results, never the hash)
TOOL_ALIASES = {
    "rust": ("rust", "cargo"), "rustc": ("cargo", "rust"), "cargo": ("cargo", "rust"),
    "ssl": ("tls",), "tls": ("tls",), "kubernetes": ("kubernetes", "kubectl"),
    "k8s": ("kubernetes", "kubectl"), "kubectl": ("kubectl", "kubernetes"),
    "webpack": ("webpack", "node"), "jest": ("jest", "node"), "node": ("node",),
    "typescript": ("tsc",), "pytest": ("pytest", "python"), "python": ("python", "pytest"),
    "spring": ("spring-boot", "java"), "gradle": ("gradle", "java", "kotlin"),
    "maven": ("maven", "java"), "docker-compose": ("docker",), "gcc": ("gcc", "ld"),
    "cmake": ("cmake", "gcc", "ld"), "postgresql": ("postgres",), "kong": ("kong", "http"),
    "nginx": ("nginx", "http"),
}


@dataclass(frozen=True)
class Signature:
    tool: str
    kind: str
    message: str
    frames: tuple[str, ...]
    sig_sha: str
    family: str
    rule: str
    excerpt: str
    line: int
    loose: bool = False  # a last-resort rule's generic line: names the failure, too loosely
                         # to claim a tier-1 lesson

    def to_dict(self) -> dict:
        data = asdict(self)
        data["frames"] = list(self.frames)
        return data

    @property
    def text(self) -> str:
        """What the hash covers, as a person reads it."""
        frames = "".join(f"\n  at {f}" for f in self.frames)
        return f"{self.tool} {self.kind}: {self.message}{frames}"


@lru_cache(maxsize=4096)
def _norm(text: str) -> str:
    return normalise(text)


def _signature(hit: Hit, rule: str, lines: list[str]) -> Signature:
    kind = " ".join((hit.kind or hit.tool).split())
    message = _norm(hit.message)
    frames = tuple(_norm(f) for f in hit.frames if f)
    sha = sha256_text(canonical([hit.tool, kind, message, list(frames)]))
    end = min(hit.end, hit.start + EXCERPT_LINES - 1)
    excerpt = "\n".join(t.strip() for t in lines[hit.start:end + 1])[:EXCERPT_CHARS]
    return Signature(hit.tool, kind, message, frames, sha, f"{hit.tool}:{kind}", rule, excerpt,
                     hit.start, rule in LAST_RESORT)


@lru_cache(maxsize=8192)
def _candidates(text: str) -> tuple[int, ...]:
    matched: set[int] = set()
    for key in {m.group(0) for m in KEY_RE.finditer(text.lower())}:
        for covered in COVERS[key]:
            matched |= BY_KEY[covered]
    return tuple(sorted(matched))


def _scan(ctx: Ctx, limit: int) -> list[Signature]:
    """Line by line, first matching rule wins; stops once `limit` strong signatures are in
    (nothing later can outrank them) or after SCAN_HITS distinct ones."""
    lines, found, seen = ctx.lines, [], set()
    strong = 0
    i = 0
    while i < len(lines) and len(seen) < SCAN_HITS and strong < limit:
        text = lines[i]
        claimed = i
        if text.strip():
            for n in _candidates(text):
                rule = RULES[n]
                if rule.needs and not ctx.has(rule.needs):
                    continue
                m = rule.trigger.search(text)
                if not m:
                    continue
                if rule.consequence:
                    break
                made = rule.build(ctx, i, m) if rule.build else line_hit(rule, i, m)
                if not made:
                    continue
                for hit in ([made] if isinstance(made, Hit) else made):
                    sig = _signature(hit, rule.name, lines)
                    claimed = max(claimed, hit.end)
                    if sig.message and sig.sig_sha not in seen:
                        seen.add(sig.sig_sha)
                        found.append((hit.weak, sig))
                        strong += not hit.weak
                break
        i = claimed + 1
    chosen = [s for weak, s in found if not weak]
    return chosen or [s for weak, s in found if weak]


def extract(text: str | bytes, tool: str | None = None, limit: int = 8) -> list[Signature]:
    """Signatures of the failures in `text`, root error first, at most `limit`.

    `tool` (a user's hint such as "npm") moves that tool's signatures to the front; it
    never changes a `sig_sha`, so a hinted and an unhinted ingest of one failure agree.
    """
    lines = lines_of(decode(text))
    sigs = _scan(Ctx(lines, HINTS), max(0, limit) if not tool else SCAN_HITS)
    if tool:
        prefer = TOOL_ALIASES.get(tool.lower(), (tool.lower(),))
        sigs.sort(key=lambda s: s.tool not in prefer)  # stable: line order within groups
    return sigs[:max(0, limit)]


def infer_tool(text: str | bytes) -> tuple[str, str] | None:
    """(tool, rule) of the root signature, or None when no rule matches."""
    sigs = extract(text, limit=1)
    return (sigs[0].tool, sigs[0].rule) if sigs else None
