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
_PATH = re.compile(r"(?:[a-z]:\\|\\\\)[^\s'\"]*|(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?")
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
    r"^\s*(?:\[?\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|\s?[+-]\d\d:?\d\d|\s?UTC)?\]?"
    r"|\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?|#\d+ \d+\.\d+|[\w.-]+\s+\|(?=\s)|[│┃║`]+)\s*")
_PROMPT = re.compile(r"^(?:[$%#>❯☹]|>>>|PS [^>]*>|[A-Za-z]:\\[^>]*>|\S*[@~]\S*\s*[$#>%])\s")
_ERROR = re.compile(r"error|exception|fatal|fail|panic|denied|cannot|can't|could not|couldn't"
                    r"|unable|not found|no such|invalid|refused|abort|killed|err!|\bemerg\b|\bcrit\b",
                    re.IGNORECASE)


def headline(text: str) -> str:
    """A paste's headline: its first error line (one that names an error, failure, denial,
    …; a Python traceback's exception line, not its frames), else its first line, after
    timestamps, build-step, container and box prefixes are stripped and prompt lines
    (`$ cmd`, `> script`, `PS C:\\>`, `user@host:~$`) skipped."""
    lines = []
    for raw in text.splitlines():
        line, bare = None, raw
        while bare != line:
            line, bare = bare, _STAMP.sub("", bare, count=1)
        if line.strip() and not _PROMPT.match(line):
            lines.append((len(raw) - len(raw.lstrip()), line.strip()))
    n = 0
    while n < len(lines):
        indent, line = lines[n]
        if line.startswith("Traceback (most recent call last)"):
            n += 1
            while n < len(lines) and (lines[n][0] > indent or lines[n][1].startswith("File ")):
                n += 1
            if n < len(lines):
                return lines[n][1]
        elif _ERROR.search(line):
            return line
        n += 1
    return lines[0][1] if lines else ""
