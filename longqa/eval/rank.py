"""Ranking chunks for the baselines: BM25 with rank-bm25 (independent of longqa's FTS5), and cosine
similarity over the embedder's vectors. Both rank only the chunks of the documents in scope."""

from __future__ import annotations

import re

import numpy as np
from rank_bm25 import BM25Okapi

from longqa.eval.chunks import Chunk

_WORD = re.compile(r"\w+")


def bm25_terms(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Bm25Ranker:
    """One BM25 index over a fixed list of chunks (a dataset corpus, or one question's documents)."""

    def __init__(self, chunks: list[Chunk]):
        self.chunks = chunks
        corpus = [bm25_terms(f"{c.title} {c.text}") for c in chunks]
        # rank-bm25 divides by the average document length: an empty corpus cannot be indexed
        self.index = BM25Okapi(corpus) if chunks else None

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every chunk, in chunk order (zeros for a query with no terms)."""
        terms = bm25_terms(query)
        if self.index is None or not terms:
            return np.zeros(len(self.chunks))
        return np.asarray(self.index.get_scores(terms), dtype=np.float64)

    def rank(self, query: str) -> list[Chunk]:
        order = np.argsort(-self.scores(query), kind="stable")
        return [self.chunks[i] for i in order]


class DenseRanker:
    """Cosine similarity between the question's vector and L2-normalised chunk vectors."""

    def __init__(self, chunks: list[Chunk], vectors: np.ndarray):
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(vectors)} vectors for {len(chunks)} chunks")
        self.chunks = chunks
        self.vectors = np.asarray(vectors, dtype=np.float32)

    def scores(self, query_vector: np.ndarray) -> np.ndarray:
        if not self.chunks:
            return np.zeros(0)
        return self.vectors @ np.asarray(query_vector, dtype=np.float32).reshape(-1)

    def rank(self, query_vector: np.ndarray) -> list[Chunk]:
        order = np.argsort(-self.scores(query_vector), kind="stable")
        return [self.chunks[i] for i in order]


def min_max(scores: np.ndarray) -> np.ndarray:
    low, high = (float(scores.min()), float(scores.max())) if len(scores) else (0.0, 0.0)
    return (scores - low) / (high - low) if high > low else np.zeros_like(scores, dtype=np.float64)


class HybridRanker:
    """BM25 and cosine over the same chunks, each min-max normalised, summed 1:1: the hybrid
    chunk retrieval users build with off-the-shelf tools."""

    def __init__(self, chunks: list[Chunk], vectors: np.ndarray):
        self.chunks = chunks
        self.bm25, self.dense = Bm25Ranker(chunks), DenseRanker(chunks, vectors)

    def rank(self, query: str, query_vector: np.ndarray) -> list[Chunk]:
        if not self.chunks:
            return []
        fused = min_max(self.bm25.scores(query)) + min_max(self.dense.scores(query_vector))
        order = np.argsort(-fused, kind="stable")
        return [self.chunks[i] for i in order]
