"""A model loaded when it is first used: the one lazy wrapper for generators and embedders.

Most commands can end without a model: BM25 and the "nothing relevant" decision need no
generator, and an ingest of unchanged files embeds nothing. So callers hold a `LazyModel`, and
the load happens at the first attribute anything reads (`name`, `complete`, `embed`, ...).
"""

from __future__ import annotations

import time
from typing import Any, Callable


def model_of(source: Any) -> Any:
    """A model given as itself or as a zero-argument factory (called now). Structure code takes
    either; a model is whatever has `complete` (a generator) or `embed` (an embedder)."""
    if hasattr(source, "complete") or hasattr(source, "embed"):
        return source
    return source()


class LazyModel:
    """A generator or embedder loaded at first use of any attribute it does not have itself.

    `on_load(model)` runs once, right after loading and before the model is handed out (ingest
    checks there that the store was built with the same embedder). `load_seconds` is None until
    the load happened."""

    def __init__(self, load: Callable[[], Any], *, on_load: Callable[[Any], None] | None = None):
        self._load = load
        self._on_load = on_load
        self._model: Any = None
        self.load_seconds: float | None = None

    @property
    def loaded(self) -> Any:
        if self._model is None:
            started = time.perf_counter()
            model = self._load()
            self.load_seconds = time.perf_counter() - started
            if self._on_load is not None:
                self._on_load(model)
            self._model = model
        return self._model

    @property
    def is_loaded(self) -> bool:
        return self._model is not None

    def __getattr__(self, name: str):
        # Only reached for attributes this wrapper does not have itself.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.loaded, name)
