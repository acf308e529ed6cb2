"""A model loaded when it is first used: the one lazy wrapper for generators and embedders.

Most commands can end without a model: BM25 and the "nothing relevant" decision need no
generator, and an ingest of unchanged files embeds nothing. So callers hold a `LazyModel`, and
the load happens at the first attribute anything reads (`name`, `complete`, `embed`, ...).

Attributes known before loading (`known`: a local GGUF's name and capabilities) are answered
without loading, and prompt heads to keep are remembered until the load, so that code which only
asks what the model is, or prepares it, loads nothing: `ask --context-only` on a question whose
analysis the rules settle never opens the generator. `start()` loads on a thread meanwhile (a
fresh `ask` reads the generator from disk while retrieval runs); the first use then waits for it.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from longqa.models.base import KEEPS_PREFIX


def model_of(source: Any) -> Any:
    """A model given as itself or as a zero-argument factory (called now). Structure code takes
    either; a model is whatever has `complete` (a generator) or `embed` (an embedder)."""
    if hasattr(source, "complete") or hasattr(source, "embed"):
        return source
    return source()


class LazyModel:
    """A generator or embedder loaded at first use of any attribute it does not have itself.

    `on_load(model)` runs once, right after loading and before the model is handed out (ingest
    checks there that the store was built with the same embedder). `known` maps attribute names
    to the values the loaded model will have. `load_seconds` is None until the load happened;
    `wait_seconds` is how long callers waited for a load started by `start()`."""

    def __init__(self, load: Callable[[], Any], *, on_load: Callable[[Any], None] | None = None,
                 known: dict[str, Any] | None = None):
        self._load = load
        self._on_load = on_load
        self._known = dict(known or {})
        self._model: Any = None
        self._heads: list[str] = []  # keep_prefix calls made before the load, replayed after it
        self._lock = threading.Lock()  # one load at a time
        self._heads_lock = threading.Lock()  # remembered heads and the model's publication
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None  # a background load's error, raised at first use
        self.load_seconds: float | None = None
        self.wait_seconds = 0.0

    @property
    def loaded(self) -> Any:
        if self._model is None:
            started = time.perf_counter()
            background = self._thread is not None
            self._load_once(keep_failure=False)
            if background:
                self.wait_seconds += time.perf_counter() - started
        return self._model

    def _load_once(self, *, keep_failure: bool) -> None:
        with self._lock:
            if self._model is not None:
                return
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
            started = time.perf_counter()
            try:
                model = self._load()
                if self._on_load is not None:
                    self._on_load(model)
                with self._heads_lock:
                    if KEEPS_PREFIX in getattr(model, "capabilities", ()):
                        for head in self._heads:
                            model.keep_prefix(head)
                    self._heads.clear()
                    self.load_seconds = time.perf_counter() - started
                    self._model = model
            except Exception as exc:
                if not keep_failure:
                    raise
                self._failure = exc

    def start(self) -> None:
        """Begin loading on a thread now (once); errors are raised at the first use."""
        if self._model is not None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._load_once, kwargs={"keep_failure": True},
                                        name="model-load", daemon=True)
        self._thread.start()

    def settle(self) -> None:
        """Wait for a load started by `start()`: before anything is printed (llama.cpp's loader
        silences stdout and stderr meanwhile) and before the process ends, never half-way
        through a native library's read of a model."""
        if self._thread is not None and self._thread.is_alive():
            started = time.perf_counter()
            self._thread.join()
            self.wait_seconds += time.perf_counter() - started

    @property
    def is_loaded(self) -> bool:
        return self._model is not None

    def keep_prefix(self, text: str) -> None:
        """Forwarded once loaded; before that remembered (when the model is known to keep
        prefixes) and applied right after the load, before any other call reaches the model."""
        if self._model is None and KEEPS_PREFIX in self._known.get("capabilities", ()):
            with self._heads_lock:  # never waits for a load under way
                if self._model is None:
                    self._heads.append(text)
                    return
        self.loaded.keep_prefix(text)

    def __getattr__(self, name: str):
        # Only reached for attributes this wrapper does not have itself.
        if name.startswith("_"):
            raise AttributeError(name)
        if self._model is None and name in self._known:
            return self._known[name]
        return getattr(self.loaded, name)
