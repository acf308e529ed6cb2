"""Whole-document local scores (LongRefiner's LS as written): every paragraph of every candidate
document is scored against the question, not only the top-k that first-stage retrieval returned.

- BM25 of every leaf of the candidate documents (FTS5 restricted to their rowid ranges; a leaf
  sharing no word with the question scores 0);
- cosine of every leaf's stored vector to the question vector;
- each signal min-max normalised over the candidate leaves of this question, then weighted by
  the question's information pattern (fusion.weights: 3:2 or 1:1), as the first stage does.

A leaf with no vector (a store ingested without an embedder) gets the lowest cosine. The result
feeds refine.score_trees, which averages it up the tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sqlite_utils

from longqa.retrieve import bm25
from longqa.retrieve.fusion import min_max, weights
from longqa.retrieve.settings import RetrievalSettings


@dataclass
class LocalScores:
    fused: dict[int, float]  # leaf id -> weighted sum of the normalised signals, in [0, 1]
    bm25: dict[int, float]  # leaf id -> normalised BM25 (0 = no shared word)
    dense: dict[int, float]  # leaf id -> normalised cosine (empty without vectors)
    cosine: dict[int, float] = field(default_factory=dict)  # leaf id -> raw cosine (empty without vectors)


def local_scores(
    db: sqlite_utils.Database, question: str, leaf_ids: list[int], doc_ids: list[int],
    pattern: str = "both", vectors=None, query_vector: np.ndarray | None = None, *,
    settings: RetrievalSettings,
) -> LocalScores:
    """LS for each of `leaf_ids` (the leaves of `doc_ids`). `vectors` is a store.vectors.VectorMatrix
    (or None: BM25 only); `query_vector` the embedded question; `settings` the call's retrieval
    section (BM25's column weights, the pattern's lean)."""
    wanted = set(leaf_ids)
    raw_bm25 = {k: v for k, v in bm25.scores_in_documents(db, question, doc_ids, settings=settings).items() if k in wanted}
    norm_bm25 = min_max({leaf: raw_bm25.get(leaf, 0.0) for leaf in leaf_ids}, floor=0.0)
    norm_dense: dict[int, float] = {}
    raw_dense: dict[int, float] = {}
    if vectors is not None and query_vector is not None and len(vectors):
        ids, cosines = vectors.scores(query_vector, doc_ids)
        raw_dense = {int(i): float(s) for i, s in zip(ids, cosines) if int(i) in wanted}
        if raw_dense:
            lowest = min(raw_dense.values())
            norm_dense = min_max({leaf: raw_dense.get(leaf, lowest) for leaf in leaf_ids})
    w_bm25, w_dense = weights(pattern, settings.pattern_lean)
    if not norm_dense:
        w_bm25, w_dense = 1.0, 0.0
    fused = {leaf: w_bm25 * norm_bm25.get(leaf, 0.0) + w_dense * norm_dense.get(leaf, 0.0) for leaf in leaf_ids}
    return LocalScores(fused, norm_bm25, norm_dense, raw_dense)
