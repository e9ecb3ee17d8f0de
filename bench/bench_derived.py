"""Cost of the derived-content filter against 100, 1k and 10k artifacts, as ratios.

Artifacts look like drafted skills: the same front matter and headings in every one
(boilerplate shingles whose postings grow with the manifest) around content of their
own. Records are real failure evidence and lessons (the corpus's dev rows), plus
transcripts quoting (reformatted) or discussing one of the first artifacts, so every
size sees the same records. The index is compared with checking every artifact in turn.

    .venv/bin/python bench/bench_derived.py [--sizes 100,1000,10000] [--data DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

from poimen.derived import MANIFEST, ArtifactIndex, record_artifact, shingles
from poimen.derived.manifest import make_artifact

import corpus


def real_texts(data: Path | None = corpus.DEFAULT_DATA) -> list[str]:
    """Evidence and lesson of every dev case and distractor (the repo's corpus by default)."""
    rows = corpus.load(data)
    return [text for row in rows["cases"] + rows["distractors"] if row["split"] == "dev"
            for text in (row["evidence"], row["memory"])]


def skill_text(rng: random.Random, vocabulary: list[str], weights: list[float], i: int) -> str:
    def sentence() -> str:
        return " ".join(rng.choices(vocabulary, weights, k=rng.randint(8, 20))).capitalize() + "."

    recognise = "\n".join(f"- {sentence()}" for _ in range(rng.randint(2, 5)))
    know = "\n".join(sentence() for _ in range(rng.randint(6, 14)))
    return (f"---\nname: skill-{i}\nsources: {i:064x}\ntools: npm\n---\n\n# Skill {i}\n\n"
            f"## Recognise it\n\n{recognise}\n\n## What we know\n\n{know}\n\n_From L1 {i:012x}._\n")


def quote(text: str) -> str:
    body = " ".join(line.lstrip("#-_ ").rstrip("_") for line in text.splitlines())
    return ("user: the build broke again\nassistant: loading the skill:\n"
            + textwrap.indent(textwrap.fill(body, 60), "> ") + "\nuser: thanks, that worked")


def discuss(text: str) -> str:
    words = text.split()
    return (f"I read skill {words[3]} and think its advice {' '.join(words[40:52])} is "
            "outdated; we now pin the dependency instead and the tests pass again.")


def timed(check, records: list[str]) -> tuple[float, int]:
    found, start = 0, time.perf_counter()
    for record in records:
        found += check(record) is not None
    return (time.perf_counter() - start) / len(records), found


def naive(artifacts):
    def check(text: str):
        record = set(shingles(text))
        return next((a for a in artifacts
                     if len(record & set(a.shingles)) >= 0.8 * len(a.shingles)), None)
    return check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--data", type=Path, default=corpus.DEFAULT_DATA,
                        help="a data set in the shared format (default: tests/corpus)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = random.Random(7)
    texts = real_texts(args.data)
    counts: dict[str, int] = {}
    for word in " ".join(texts).lower().split():
        counts[word] = counts.get(word, 0) + 1
    vocabulary = sorted(counts)
    weights = [counts[w] for w in vocabulary]
    skills = [skill_text(rng, vocabulary, weights, i) for i in range(max(sizes))]
    records = (texts + [quote(s) for s in skills[:50]] + [discuss(s) for s in skills[:50]])
    expected = 50
    print(f"{len(records)} records ({expected} quote an artifact), "
          f"mean {statistics.mean(len(r.split()) for r in records):.0f} words")
    print(f"{'artifacts':>9} {'load ms':>9} {'record ms':>10} {'check µs':>9} {'×100':>6} "
          f"{'naive µs':>10} {'×100':>6} {'found':>6}")
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp)
        for size in sizes:
            lines = [make_artifact("skill", f"skill-{i}", s).to_json() for i, s in
                     enumerate(skills[:size])]
            (vault / MANIFEST).write_text("\n".join(lines) + "\n")
            start = time.perf_counter()
            index = ArtifactIndex.load(vault)
            load = time.perf_counter() - start
            start = time.perf_counter()
            record_artifact(vault, "skill", "one-more", skills[0] + "\nOne more line.\n")
            append = time.perf_counter() - start
            cost, found = timed(index.check, records)
            slow, slow_found = timed(naive(index.artifacts), records[-100:])
            assert found == slow_found == expected, (found, slow_found)
            base = base or (cost, slow)
            print(f"{size:>9} {load * 1e3:>9.1f} {append * 1e3:>10.1f} {cost * 1e6:>9.0f} "
                  f"{cost / base[0]:>6.2f} {slow * 1e6:>10.0f} {slow / base[1]:>6.2f} "
                  f"{found:>6}")


if __name__ == "__main__":
    main()
