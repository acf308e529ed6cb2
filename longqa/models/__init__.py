"""Models: a generator and an embedder behind small interfaces, with llama.cpp and
OpenAI-compatible backends."""

from longqa.models.base import (CAPABILITIES, KEEPS_PREFIX, READS_ATTENTION, SCORES_OPTIONS, Embedder, Generator,
                                supports)

__all__ = ["CAPABILITIES", "KEEPS_PREFIX", "READS_ATTENTION", "SCORES_OPTIONS", "Embedder", "Generator", "supports"]
