"""Warm small things up on a thread while `ask` does other work.

The generator itself is loaded lazily (models/lazy.py), never on a thread alongside the
embedder: two llama.cpp model loads at once ended the process silently (exit status 0, no
message) in testing, so loads stay sequential.
"""

from __future__ import annotations

import threading
from typing import Callable


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
