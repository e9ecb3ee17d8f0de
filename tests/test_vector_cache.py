"""The catalogue's embeddings on disk: reused only when they are this embedder's own."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from poimen.embed import DIM, Embedder
from poimen.symptoms.catalogue import load_catalogue
from poimen.symptoms.embedded import CatalogueGenerator
from poimen.symptoms.vector_cache import cache_dir, catalogue_vectors

TEXTS = ["npm ERR! code ERESOLVE", "fatal: not a git repository",
         "The build fails because the linker `cc` is not installed.", "same length one"]


class CountingEmbedder:
    """Deterministic vectors from a text's hash; counts what it was asked to embed."""

    def __init__(self, model_id="fake-1", salt=""):
        self.model_id, self.salt, self.texts = model_id, salt, []

    def embed(self, texts):
        self.texts += list(texts)
        rows = [np.frombuffer(hashlib.sha256((self.salt + t).encode()).digest() * 48,
                              dtype=np.uint8)[:DIM].astype(np.float32) for t in texts]
        return np.stack(rows) if rows else np.zeros((0, DIM), np.float32)


def test_the_second_process_reads_the_vectors_instead_of_embedding(tmp_path):
    first = CountingEmbedder()
    computed = catalogue_vectors(TEXTS, first, tmp_path)
    again = CountingEmbedder()
    cached = catalogue_vectors(TEXTS, again, tmp_path)
    assert np.array_equal(cached, computed) and cached.dtype == np.float32
    assert set(TEXTS) <= set(first.texts) and not set(TEXTS) & set(again.texts)
    assert len(list(tmp_path.glob("catalogue-*.npz"))) == 1
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_a_corrupt_cache_file_is_recomputed_and_rewritten(tmp_path, damage):
    computed = catalogue_vectors(TEXTS, CountingEmbedder(), tmp_path)
    (path,) = tmp_path.glob("catalogue-*.npz")
    raw = path.read_bytes()
    path.write_bytes({"truncate": raw[:len(raw) // 2], "garbage": os.urandom(len(raw)),
                      "empty": b""}[damage])
    again = CountingEmbedder()
    assert np.array_equal(catalogue_vectors(TEXTS, again, tmp_path), computed)
    assert set(TEXTS) <= set(again.texts)
    assert path.read_bytes() == raw  # rewritten whole


def test_other_texts_or_another_model_get_their_own_vectors(tmp_path):
    catalogue_vectors(TEXTS, CountingEmbedder(), tmp_path)
    other = CountingEmbedder(model_id="fake-2")
    catalogue_vectors(TEXTS, other, tmp_path)
    assert set(TEXTS) <= set(other.texts)
    fewer = CountingEmbedder()
    assert catalogue_vectors(TEXTS[:2], fewer, tmp_path).shape == (2, DIM)
    assert set(TEXTS[:2]) <= set(fewer.texts)


def test_a_model_that_embeds_differently_under_the_same_id_recomputes(tmp_path):
    """The stored probe vector catches a changed model file or runtime."""
    catalogue_vectors(TEXTS, CountingEmbedder(), tmp_path)
    changed = CountingEmbedder(salt="new weights")
    vectors = catalogue_vectors(TEXTS, changed, tmp_path)
    assert np.array_equal(vectors, changed.embed(TEXTS))


def test_an_unwritable_cache_folder_still_gives_the_vectors(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    embedder = CountingEmbedder()
    assert np.array_equal(catalogue_vectors(TEXTS, embedder, blocker / "poimen"),
                          CountingEmbedder().embed(TEXTS))


def test_only_the_most_recently_used_files_are_kept(tmp_path):
    from poimen.symptoms.vector_cache import KEEP

    for n in range(KEEP + 3):
        catalogue_vectors([f"catalogue version {n}"], CountingEmbedder(), tmp_path)
    assert len(list(tmp_path.glob("catalogue-*.npz"))) == KEEP
    newest = CountingEmbedder()
    catalogue_vectors([f"catalogue version {KEEP + 2}"], newest, tmp_path)
    assert f"catalogue version {KEEP + 2}" not in newest.texts


def test_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("POIMEN_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.delenv("POIMEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x" / "poimen"


def test_real_model_vectors_from_the_cache_are_bit_equal(tmp_path):
    catalogue_vectors(TEXTS, Embedder(), tmp_path)
    fresh = Embedder()
    assert np.array_equal(catalogue_vectors(TEXTS, fresh, tmp_path),
                          np.stack([Embedder().embed_one(t) for t in TEXTS]))


def test_a_generator_on_the_cache_projects_byte_identically(monkeypatch, tmp_path):
    monkeypatch.setenv("POIMEN_CACHE_DIR", str(tmp_path))
    catalogue = load_catalogue()
    memory = ("Uploads over a few megabytes broke because the ingress buffers bodies with "
              "its default one-megabyte cap; raising the body limit fixed it.")
    evidence = ["client intended to send too large body"]
    cold = CatalogueGenerator(Embedder(), catalogue).project(memory, evidence)
    assert list(tmp_path.glob("catalogue-*.npz"))
    warm = CatalogueGenerator(Embedder(), catalogue).project(memory, evidence)
    assert json.dumps(cold.to_dict()) == json.dumps(warm.to_dict())
