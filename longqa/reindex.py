"""`longqa reindex`: re-embed every leaf with the current embedder, one transaction per document.

A document whose leaves all carry vectors of the current embedder is left alone unless forced.
Vectors of any other embedder are removed in the same transaction, so a document never holds
two models' vectors and an interrupted run leaves every document whole (old or new vectors).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import sqlite_utils

from longqa.embedding import LeafEmbedder, embedding_text
from longqa.store.db import transaction
from longqa.store.documents import list_documents
from longqa.store.vectors import forget_vectors


@dataclass
class ReindexResult:
    id: int
    path: str
    status: str  # reindexed | current | changed (re-ingested meanwhile; skipped)
    leaves: int = 0
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
    rows = db.execute(
        "SELECT id, path, text FROM nodes WHERE doc_id = ? AND kind = 'paragraph' ORDER BY id", [doc["id"]]
    ).fetchall()
    result = ReindexResult(id=doc["id"], path=doc["path"], status="current", leaves=len(rows))
    if not force and _is_current(db, doc["id"], embedder.name, len(rows)):
        return result
    vectors = embedder.embed([embedding_text(path, text) for _, path, text in rows]) if rows else np.zeros((0, 0))
    with transaction(db) as conn:
        sha = conn.execute("SELECT sha256 FROM documents WHERE id = ?", (doc["id"],)).fetchone()
        if sha is None or sha[0] != doc["sha256"]:
            result.status = "changed"
        else:
            conn.execute(
                "DELETE FROM embeddings WHERE node_id IN (SELECT id FROM nodes WHERE doc_id = ?)", (doc["id"],)
            )
            conn.executemany(
                "INSERT INTO embeddings (node_id, model, dim, vector) VALUES (?,?,?,?)",
                [
                    (node_id, embedder.name, int(vector.shape[0]), np.asarray(vector, np.float32).tobytes())
                    for (node_id, _, _), vector in zip(rows, vectors)
                ],
            )
            result.status = "reindexed"
    result.seconds = round(time.perf_counter() - started, 3)
    return result


def _is_current(db: sqlite_utils.Database, doc_id: int, model: str, leaves: int) -> bool:
    current, other = db.execute(
        "SELECT COALESCE(SUM(e.model = ?), 0), COALESCE(SUM(e.model != ?), 0) "
        "FROM embeddings e JOIN nodes n ON n.id = e.node_id WHERE n.doc_id = ?",
        [model, model, doc_id],
    ).fetchone()
    return current == leaves and other == 0
