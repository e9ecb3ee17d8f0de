"""Canonical JSON encoding: the bytes a record's sha256 is taken over."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: one encoding per value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_sha(record: dict) -> str:
    """The content address of a log record."""
    return sha256_text(canonical(record))
