"""Leaf vectors as a phase after storing: the store knows which leaves lack them.

`ingest` stores a document's text and tree first (BM25 can answer about it at once), then embeds
the leaves that have no vector yet, writing each chunk of vectors in its own transaction. An
interrupted run therefore keeps every chunk it finished, and the next `ingest` (even of the
unchanged file) or `reindex` embeds only what is still missing.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import sqlite_utils

from longqa.store.db import transaction

# Leaves embedded, then committed, per step: small enough that an interruption loses seconds of
# work, large enough that the per-transaction cost is noise (a commit is ~1 ms, a chunk ~5 s).
CHUNK_LEAVES = 64


class LeafEmbedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


def embedding_text(path: str, text: str) -> str:
    """What a leaf's vector represents: its section path, then its text."""
    return f"{path}\n{text}" if path else text


def pending_leaves(db: sqlite_utils.Database, doc_id: int) -> list[tuple[int, str, str]]:
    """(node id, path, text) of the document's leaves that have no vector of any embedder."""
    return db.execute(
        "SELECT n.id, n.path, n.text FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id "
        "WHERE n.doc_id = ? AND n.kind = 'paragraph' AND e.node_id IS NULL ORDER BY n.id", [doc_id]
    ).fetchall()


def embed_pending(db: sqlite_utils.Database, embedder: LeafEmbedder, doc_id: int,
                  chunk: int | None = None) -> int:
    """Embed the document's leaves that lack a vector; returns how many were stored. Nothing is
    loaded (a lazy embedder stays unloaded) when no leaf is missing."""
    rows = pending_leaves(db, doc_id)
    chunk = chunk or CHUNK_LEAVES
    stored = 0
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        vectors = embedder.embed([embedding_text(path, text) for _, path, text in part])
        stored += store_vectors(db, embedder.name, [node_id for node_id, _, _ in part], vectors)
    return stored


def store_vectors(db: sqlite_utils.Database, model: str, node_ids: list[int], vectors: np.ndarray) -> int:
    """Insert vectors in one transaction. A leaf deleted meanwhile (its document re-ingested by
    another process) or embedded meanwhile is passed over, never overwritten."""
    with transaction(db) as conn:
        cursor = conn.executemany(
            "INSERT OR IGNORE INTO embeddings (node_id, model, dim, vector) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM nodes WHERE id = ?)",
            [
                (node_id, model, int(vector.shape[0]), np.asarray(vector, np.float32).tobytes(), node_id)
                for node_id, vector in zip(node_ids, vectors)
            ],
        )
        return max(cursor.rowcount, 0)  # rows inserted (the trigger's updates not counted)
