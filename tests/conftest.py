"""The whole suite keeps the optimised model copy (poimen/model_cache.py) in a folder of
its own, removed at the end, so that tests and the servers they start write nothing to
the user's cache."""

import os
import shutil
import tempfile

import pytest

if not os.environ.get("POIMEN_CACHE_DIR"):
    os.environ["POIMEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="poimen-test-cache-")
    _OWN = os.environ["POIMEN_CACHE_DIR"]
else:
    _OWN = None


@pytest.fixture(scope="session", autouse=True)
def _own_model_cache():
    yield
    if _OWN:
        shutil.rmtree(_OWN, ignore_errors=True)
