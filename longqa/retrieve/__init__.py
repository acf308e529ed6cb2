"""Retrieval over paragraph leaves: BM25 from FTS5, dense cosine, and their fusion."""

from longqa.retrieve.fusion import Fused, fuse, min_max, weights
from longqa.retrieve.hybrid import HybridRetriever, Retrieval

__all__ = ["Fused", "HybridRetriever", "Retrieval", "fuse", "min_max", "weights"]
