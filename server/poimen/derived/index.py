"""An inverted index over artifact shingles that recognises a record quoting an artifact.

Overlap is containment of the artifact in the record, |A ∩ R| / |A|: a record that
quotes a skill inside a long conversation contains nearly all of the skill's shingles,
while one that names it or discusses it contains few. A long reference (over twice
`REFERENCE_WINDOW` shingles) may be quoted in part, so it is also measured window by
window (`REFERENCE_WINDOW` shingles, a quarter window apart) and the overlap is the best
of the whole and its windows. docs/DERIVED.md says why, and why not a record-side measure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from .manifest import KINDS, Artifact, ManifestPosition, read_appended
from .postings import Postings
from .shingles import shingles

DEFAULT_THRESHOLD = 0.8
REFERENCE_WINDOW = 100


@dataclass(frozen=True)
class DerivedMatch:
    kind: str
    name: str
    artifact_sha: str
    overlap: float           # containment of the artifact (or its best window) in the record
    threshold: float         # the kind's threshold the overlap was compared with
    shingles_matched: int
    shingles_measured: int   # size of what overlap was measured over (artifact or window)
    measure: str             # "whole" | "window"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Violation:
    evidence_sha: str
    match: DerivedMatch

    def to_dict(self) -> dict:
        return {"evidence_sha": self.evidence_sha, **self.match.to_dict()}

    def __str__(self) -> str:
        m = self.match
        return (f"evidence {self.evidence_sha} quotes {m.kind} {m.name!r} "
                f"(artifact {m.artifact_sha[:12]}, overlap {m.overlap:.2f} >= {m.threshold:.2f}, "
                f"{m.shingles_matched}/{m.shingles_measured} shingles, {m.measure})")


def _checked_thresholds(thresholds: dict[str, float] | None) -> dict[str, float]:
    merged = dict.fromkeys(KINDS, DEFAULT_THRESHOLD)
    for kind, value in (thresholds or {}).items():
        if kind not in KINDS:
            raise ValueError(f"threshold for unknown artifact kind {kind!r} (kinds: {KINDS})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise ValueError(f"threshold for {kind} must be a number in (0, 1], got {value!r}")
        merged[kind] = float(value)
    return merged


def parse_thresholds(spec: str) -> dict[str, float]:
    """Thresholds from `kind=value,...` (e.g. an environment variable); ValueError if bad."""
    thresholds = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        kind, _, value = part.partition("=")
        try:
            thresholds[kind.strip()] = float(value)
        except ValueError:
            raise ValueError(f"threshold {part!r} is not kind=number") from None
    _checked_thresholds(thresholds)
    return thresholds


def _windows(sequence: tuple[int, ...], size: int) -> list[tuple[int, ...]]:
    """Full windows of `size`, a quarter window apart, the last one flush with the end."""
    starts = list(range(0, len(sequence) - size + 1, size // 4))
    if starts[-1] != len(sequence) - size:
        starts.append(len(sequence) - size)
    return [sequence[i:i + size] for i in starts]


class ArtifactIndex:
    """Shingle → artifact postings, with per-kind containment thresholds."""

    def __init__(self, thresholds: dict[str, float] | None = None):
        self._thresholds = _checked_thresholds(thresholds)
        self._vault_dir: Path | None = None
        self._position = ManifestPosition()
        self._reset()

    def _reset(self) -> None:
        self._artifacts: list[Artifact] = []
        self._keys: set[tuple[str, str, str]] = set()
        self._postings = Postings()
        self._needs: list[float] = []  # fewest matched shingles that could reach the threshold
        self._need_array: np.ndarray | None = None

    @classmethod
    def load(cls, vault_dir: Path, thresholds: dict[str, float] | None = None) -> "ArtifactIndex":
        """The index of `<vault>/.artifacts.jsonl`; raises ManifestError on a corrupt line."""
        index = cls(thresholds)
        index._vault_dir = Path(vault_dir)
        index.refresh()
        index._postings.merge()
        return index

    def refresh(self) -> int:
        """Index what was appended to the manifest since it was last read; the count added.

        Cheap when nothing changed, so a long-lived engine can call it before every check.
        A manifest replaced by another file is read again from its start.
        """
        if self._vault_dir is None:
            return 0
        appended, position, replaced = read_appended(self._vault_dir, self._position)
        if replaced:
            self._reset()
        self._position = position
        before = len(self._artifacts)
        for artifact in appended:
            self.add(artifact)
        return len(self._artifacts) - before

    @property
    def thresholds(self) -> dict[str, float]:
        """The containment threshold of each kind (a copy)."""
        return dict(self._thresholds)

    def __len__(self) -> int:
        return len(self._artifacts)

    @property
    def artifacts(self) -> tuple[Artifact, ...]:
        return tuple(self._artifacts)

    def add(self, artifact: Artifact) -> None:
        """Index one artifact (a repeat of a known kind, name and sha is ignored)."""
        if artifact.key in self._keys:
            return
        self._keys.add(artifact.key)
        position = len(self._artifacts)
        self._artifacts.append(artifact)
        size = len(artifact.shingles)
        self._needs.append(self._thresholds[artifact.kind]
                           * (REFERENCE_WINDOW if _windowed(artifact) else size))
        self._need_array = None
        self._postings.add(position, np.fromiter(artifact.shingles, np.uint64, size))

    def check(self, text: str) -> DerivedMatch | None:
        """The artifact `text` quotes, if any reaches its kind's threshold; best first."""
        record = set(shingles(text))
        if not record or not self._artifacts:
            return None
        counts = self._postings.counts(np.fromiter(record, np.uint64, len(record)),
                                       len(self._artifacts))
        if self._need_array is None:
            self._need_array = np.asarray(self._needs) - 1e-9
        best: tuple | None = None
        for position in np.flatnonzero(counts >= self._need_array).tolist():
            match = self._measure(self._artifacts[position], int(counts[position]), record)
            if match is not None:
                rank = (match.overlap, match.shingles_matched, -position)
                if best is None or rank > best[0]:
                    best = (rank, match)
        return best[1] if best else None

    def _measure(self, artifact: Artifact, matched: int, record: set[int]) -> DerivedMatch | None:
        threshold = self._thresholds[artifact.kind]
        size = len(artifact.shingles)
        found = (matched / size, matched, size, "whole")
        if found[0] < threshold and _windowed(artifact):
            for window in _windows(artifact.shingles, REFERENCE_WINDOW):
                hits = sum(1 for s in window if s in record)
                if hits / len(window) > found[0]:
                    found = (hits / len(window), hits, len(window), "window")
        if found[0] < threshold:
            return None
        return DerivedMatch(artifact.kind, artifact.name, artifact.sha256, round(found[0], 4),
                            threshold, found[1], found[2], found[3])


def _windowed(artifact: Artifact) -> bool:
    """Whether the artifact is a long reference, also measured window by window."""
    return artifact.kind == "reference" and len(artifact.shingles) > 2 * REFERENCE_WINDOW


def verify_evidence(index: ArtifactIndex,
                    evidence: Iterable[tuple[str, str]]) -> list[Violation]:
    """Every (sha, text) evidence record that matches an artifact: what should not be there."""
    return [Violation(sha, match) for sha, text in evidence
            if (match := index.check(text)) is not None]
