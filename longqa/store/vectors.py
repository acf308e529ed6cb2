"""Dense retrieval over the leaf vectors in the store.

All vectors of one embedder form one float32 matrix (rows L2-normalised) plus node-id and
document-id arrays, mapped from a file beside the store that a fresh process opens without
copying (store/vector_file.py; rebuilt from SQLite whenever it no longer mirrors the store);
a search is one matrix-vector product in numpy. Vectors of different embedders never mix: a
matrix holds exactly one model's vectors, and a store embedded with another model is reported
with a request to run `longqa reindex`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import sqlite_utils

from longqa.errors import LongqaError
from longqa.store import vector_file
from longqa.store.db import database_file, database_name, transaction
from longqa.store.nodes import LeafText, leaf_count, leaf_key  # noqa: F401 (leaf_count is part of this module's API)


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
        return self.search_scopes(query, k, [doc_ids])[0]

    def search_scopes(self, query: np.ndarray, k: int, scopes: list[Iterable[int] | None]) -> list[list[DenseHit]]:
        """The top `k` per scope (None = every document), best first, from ONE matrix-vector
        product: at 100,000 leaves the product is the cost, and the scopes only differ in which
        rows compete (a question's whole store and the documents it names)."""
        if k <= 0 or not len(self):
            return [[] for _ in scopes]
        node_ids, docs, scores = self._scored(query, None)
        results = []
        for scope in scopes:
            if scope is None:
                rows = np.arange(len(scores))
            else:
                rows = np.flatnonzero(np.isin(docs, np.fromiter(scope, dtype=np.int64)))
            if len(rows) > k:
                rows = rows[np.argpartition(-scores[rows], k - 1)[:k]]
            rows = rows[np.lexsort((node_ids[rows], -scores[rows]))]
            results.append([DenseHit(int(node_ids[i]), int(docs[i]), float(scores[i])) for i in rows])
        return results

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


def vector_state(db: sqlite_utils.Database) -> tuple[str, int]:
    """(store id, vector version): the version changes with every change to `embeddings`, in the
    same transaction (migration m002), so it says exactly which vectors a copy mirrors."""
    row = db.execute("SELECT store_uuid, version FROM vector_state WHERE id = 1").fetchone()
    return (row[0], int(row[1])) if row else ("", -1)


def load_vectors(db: sqlite_utils.Database, model: str) -> VectorMatrix:
    """Every vector of `model` in the store: from the process cache, else mapped from the matrix
    file beside the store (store/vector_file.py) while it mirrors the store, else read from SQLite
    (and the file rewritten for the next process)."""
    store = database_file(db)
    state = vector_state(db)
    key = (str(store) if store else f"memory:{id(db)}", model, state)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    for old in [k for k in _CACHE if k[:2] == key[:2]]:
        del _CACHE[old]
    mapped = None
    if store is not None:
        mapped = vector_file.read(vector_file.file_for(store, model), store_uuid=state[0],
                                  version=state[1], model=model)
    if mapped is not None:
        matrix = VectorMatrix(model, *mapped)
    else:
        state, matrix = _read_snapshot(db, model)
        key = key[:2] + (state,)
        if store is not None:
            vector_file.write(vector_file.file_for(store, model), store_uuid=state[0], version=state[1],
                              model=model, node_ids=matrix.node_ids, doc_ids=matrix.doc_ids,
                              matrix=matrix.matrix)
    _CACHE[key] = matrix
    return matrix


def _read_snapshot(db: sqlite_utils.Database, model: str) -> tuple[tuple[str, int], VectorMatrix]:
    """The vectors and the version they belong to, read in one transaction (one snapshot)."""
    conn = db.conn
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        return vector_state(db), _read_vectors(db, model)
    finally:
        if own:
            conn.execute("COMMIT")


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


def documents_missing_vectors(db: sqlite_utils.Database) -> int:
    """Documents with at least one leaf that has no vector of any embedder."""
    return db.execute(
        "SELECT count(DISTINCT n.doc_id) FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id "
        "WHERE n.kind = 'paragraph' AND e.node_id IS NULL"
    ).fetchone()[0]


def leaves_without_vectors_by_document(db: sqlite_utils.Database) -> dict[int, tuple[int, int]]:
    """doc_id -> (leaves without a vector of any embedder, all its leaves), for each document
    with at least one such leaf (its embedding was interrupted: a full disk, a kill)."""
    rows = db.execute(
        "SELECT n.doc_id, SUM(e.node_id IS NULL), COUNT(*) FROM nodes n "
        "LEFT JOIN (SELECT DISTINCT node_id FROM embeddings) e ON e.node_id = n.id "
        "WHERE n.kind = 'paragraph' GROUP BY n.doc_id HAVING SUM(e.node_id IS NULL) > 0"
    ).fetchall()
    return {int(doc_id): (int(missing), int(total)) for doc_id, missing, total in rows}


def _other_model_present(db: sqlite_utils.Database, model: str) -> bool:
    """Two index probes (embeddings_model) instead of counting every vector of a big store."""
    return any(db.execute(f"SELECT 1 FROM embeddings WHERE model {op} ? LIMIT 1", [model]).fetchone()
               for op in ("<", ">"))


def stale_message(db: sqlite_utils.Database, model: str) -> str | None:
    """Why dense search would miss leaves with embedder `model`, or None when it would not."""
    if not _other_model_present(db, model):
        return None
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


def vector_report(db: sqlite_utils.Database, model: str | None) -> dict:
    """What `longqa models` says about a store: its file, vectors per embedder and, for the
    embedder `model` in use, the leaves it has not embedded and any stale-embedder warning."""
    report = {"path": database_name(db), "vectors": vector_models(db)}
    if model:
        report["leaves_without_vectors"] = leaves_without_vectors(db, model)
        report["warning"] = stale_message(db, model)
    return report


# -- writing vectors ---------------------------------------------------------------------------

def _vector_rows(model: str, node_ids: list[int], vectors: np.ndarray) -> list[tuple]:
    return [
        (node_id, model, int(vector.shape[0]), np.asarray(vector, np.float32).tobytes())
        for node_id, vector in zip(node_ids, vectors)
    ]


def pending_leaves(db: sqlite_utils.Database, doc_id: int) -> list[LeafText]:
    """The document's leaves that have no vector of any embedder, in id order."""
    return [LeafText(*row) for row in db.execute(
        "SELECT n.id, n.path, n.text FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id "
        "WHERE n.doc_id = ? AND n.kind = 'paragraph' AND e.node_id IS NULL ORDER BY n.id", [doc_id]
    ).fetchall()]


def store_vectors(db: sqlite_utils.Database, model: str, node_ids: list[int], vectors: np.ndarray) -> int:
    """Insert vectors in one transaction. A leaf deleted meanwhile (its document re-ingested by
    another process) or embedded meanwhile is passed over, never overwritten."""
    with transaction(db) as conn:
        cursor = conn.executemany(
            "INSERT OR IGNORE INTO embeddings (node_id, model, dim, vector) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM nodes WHERE id = ?)",
            [(*row, row[0]) for row in _vector_rows(model, node_ids, vectors)],
        )
        return max(cursor.rowcount, 0)  # rows inserted (the trigger's updates not counted)


def replace_document_vectors(db: sqlite_utils.Database, doc_id: int, sha256: str, leaves: str, model: str,
                             node_ids: list[int], vectors: np.ndarray) -> bool:
    """Swap all of a document's vectors for these, in one transaction; False (nothing written)
    when the document is gone, its content is no longer `sha256` or its leaves are no longer the
    ones keyed `leaves` (store/nodes.py leaf_key): it was re-ingested meanwhile, `--force` too."""
    with transaction(db) as conn:
        row = conn.execute("SELECT sha256 FROM documents WHERE id = ?", (doc_id,)).fetchone()
        if row is None or row[0] != sha256 or leaf_key(conn, doc_id) != leaves:
            return False
        conn.execute("DELETE FROM embeddings WHERE node_id IN (SELECT id FROM nodes WHERE doc_id = ?)", (doc_id,))
        conn.executemany("INSERT INTO embeddings (node_id, model, dim, vector) VALUES (?,?,?,?)",
                         _vector_rows(model, node_ids, vectors))
        return True


def document_vector_counts(db: sqlite_utils.Database, doc_id: int, model: str) -> tuple[int, int]:
    """(vectors of `model`, vectors of any other embedder) among the document's nodes."""
    current, other = db.execute(
        "SELECT COALESCE(SUM(e.model = ?), 0), COALESCE(SUM(e.model != ?), 0) "
        "FROM embeddings e JOIN nodes n ON n.id = e.node_id WHERE n.doc_id = ?",
        [model, model, doc_id],
    ).fetchone()
    return int(current), int(other)


def stored_vectors(db: sqlite_utils.Database, model: str, node_ids: list[int]) -> dict[int, np.ndarray]:
    """The stored vectors of `model` for those of `node_ids` that have one."""
    found: dict[int, np.ndarray] = {}
    for start in range(0, len(node_ids), 500):
        chunk = node_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in db.query(f"SELECT node_id, vector FROM embeddings WHERE model = ? AND node_id IN ({marks})",
                            [model, *chunk]):
            found[row["node_id"]] = np.frombuffer(row["vector"], dtype=np.float32)
    return found
