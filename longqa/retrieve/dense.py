"""Dense retrieval for `ask`: cosine similarity over the stored leaf vectors (store/vectors.py).

The vector matrix is read once per process by longqa.store.vectors; this module only adapts its
hits to the retrieval `Hit` type, applies the settings' candidate cut for large stores
(retrieve/settings.py dense_*: exact search up to dense_exact_max vectors) and says when dense
search cannot be used with this embedder.
"""

from __future__ import annotations

import time
from concurrent.futures import Future

import numpy as np
import sqlite_utils

from longqa.retrieve.bm25 import Hit
from longqa.retrieve.settings import RetrievalSettings
from longqa.store.beside import beside
from longqa.store.nodes import leaf_count
from longqa.store.vectors import documents_missing_vectors, load_vectors, stale_message


def search(
    db: sqlite_utils.Database, query_vector: np.ndarray, model: str, k: int, doc_ids: list[int] | None = None, *,
    settings: RetrievalSettings,
) -> list[Hit]:
    """The `k` leaves most similar to `query_vector` among those embedded by `model`, best first
    (`settings`: the call's retrieval section, whose dense_* fields choose exact search or the cut)."""
    return search_scopes(db, query_vector, model, k, [doc_ids], settings)[0]


def search_scopes(
    db: sqlite_utils.Database, query_vector: np.ndarray, model: str, k: int, scopes: list[list[int] | None],
    settings: RetrievalSettings,
) -> list[list[Hit]]:
    """Top `k` per scope (None = every document): exact from one pass over the matrix up to
    `settings.dense_exact_max` vectors, through the candidate cut above it."""
    return _hits(load_vectors(db, model).search_scopes(query_vector, k, scopes, settings.dense_cut()))


def _hits(found: list[list]) -> list[list[Hit]]:
    """The matrix's hits per scope as retrieval's `Hit`s."""
    return [[Hit(hit.node_id, hit.score) for hit in hits] for hits in found]


def start_search_scopes(
    db: sqlite_utils.Database, query_vector: np.ndarray, model: str, k: int, scopes: list[list[int] | None],
    settings: RetrievalSettings,
) -> Future:
    """`search_scopes` started beside the caller (store/beside.py), so that it runs while BM25
    queries the store; `.result()` gives (hits per scope, seconds the search took there). The
    matrix is found here, on the caller's thread, which owns `db`'s connection; the worker only
    reads the matrix."""
    matrix, cut = load_vectors(db, model), settings.dense_cut()

    def search() -> tuple[list[list[Hit]], float]:
        tick = time.perf_counter()
        found = _hits(matrix.search_scopes(query_vector, k, scopes, cut))
        return found, time.perf_counter() - tick

    return beside(search)


def unavailable_reason(db: sqlite_utils.Database, model: str) -> str | None:
    """Why dense search would be blind here (no vectors, or another embedder's), else None."""
    stale = stale_message(db, model)
    if stale:
        return stale
    if not len(load_vectors(db, model)):
        # No cause is stated as fact: an ingest (`--force` too) stores a document's new tree
        # before its vectors, so this is also what an ask sees while the only document is rewritten.
        return ("the store has no vectors yet (an ingest still embedding its leaves, or documents stored "
                "without an embedder: `longqa ingest` of the same files or `longqa reindex` completes them)")
    return None


def missing_note(db: sqlite_utils.Database, model: str) -> str | None:
    """A note when some leaves have no vector yet (embedding still running, or interrupted):
    dense search cannot see them, so BM25 alone ranks them. None when every leaf has one."""
    missing = leaf_count(db) - len(load_vectors(db, model))
    if missing <= 0:
        return None
    docs = documents_missing_vectors(db)
    return (f"{missing} leaves in {docs} document(s) have no vectors yet, so BM25 alone ranks them "
            "(embedding unfinished: `longqa ingest` of the same files or `longqa reindex` completes it)")
