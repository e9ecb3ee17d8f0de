"""LanceDB's full-text (BM25) scores, computed over a resident copy of the memories'
`findable` column.

A LanceDB full-text query over the 10k bench vault took ~7 ms of CPU on its own and
~20 ms inside a lookup (its runtime's threads competing with the query embedding), and a
lookup runs two. Here the index is numpy arrays: per term, the rows holding it and each
row's BM25 weight for it.

It reproduces lancedb 0.40's index (`lancedb.index.FTS()` defaults, Lance 13), read from
its source and checked score by score: a token is a run of letters and digits shorter
than MAX_TOKEN_BYTES; it is lower-cased, Snowball-stemmed, dropped if the stem is an
English stop word (NLTK's list), then folded to ASCII. BM25 in float32 with k1 = K1,
b = B, idf = ln((N - n + 0.5) / (n + 0.5) + 1), N and the average length over the rows
with any token, each token of the query counted as often as it occurs, in query order.
Where LanceDB's index lags the table (rows written since the last optimize, scored by
LanceDB with statistics of their own) this copy scores as the optimized index will.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .store import FULLTEXT, LEVELS, level_codes

TOKEN = re.compile(r"[^\W_]+")
MAX_TOKEN_BYTES = 40
ASKED_MAX = 200_000   # query tokens whose ids are remembered
COUNT_BATCH = 1024    # texts tokenised at once
K1, B = np.float32(1.2), np.float32(0.75)
STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom
this that these those am is are was were be been being have has had having do does did
doing a an the and but if or because as until while of at by for with about against
between into through during before after above below to from up down in out on off over
under again further then once here there when where why how all any both each few more
most other some such no nor not only own same so than too very s t can will just don
should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn
needn shan shouldn wasn weren won wouldn""".split())
FOLDED = str.maketrans({"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d",
                        "ħ": "h", "ı": "i", "ł": "l", "þ": "th", "ŧ": "t"})


class Words:
    """Texts as term ids. Each index word gets its id once; the ids of the distinct raw
    tokens of a batch are remembered while it is read, and of queries until the index
    has new words (or ASKED_MAX tokens are remembered)."""

    def __init__(self):
        import Stemmer

        self._stem = Stemmer.Stemmer("english").stemWord
        self.ids: dict[str, int] = {}
        self._asked: tuple[int, dict] = (0, {})   # (len(ids) then, raw token -> id)

    def terms(self, text: str, add: bool = False, known: dict | None = None) -> list[int]:
        """The term ids of `text`'s words in order; a word not yet known gets an id when
        `add`, else is left out. `known`: raw token -> id, shared across a batch."""
        tokens = TOKEN.findall(text)
        if known is None:
            size, known = self._asked
            if size != len(self.ids) or len(known) > ASKED_MAX:
                self._asked = (len(self.ids), known := {})   # replaced: others hold theirs
        for token in [t for t in dict.fromkeys(tokens) if t not in known]:
            known[token] = self._id(token, add)
        return [i for i in map(known.get, tokens) if i is not None and i >= 0]

    def _id(self, token: str, add: bool) -> int | None:
        """The token's term id, -1 for a dropped token, None for a word not known."""
        word = self.word(token)
        if word is None:
            return -1
        if word not in self.ids and add:
            self.ids[word] = len(self.ids)
        return self.ids.get(word)

    def word(self, token: str) -> str | None:
        """A token's index word; None for a dropped one."""
        if len(token.encode()) >= MAX_TOKEN_BYTES:
            return None
        ascii = token.isascii()
        word = self._stem(token.lower() if ascii else "".join(c.lower() for c in token))
        if word in STOP_WORDS:
            return None
        return word if ascii else _folded(word)

    def counted(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The texts' words, counted: (rows' spans in the next two, term ids ascending
        within a row, counts); new words get ids. Read COUNT_BATCH texts at a time (a
        token list per text is a Python int per word)."""
        known: dict[str, int] = {}
        lengths, terms, counts = [], [], []
        for at in range(0, len(texts), COUNT_BATCH):
            ids = [self.terms(text, add=True, known=known)
                   for text in texts[at:at + COUNT_BATCH]]
            length = np.fromiter(map(len, ids), np.int64, len(ids))
            flat = np.fromiter((i for row in ids for i in row), np.int64, int(length.sum()))
            width = len(self.ids) + 1
            keys, count = np.unique(np.repeat(np.arange(len(ids)), length) * width + flat,
                                    return_counts=True)
            rows, term = np.divmod(keys, width)
            lengths.append(np.bincount(rows, minlength=len(ids)))
            terms.append(term.astype(np.int32))
            counts.append(count.astype(np.int32))
        if not lengths:
            return np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32)
        spans = np.concatenate([[0], np.cumsum(np.concatenate(lengths))])
        return spans, np.concatenate(terms), np.concatenate(counts)


def _folded(word: str) -> str:
    """ASCII folding, as Lucene's filter does it for letters with marks and ligatures
    (characters it has no ASCII for are kept)."""
    out = []
    for char in word.translate(FOLDED):
        bare = "".join(c for c in unicodedata.normalize("NFKD", char)
                       if not unicodedata.combining(c))
        out.append(bare if bare.isascii() and bare else char)
    return "".join(out)


@dataclass
class Rows:
    """The table's rows as the index holds them, in table order: sha, level (its code,
    `store.level_codes`), live (not superseded), the byte length of the text read (a
    row's text only grows, when evidence is added to a lesson) and its words (`span`:
    each row's slice of `terms` and `counts`)."""

    sha: np.ndarray
    level: np.ndarray
    live: np.ndarray
    size: np.ndarray
    span: np.ndarray
    terms: np.ndarray
    counts: np.ndarray

    @classmethod
    def read(cls, words: Words, table: pa.Table, held: "Rows | None" = None) -> "Rows":
        """`table` (sha, level, superseded_by, findable) as rows; a row `held` has with
        the same sha and text size keeps its words, the others are read."""
        sha = np.asarray(table["sha"].to_pylist(), object)
        size = pc.fill_null(pc.binary_length(table[FULLTEXT]), 0).to_numpy()
        place = {} if held is None else dict(zip(held.sha.tolist(), range(len(held.sha))))
        old = np.asarray([place.get(s, -1) for s in sha.tolist()], np.int64)
        same = old >= 0
        if held is not None:
            same[same] = held.size[old[same]] == size[same]
        new = np.flatnonzero(~same)
        texts = table[FULLTEXT].take(pa.array(new, pa.int64())).to_pylist()
        span, terms, counts = words.counted([t or "" for t in texts])
        lengths = np.zeros(len(sha), np.int64)
        lengths[new] = np.diff(span)
        if held is not None:
            lengths[same] = np.diff(held.span)[old[same]]
        start = np.concatenate([[0], np.cumsum(lengths)])
        out_terms = np.empty(start[-1], np.int32)
        out_counts = np.empty(start[-1], np.int32)
        put = _spans(start[new], start[new + 1])   # the words read, in row order
        out_terms[put], out_counts[put] = terms, counts
        if held is not None:
            kept, source = np.flatnonzero(same), old[same]
            take = _spans(held.span[source], held.span[source + 1])
            put = _spans(start[kept], start[kept + 1])
            out_terms[put], out_counts[put] = held.terms[take], held.counts[take]
        return cls(sha, level_codes(table["level"].to_pylist()),
                   np.asarray([not s for s in table["superseded_by"].to_pylist()], bool),
                   size, start, out_terms, out_counts)


def _spans(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The indexes of every [start, stop) span, concatenated."""
    lengths = stops - starts
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(int(lengths.sum())) + offsets


class FullText:
    """A BM25 index of one table version's rows."""

    def __init__(self, words: Words, rows: Rows):
        self.words, self.rows = words, rows
        docs = np.repeat(np.arange(len(rows.sha), dtype=np.int32), np.diff(rows.span))
        lengths = np.bincount(docs, rows.counts, minlength=len(rows.sha)).astype(np.int64)
        held = int((lengths > 0).sum())   # rows with no word are not counted
        average = np.float32(lengths.sum()) / np.float32(max(held, 1))
        order = np.argsort(rows.terms, kind="stable")
        self.docs = docs[order]
        frequency = np.bincount(rows.terms, minlength=len(words.ids)).astype(np.float32)
        self.start = np.concatenate([[0], np.cumsum(frequency, dtype=np.int64)])
        half = np.float32(0.5)
        idf = np.log((np.float32(held) - frequency + half) / (frequency + half)
                     + np.float32(1)).astype(np.float32)
        tf = rows.counts[order].astype(np.float32)
        norm = K1 * (np.float32(1) - B + B * lengths[self.docs].astype(np.float32) / average)
        self.weight = (idf[rows.terms[order]] * ((K1 + np.float32(1)) * tf / (tf + norm))
                       ).astype(np.float32)

    def search(self, query: str, limit: int, levels: Sequence[str] | None = None,
               include_superseded: bool = False) -> list[tuple[str, float]]:
        """The `limit` best rows for `query` (of `levels`), as (sha, score), ties in
        table order."""
        scores = np.zeros(len(self.rows.sha), np.float32)
        for term in self.words.terms(query):
            if term + 1 < len(self.start):
                lo, hi = self.start[term], self.start[term + 1]
                scores[self.docs[lo:hi]] += self.weight[lo:hi]
        mask = scores > 0
        if levels:
            mask &= np.isin(self.rows.level, [LEVELS.index(v) for v in levels if v in LEVELS])
        if not include_superseded:
            mask &= self.rows.live
        found = np.flatnonzero(mask)
        order = found[np.lexsort((found, -scores[found]))][:limit]
        return [(self.rows.sha[i], float(scores[i])) for i in order]
