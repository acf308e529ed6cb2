"""Load the generator only when it is first needed; warm small things up on a thread.

BM25, the query embedding and the "nothing relevant" decision need no generator, so a question
about something absent never loads it. The generator is not loaded on a thread alongside the
embedder: two llama.cpp model loads at once ended the process silently (exit status 0, no
message) in testing, so loads stay sequential.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from longqa.models.base import Generator


class LazyGenerator:
    """A Generator loaded at first use (any attribute: name, n_ctx, complete, stream, ...)."""

    def __init__(self, load: Callable[[], Generator]):
        self._load = load
        self._generator: Generator | None = None
        self.load_seconds: float | None = None  # None until loaded

    @property
    def loaded(self) -> Generator:
        if self._generator is None:
            started = time.perf_counter()
            self._generator = self._load()
            self.load_seconds = time.perf_counter() - started
        return self._generator

    def __getattr__(self, name: str):
        # Only reached for attributes this wrapper does not have itself.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.loaded, name)


def warm_up(function: Callable[[], object]) -> threading.Thread:
    """Run `function` on a daemon thread now (e.g. loading the tokenizer's ranks, ~0.5 s) so the
    first real use finds it ready; errors are left for that first use to raise."""
    def run() -> None:
        try:
            function()
        except Exception:
            pass
    thread = threading.Thread(target=run, name="warm-up", daemon=True)
    thread.start()
    return thread
