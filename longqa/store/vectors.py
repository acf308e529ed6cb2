"""Dense retrieval over the leaf vectors in the store.

All vectors of one embedder are read once per process into a contiguous float32 matrix (rows
L2-normalised) plus a node-id array; a search is one matrix-vector product in numpy. Vectors of
different embedders never mix: a matrix holds exactly one model's vectors, and a store embedded
with another model is reported with a request to run `longqa reindex`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import sqlite_utils

from longqa.errors import LongqaError


@dataclass(frozen=True)
class DenseHit:
    node_id: int
    doc_id: int
    score: float  # cosine similarity in [-1, 1]


@dataclass
class VectorMatrix:
    model: str
    node_ids: np.ndarray  # int64 (n,)
    doc_ids: np.ndarray  # int64 (n,)
    matrix: np.ndarray  # float32 (n, dim), rows L2-normalised

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.node_ids)

    def scores(self, query: np.ndarray, doc_ids: Iterable[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Cosine similarity of `query` to every row (optionally only rows of `doc_ids`):
        (node_ids, scores), in node-id order."""
        node_ids, _, scores = self._scored(query, doc_ids)
        return node_ids, scores

    def search(self, query: np.ndarray, k: int = 10, doc_ids: Iterable[int] | None = None) -> list[DenseHit]:
        """The `k` most similar leaves, best first (ties in document order)."""
        node_ids, docs, scores = self._scored(query, doc_ids)
        if k <= 0 or not len(scores):
            return []
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((node_ids[top], -scores[top]))]
        return [DenseHit(int(node_ids[i]), int(docs[i]), float(scores[i])) for i in top]

    def _scored(self, query, doc_ids):
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        if not len(self):
            empty = np.zeros(0, np.int64)
            return empty, empty, np.zeros(0, np.float32)
        if query.shape[0] != self.dim:
            raise ValueError(f"query has dim {query.shape[0]}, vectors of {self.model} have {self.dim}")
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        scores = self.matrix @ query  # all rows: cheaper than copying a masked sub-matrix
        if doc_ids is None:
            return self.node_ids, self.doc_ids, scores
        mask = np.isin(self.doc_ids, np.fromiter(doc_ids, dtype=np.int64))
        return self.node_ids[mask], self.doc_ids[mask], scores[mask]


_CACHE: dict[tuple, VectorMatrix] = {}


def store_version(db: sqlite_utils.Database, model: str) -> tuple:
    """Changes when this model's vectors are added or removed (documents re-ingested get new
    node ids). `longqa reindex` in the same process calls forget_vectors()."""
    row = db.execute(
        "SELECT COUNT(*), MIN(node_id), MAX(node_id) FROM embeddings WHERE model = ?", [model]
    ).fetchone()
    return tuple(row)


def _db_key(db: sqlite_utils.Database) -> str:
    row = db.execute("PRAGMA database_list").fetchone()
    return str(Path(row[2]).resolve()) if row and row[2] else f"memory:{id(db)}"


def load_vectors(db: sqlite_utils.Database, model: str) -> VectorMatrix:
    """Every vector of `model` in the store, read once per process and store version."""
    key = (_db_key(db), model, store_version(db, model))
    cached = _CACHE.get(key)
    if cached is None:
        for old in [k for k in _CACHE if k[:2] == key[:2]]:
            del _CACHE[old]
        cached = _CACHE[key] = _read_vectors(db, model)
    return cached


def _read_vectors(db: sqlite_utils.Database, model: str) -> VectorMatrix:
    rows = db.execute(
        "SELECT e.node_id, n.doc_id, e.dim, e.vector FROM embeddings e JOIN nodes n ON n.id = e.node_id "
        "WHERE e.model = ? ORDER BY e.node_id", [model]
    ).fetchall()
    if not rows:
        return VectorMatrix(model, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 0), np.float32))
    dim = rows[0][2]
    if any(r[2] != dim or len(r[3]) != dim * 4 for r in rows):
        raise LongqaError(f"vectors of {model} have inconsistent sizes in the store; run `longqa reindex`")
    matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(len(rows), dim)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.maximum(norms, 1e-12)  # stored rows are normalised; this also copies
    node_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    doc_ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    return VectorMatrix(model, node_ids, doc_ids, np.ascontiguousarray(matrix, dtype=np.float32))


def forget_vectors() -> None:
    _CACHE.clear()


# -- which embedder the store was built with --------------------------------------------------

class StaleEmbeddings(LongqaError):
    """The store holds vectors of another embedder than the one in use."""


def vector_models(db: sqlite_utils.Database) -> dict[str, int]:
    """Vectors per embedder identity."""
    return {row[0]: row[1] for row in db.execute("SELECT model, COUNT(*) FROM embeddings GROUP BY model")}


def leaves_without_vectors(db: sqlite_utils.Database, model: str) -> int:
    return db.execute(
        "SELECT COUNT(*) FROM nodes n WHERE n.kind = 'paragraph' AND NOT EXISTS "
        "(SELECT 1 FROM embeddings e WHERE e.node_id = n.id AND e.model = ?)", [model]
    ).fetchone()[0]


def stale_message(db: sqlite_utils.Database, model: str) -> str | None:
    """Why dense search would miss leaves with embedder `model`, or None when it would not."""
    others = {m: n for m, n in vector_models(db).items() if m != model}
    if others:
        listed = ", ".join(f"{m or '(unnamed)'} ({n} vectors)" for m, n in sorted(others.items()))
        return (f"the store was embedded with {listed}, but the embedder in use is {model}; "
                f"run `longqa reindex` to re-embed it (or pass the matching --embed-model)")
    return None


def require_current(db: sqlite_utils.Database, model: str) -> None:
    """Raise StaleEmbeddings (exit 1) when the store holds another embedder's vectors."""
    message = stale_message(db, model)
    if message:
        raise StaleEmbeddings(message)
