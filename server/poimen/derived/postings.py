"""Inverted index from shingle hashes to artifact positions, in numpy.

Postings live in two sorted arrays (shingle, artifact) searched with `searchsorted`;
artifacts added since the last merge sit in a buffer, merged when the owner says so
(after loading a manifest) or when a lookup finds more than `_PENDING_LOOKUP` artifacts
in it (fewer are checked one by one). A lookup touches only the postings of the
record's own shingles, and the few buffered artifacts.
"""

from __future__ import annotations

import numpy as np

_PENDING_LOOKUP = 32


class Postings:
    def __init__(self) -> None:
        self._keys = np.empty(0, dtype=np.uint64)
        self._ids = np.empty(0, dtype=np.int64)
        self._pending: list[tuple[int, np.ndarray]] = []

    def add(self, position: int, shingles: np.ndarray) -> None:
        """Buffer the distinct `shingles` (uint64) of the artifact at `position`."""
        self._pending.append((position, shingles))

    def merge(self) -> None:
        """Sort the buffered artifacts' postings into the arrays."""
        if not self._pending:
            return
        keys = np.concatenate([self._keys] + [s for _, s in self._pending])
        ids = np.concatenate([self._ids] + [np.full(len(s), p, dtype=np.int64)
                                            for p, s in self._pending])
        order = np.argsort(keys, kind="stable")
        self._keys, self._ids = keys[order], ids[order]
        self._pending = []

    def counts(self, record: np.ndarray, artifacts: int) -> np.ndarray:
        """For each artifact position, how many of the distinct `record` shingles it has."""
        if len(self._pending) > _PENDING_LOOKUP:
            self.merge()
        start = np.searchsorted(self._keys, record, side="left")
        lengths = np.searchsorted(self._keys, record, side="right") - start
        hit = lengths > 0
        start, lengths = start[hit], lengths[hit]
        offsets = np.repeat(start - np.cumsum(lengths) + lengths, lengths)
        positions = offsets + np.arange(int(lengths.sum()))
        found = np.bincount(self._ids[positions], minlength=artifacts)
        for position, shingles in self._pending:
            found[position] = np.count_nonzero(np.isin(shingles, record, assume_unique=True))
        return found
