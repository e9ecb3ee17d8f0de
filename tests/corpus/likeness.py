"""How alike two pastes are, after what differs between two machines is collapsed.

`likeness(a, b)` is difflib's ratio (2·matched / total) over the two pastes' normalised
words: lowercased; a path (`/a/b`, `./x/y`, `C:\\x\\y`) becomes one word `_path_`, a URL
`_url_`, a hex run (`0x1f`, a hash or sha of 7+ hex digits with a digit) `_hex_`, every
other digit run `0`; then the runs of `[a-z0-9_]`. So a paste that is another with a
number, a path or a hash edited scores 1.0, and one word changed in a hundred about 0.99.

`Paste` holds one text normalised once; `alike_pairs` finds the pairs of two lists at
or above a threshold without comparing every pair (cheap filters first).
"""

from __future__ import annotations

import re
from collections import defaultdict
from difflib import SequenceMatcher

SHINGLE = 3   # words per shingle of the candidate filter

_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+")
_PATH = re.compile(r"(?:[a-z]:[\\/]|\\\\)[^\s'\"]*|(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?")
_HEX = re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b")
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[a-z0-9_]+")


def words(text: str) -> list[str]:
    """The normalised words of `text` (see the module's docstring)."""
    text = _URL.sub(" _url_ ", text.lower())
    text = _PATH.sub(" _path_ ", text)
    text = _HEX.sub(" _hex_ ", text)
    return _WORD.findall(_DIGITS.sub("0", text))


class Paste:
    """One text, normalised once: its words and its word shingles (for the filter)."""

    __slots__ = ("key", "words", "shingles")

    def __init__(self, text: str, key=None):
        self.key = key
        self.words = words(text)
        w = self.words
        self.shingles = ({tuple(w[i:i + SHINGLE]) for i in range(len(w) - SHINGLE + 1)}
                         or {tuple(w)})


def ratio(a: Paste, b: Paste) -> float:
    """difflib's ratio of the two normalised word lists (1.0 for two empty pastes)."""
    if not a.words and not b.words:
        return 1.0
    return SequenceMatcher(None, a.words, b.words, autojunk=False).ratio()


def likeness(a: str, b: str) -> float:
    """How alike two texts are, 0..1 (see the module's docstring)."""
    return ratio(Paste(a), Paste(b))


def _bound(a: Paste, b: Paste) -> float:
    """An upper bound of `ratio` from the lengths alone."""
    total = len(a.words) + len(b.words)
    return 2 * min(len(a.words), len(b.words)) / total if total else 1.0


def alike_pairs(left: list[Paste], right: list[Paste], threshold: float):
    """(l, r, likeness) for each pair at or above `threshold` (l from `left`, r from
    `right`, l is not r). Filter: the pair must share a shingle of SHINGLE words (two
    pastes alike at 0.5 or more that share no run of three words do not occur), and the
    length bound and difflib's quick ratios must reach the threshold."""
    postings: dict[tuple, set[int]] = defaultdict(set)
    for n, paste in enumerate(left):
        for shingle in paste.shingles:
            postings[shingle].add(n)
    matcher = SequenceMatcher(None, autojunk=False)
    for b in right:
        near = set().union(*(postings.get(s, ()) for s in b.shingles))
        matcher.set_seq2(b.words)
        for n in sorted(near):
            a = left[n]
            if a is b or _bound(a, b) < threshold:
                continue
            matcher.set_seq1(a.words)
            if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                continue
            value = matcher.ratio()
            if value >= threshold:
                yield a, b, value


_STAMP = re.compile(
    r"^\s*(?:\[?\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?"
    r"(?:Z|\s?[+-]\d\d:?\d\d|\s?UTC)?\]?"
    r"|\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?|#\d+ \d+\.\d+|[\w.-]+\s+\|(?=\s)|>(?=\s)|[│┃║`]+)\s*")
_PROMPT = re.compile(r"^(?:[$%#❯]|>>>|PS [^>]*>|[A-Za-z]:\\[^>]*>|\S*[@~]\S*\s*[$#>%])\s")
_ERROR = re.compile(r"error|exception|fatal|fail|panic|denied|cannot|can't|could not|couldn't"
                    r"|unable|not found|no such|invalid|refused|abort|killed|err!"
                    r"|\bemerg\b|\bcrit\b", re.IGNORECASE)
_FRAMES = re.compile(r"^(?:Traceback \(most recent call last\)|File \".*\", line \d+)")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b")
_QUOTED = re.compile(r"'[^'\n]{0,100}'|\"[^\"\n]{0,100}\"|`[^`\n]{0,100}`")


def _lines(text: str) -> list[str]:
    """The paste's lines with their prefixes stripped, prompt and empty lines left out."""
    out = []
    for raw in text.splitlines():
        line, bare = None, raw
        while bare != line:
            line, bare = bare, _STAMP.sub("", bare, count=1)
        if line.strip() and not _PROMPT.match(line):
            out.append(line.strip())
    return out


def headlines(text: str) -> list[str]:
    """A paste's headline candidates, after timestamps, build-step, container, quote and box
    prefixes are stripped and prompt lines (`$ cmd`, `PS C:\\>`, `user@host:~$`) left
    out: its first line; its first error line (one that names an error, failure, denial,
    …), and the line below it when it is a lead-in (ends in a colon); in a Python
    traceback, its exception line."""
    lines = _lines(text)
    found = lines[:1]
    for n, line in enumerate(lines):
        if _FRAMES.match(line):
            found += [x for x in lines[n + 1:] if _EXCEPTION.match(x)][:1]
            break
    first = next((n for n, x in enumerate(lines) if _ERROR.search(x)), None)
    if first is not None:
        found += lines[first:first + 2 if lines[first].endswith(":") else first + 1]
    return list(dict.fromkeys(found))


def headline(text: str) -> str:
    """A paste's headline: its first error line (see `headlines`), else its first line."""
    lines = _lines(text)
    return next((x for x in lines if _ERROR.search(x)), lines[0] if lines else "")


def headline_likeness(a: str, b: str) -> float:
    """How alike two pastes' headlines are: the best likeness between their candidates
    (`headlines`), with quoted names of up to 100 characters ('x', "x", `x`) set aside: one message
    template naming other things reads as one headline."""
    ones, others = ([_QUOTED.sub(" _q_ ", x) for x in headlines(t)] for t in (a, b))
    return max((likeness(x, y) for x in ones for y in others), default=1.0)
