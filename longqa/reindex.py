"""`longqa reindex`: give every leaf a vector of the current embedder.

A document whose leaves all carry vectors of the current embedder is left alone unless forced.
One that holds no other embedder's vectors (stored by `ingest --no-embed`, or its embedding
interrupted) gets only its missing vectors, a chunk per transaction, as `ingest` writes them
(longqa/embedding.py). Any other is re-embedded whole in one transaction that also removes the
other embedder's vectors, so a document never holds two models' vectors and an interrupted run
leaves every document whole (old or new vectors).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import sqlite_utils

from longqa.embedding import LeafEmbedder, embed_pending, embedding_text
from longqa.store.documents import list_documents
from longqa.store.db import snapshot
from longqa.store.nodes import leaf_key, leaf_texts
from longqa.store.vectors import document_vector_counts, forget_vectors, replace_document_vectors


@dataclass
class ReindexResult:
    id: int
    path: str
    status: str  # reindexed | current | changed (re-ingested meanwhile; skipped)
    leaves: int = 0
    embedded: int = 0  # leaves given a vector in this run
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def reindex(
    db: sqlite_utils.Database,
    embedder: LeafEmbedder,
    *,
    force: bool = False,
    on_document: Callable[[ReindexResult], None] = lambda result: None,
) -> list[ReindexResult]:
    results = []
    try:
        for doc in list_documents(db):
            result = reindex_document(db, embedder, doc, force=force)
            on_document(result)
            results.append(result)
    finally:
        forget_vectors()
    return results


def reindex_document(db: sqlite_utils.Database, embedder: LeafEmbedder, doc: dict, *, force: bool = False) -> ReindexResult:
    started = time.perf_counter()
    with snapshot(db):  # the leaves, their key and the counts of one version of the document
        leaves = leaf_texts(db, doc["id"])
        key = leaf_key(db, doc["id"])
        current, other = document_vector_counts(db, doc["id"], embedder.name)
    result = ReindexResult(id=doc["id"], path=doc["path"], status="current", leaves=len(leaves))
    if not force and other == 0:
        if current < len(leaves):
            result.status, result.embedded = "reindexed", embed_pending(db, embedder, doc["id"])
            result.seconds = round(time.perf_counter() - started, 3)
        return result
    texts = [embedding_text(leaf.path, leaf.text) for leaf in leaves]
    vectors = embedder.embed(texts) if leaves else np.zeros((0, 0))
    # Removed or stored again by another process since the leaves were read: "changed", skipped.
    replaced = replace_document_vectors(db, doc["id"], doc["sha256"], key, embedder.name,
                                        [leaf.node_id for leaf in leaves], vectors)
    result.status = "reindexed" if replaced else "changed"
    result.embedded = len(leaves) if replaced else 0
    result.seconds = round(time.perf_counter() - started, 3)
    return result
