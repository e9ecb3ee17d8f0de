"""The optimised model kept on disk: same vectors, loaded from the copy, never an error."""

import numpy as np
import onnxruntime as ort
import pytest

from poimen import model_cache
from poimen.embed import Embedder, default_model_path

TEXTS = ["ModuleNotFoundError: No module named 'requests'", "error: linker `cc` not found",
         "the build fails on the CI runner but passes on my laptop", "x" * 3000]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POIMEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("POIMEN_MODEL_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def sessions(monkeypatch):
    """The model files each new inference session was made from, in order."""
    made = []
    real = ort.InferenceSession

    def spy(path, *args, **kwargs):
        made.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", spy)
    return made


@pytest.fixture(scope="module")
def unkept():
    """Vectors of the model optimised in memory, no copy involved."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("POIMEN_MODEL_CACHE", "off")
        return Embedder().embed(TEXTS)


def test_the_first_load_keeps_a_copy_and_the_next_loads_it_with_the_same_bits(
        cache, sessions, unkept):
    first = Embedder().embed(TEXTS)
    folder = model_cache.folder_for(default_model_path(), ort.__version__)
    assert folder.parent.parent == cache
    assert (folder / model_cache.MODEL).is_file() and (folder / model_cache.WEIGHTS).is_file()
    assert list(folder.parent.iterdir()) == [folder]          # no scratch folder left
    assert sessions[0] == str(default_model_path())
    sessions.clear()
    second = Embedder().embed(TEXTS)
    assert sessions == [str(folder / model_cache.MODEL)]      # one session, from the copy
    assert np.array_equal(first, unkept) and np.array_equal(second, unkept)


def test_a_damaged_copy_is_replaced_and_loses_nothing(cache, unkept):
    Embedder().load()
    folder = model_cache.folder_for(default_model_path(), ort.__version__)
    (folder / model_cache.MODEL).write_bytes(b"not an onnx model")
    assert np.array_equal(Embedder().embed(TEXTS), unkept)
    assert (folder / model_cache.MODEL).stat().st_size > 1000   # optimised and kept again


def test_a_copy_that_disagrees_is_not_kept(cache):
    probe_runs = iter(range(10))
    session = model_cache.load(ort, default_model_path(),
                               lambda: ort.SessionOptions(), lambda s: next(probe_runs))
    assert session.get_inputs()
    assert not (cache / "models").exists() or not any((cache / "models").iterdir())


def test_turned_off_or_unwritable_means_no_copy_and_no_error(tmp_path, monkeypatch, unkept):
    monkeypatch.setenv("POIMEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("POIMEN_MODEL_CACHE", "off")
    assert np.array_equal(Embedder().embed(TEXTS), unkept)
    assert not (tmp_path / "cache").exists()
    monkeypatch.delenv("POIMEN_MODEL_CACHE")
    (tmp_path / "file").write_text("a file where the cache folder would go")
    monkeypatch.setenv("POIMEN_CACHE_DIR", str(tmp_path / "file"))
    assert np.array_equal(Embedder().embed(TEXTS), unkept)


def test_the_copy_is_keyed_by_runtime_version_and_model_file(cache, tmp_path):
    model = default_model_path()
    assert model_cache.folder_for(model, "1.0") != model_cache.folder_for(model, "1.1")
    other = tmp_path / "model.onnx"
    other.write_bytes(model.read_bytes())
    assert model_cache.folder_for(other, "1.0") != model_cache.folder_for(model, "1.0")
