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

    def rank(self, query: str) -> list[Chunk]:
        if self.index is None:
            return []
        terms = bm25_terms(query)
        if not terms:
            return list(self.chunks)
        scores = self.index.get_scores(terms)
        order = np.argsort(-scores, kind="stable")
        return [self.chunks[i] for i in order]


class DenseRanker:
    """Cosine similarity between the question's vector and L2-normalised chunk vectors."""

    def __init__(self, chunks: list[Chunk], vectors: np.ndarray):
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(vectors)} vectors for {len(chunks)} chunks")
        self.chunks = chunks
        self.vectors = np.asarray(vectors, dtype=np.float32)

    def rank(self, query_vector: np.ndarray) -> list[Chunk]:
        if not self.chunks:
            return []
        scores = self.vectors @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
        order = np.argsort(-scores, kind="stable")
        return [self.chunks[i] for i in order]
