"""Reformatting-proof text fingerprints: normalisation and hashed word shingles.

`normalise_for_shingles` reduces a text to its words: JSON string escapes are
undone and each JSON string value starts a line (transcripts are often JSON),
markdown structure is dropped (fence lines with their info strings, bullets,
numbered-list markers, task boxes, headings, blockquotes, table edges,
indentation, link targets and reference definitions), the text is
NFKC-normalised and case-folded, and what is left is its runs of letters and
digits joined by single spaces. Punctuation, emphasis markers, table pipes and
rules vanish with the non-word characters, so they never need rules of their own.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

SHINGLE_WORDS = 5
SCHEME = f"w{SHINGLE_WORDS}-blake2b8-v1"  # stored with each artifact; bump on any change here

_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|[nrt"\\/])')
_PREFIX = re.compile(
    r"^(?:\s+|[>|\"]|[-*+\u2022](?=\s|$)|[0-9]{1,9}[.)](?=\s|$)|#{1,6}(?=\s|$)|\[[ xX]\](?=\s|$))")
_FENCE = re.compile(r"^(?:`{3,}[^`]*|~{3,}.*)$")
_JSON_VALUE = re.compile(r'":\s*"')  # a JSON string value starts a line of its own
_LINK_DEFINITION = re.compile(r"^\[[^\[\]]+\]:\s")
_INLINE_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^)]*\)")
_REFERENCE_LINK = re.compile(r"!?\[([^\[\]]*)\]\[[^\[\]]*\]")
_WORD = re.compile(r"[^\W_]+")


def _unescape_one(match: re.Match) -> str:
    code = match.group(0)[1:]
    if code[0] == "u":
        char = chr(int(code[1:], 16))
        return " " if 0xD800 <= ord(char) < 0xE000 else char
    return {"n": "\n", "r": "\n", "t": "\t"}.get(code, code)


def _combine_surrogates(text: str) -> str:
    return re.sub(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})",
                  lambda m: chr(0x10000 + ((int(m.group(1), 16) - 0xD800) << 10)
                                + int(m.group(2), 16) - 0xDC00),
                  text, flags=re.IGNORECASE)


def _unescape(text: str) -> str:
    """Undo JSON string escapes, repeatedly (a transcript may nest JSON in JSON)."""
    for _ in range(4):
        if "\\" not in text:
            break
        undone = _ESCAPE.sub(_unescape_one, _combine_surrogates(text))
        if undone == text:
            break
        text = undone
    return text


def _strip_line(line: str) -> str | None:
    """The line without its markdown block prefixes; None for a line that is only markup."""
    while (prefix := _PREFIX.match(line)) and prefix.end():
        line = line[prefix.end():]
    if _FENCE.match(line) or _LINK_DEFINITION.match(line):
        return None
    return line


def _fold(text: str) -> str:
    for _ in range(4):
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        if folded == text:
            break
        text = folded
    return text


def words(text: str) -> list[str]:
    """The normalised words of `text` (see the module docstring)."""
    text = _JSON_VALUE.sub('":\n"', _unescape(text))
    lines = (_strip_line(line) for line in text.splitlines())
    body = "\n".join(line for line in lines if line is not None)
    body = _REFERENCE_LINK.sub(r"\1", _INLINE_LINK.sub(r"\1", body))
    return _WORD.findall(_fold(body))


def normalise_for_shingles(text: str) -> str:
    """Lowercased words of `text`, markdown and whitespace stripped, one space apart."""
    return " ".join(words(text))


def shingle_hash(gram: list[str]) -> int:
    """Stable 64-bit hash of one word n-gram (first 8 bytes of blake2b)."""
    digest = hashlib.blake2b(" ".join(gram).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def shingles(text: str, n: int = SHINGLE_WORDS) -> tuple[int, ...]:
    """Distinct hashed overlapping word n-grams of `text`, in order of first occurrence.

    A text of fewer than `n` words (but at least one) is a single shingle of all of them.
    """
    if n < 1:
        raise ValueError(f"shingle size must be at least 1, got {n}")
    tokens = words(text)
    if not tokens:
        return ()
    grams = (tokens[i:i + n] for i in range(max(1, len(tokens) - n + 1)))
    return tuple(dict.fromkeys(shingle_hash(gram) for gram in grams))
