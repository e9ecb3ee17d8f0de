"""Fixtures for the real-editor tests (helpers live in e2e_support.py)."""

from __future__ import annotations

import pytest

from e2e_support import Seeded, seed


@pytest.fixture(scope="session")
def seeded(tmp_path_factory) -> Seeded:
    """A workspace with a failing program and a vault seeded through the real `mem` CLI."""
    return seed(tmp_path_factory.mktemp("editors"))
