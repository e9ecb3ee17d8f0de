"""Skills: markdown artifacts promoted by hand from chosen memories.

`draft` writes `<vault>/skills/<name>.md` (front matter naming its source memories,
then how to recognise the failure and what we know) and records it in the artifact
manifest as `kind: skill`, so the derived filter knows it when it comes back.
`match` is the context lookup's skills leg: every skill scored against the request.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .canonical import sha256_text

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
SKILL_MIN_SIMILARITY = 0.45
SKILL_MIN_TRIGRAM = 0.20
_vectors: dict[str, np.ndarray] = {}


class SkillError(ValueError):
    """A skill cannot be drafted as asked (the message says why)."""


@dataclass(frozen=True)
class Skill:
    name: str
    path: Path
    sha: str
    text: str
    sources: tuple[str, ...]


def skills_dir(vault_dir: Path) -> Path:
    return Path(vault_dir) / "skills"


def render(name: str, title: str, memories: list, symptoms: dict[str, list[str]]) -> str:
    """The skill's markdown; a pure function of its inputs."""
    tools = sorted({m.tool for m in memories if m.tool})
    lines = ["---", f"name: {name}", f"sources: {', '.join(m.sha for m in memories)}",
             f"tools: {', '.join(tools)}", "---", "", f"# {title}", ""]
    recognise = list(dict.fromkeys(s for m in memories for s in symptoms.get(m.sha, [])))
    if recognise:
        lines += ["## Recognise it", ""] + [f"- {s}" for s in recognise] + [""]
    lines += ["## What we know", ""]
    for m in memories:
        lines += [m.text.strip(), "", f"_From {m.level} {m.sha[:12]}._", ""]
    return "\n".join(lines).rstrip() + "\n"


def draft(vault, name: str, shas: list[str], title: str | None = None) -> Skill:
    """Emit a skill from live L1/L2 memories and record it in the artifact manifest."""
    if not NAME.match(name or ""):
        raise SkillError("a skill name is lowercase letters, digits, '.', '_' or '-' "
                         "(at most 80, starting with a letter or digit)")
    if not shas:
        raise SkillError("name at least one memory to draw the skill from")
    rows = vault.store.memories(shas)
    memories = []
    for sha in dict.fromkeys(shas):
        row = rows.get(sha)
        if row is None:
            raise SkillError(f"no memory {sha}")
        if row.level not in ("L1", "L2"):
            raise SkillError(f"{sha} is {row.level}; skills are drawn from L1/L2 lessons")
        if row.superseded_by:
            raise SkillError(f"{sha} is superseded by {vault.store.successor(sha)}")
        memories.append(row)
    symptoms = {}
    for m in memories:
        projection = vault.store.symptom_projection(m.sha)
        if projection and projection["text"]:
            symptoms[m.sha] = projection["text"].splitlines()
    text = render(name, title or _first_line(memories[0].text), memories, symptoms)
    path = skills_dir(vault.path) / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    from .derived import record_artifact

    record_artifact(vault.path, "skill", name, text)
    return Skill(name, path, sha256_text(text), text, tuple(m.sha for m in memories))


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "Skill"
    return line[:80]


def load(vault_dir: Path) -> list[Skill]:
    """Every skill in the vault, by name."""
    out = []
    for path in sorted(skills_dir(vault_dir).glob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        match = re.search(r"^sources:(.*)$", text, re.MULTILINE)
        sources = tuple(s.strip() for s in match.group(1).split(",") if s.strip()) \
            if match else ()
        out.append(Skill(path.stem, path, sha256_text(text), text, sources))
    return out


def match(vault_dir: Path, query: str, vector, embedder) -> list[dict]:
    """Score every skill against the request (cosine, or trigram Dice without vectors)."""
    from .lookup.similarity import trigram_similarity, trigrams

    hits = []
    for skill in load(vault_dir):
        if vector is not None and embedder is not None:
            if skill.sha not in _vectors:
                _vectors[skill.sha] = embedder.embed_one(skill.text)
            score, kind = float(np.dot(vector, _vectors[skill.sha])), "text"
            floor = SKILL_MIN_SIMILARITY
        else:
            score = trigram_similarity(trigrams(query), trigrams(skill.text))
            kind, floor = "trigram", SKILL_MIN_TRIGRAM
        hits.append({"sha": skill.sha, "name": skill.name, "text": skill.text,
                     "sources": list(skill.sources), "score": score,
                     "matched_kind": kind, "relevant": bool(query) and score >= floor})
    return hits
