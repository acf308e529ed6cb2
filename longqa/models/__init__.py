"""Models: a generator and an embedder behind small interfaces, with llama.cpp and
OpenAI-compatible backends."""

from longqa.models.base import Embedder, Generator

__all__ = ["Embedder", "Generator"]
