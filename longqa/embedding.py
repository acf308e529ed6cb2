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

from longqa.store.vectors import pending_leaves, store_vectors

# Leaves embedded, then committed, per step: small enough that an interruption loses seconds of
# work, large enough that the per-transaction cost is noise (a commit is ~1 ms, a chunk ~5 s).
CHUNK_LEAVES = 64


class LeafEmbedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


def embedding_text(path: str, text: str) -> str:
    """What a leaf's vector represents: its section path, then its text."""
    return f"{path}\n{text}" if path else text


def embed_pending(db: sqlite_utils.Database, embedder: LeafEmbedder, doc_id: int,
                  chunk: int | None = None) -> int:
    """Embed the document's leaves that lack a vector; returns how many were stored. Nothing is
    loaded (a lazy embedder stays unloaded) when no leaf is missing."""
    rows = pending_leaves(db, doc_id)
    chunk = chunk or CHUNK_LEAVES
    stored = 0
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        vectors = embedder.embed([embedding_text(leaf.path, leaf.text) for leaf in part])
        stored += store_vectors(db, embedder.name, [leaf.node_id for leaf in part], vectors)
    return stored
