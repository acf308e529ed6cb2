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


@dataclass(frozen=True)
class Cut:
    """The approximate search of a large matrix (settings: retrieve/settings.py). Up to
    `exact_max` rows are scored exactly; beyond it every row is ranked by its sign bits against
    the query, weighted by the query's component sizes in `levels` bands, and the `pool` best are
    read and scored exactly. A pool at least as large as the rows is the exact search."""
    exact_max: int
    pool: int
    levels: int = 3


EXACT = None  # search_scopes(cut=EXACT): every row scored exactly, whatever the size


@dataclass
class VectorMatrix:
    model: str
    node_ids: np.ndarray  # int64 (n,)
    doc_ids: np.ndarray  # int64 (n,)
    matrix: np.ndarray  # float32 (n, dim), rows L2-normalised
    codes: np.ndarray | None = None  # (words, n) uint64 sign bits (vector_file.sign_codes); made when first needed
    row_reader: object | None = None  # reads rows of a mapped file without mapping them (vector_file.RowReader)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.node_ids)

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """The matrix rows `rows` (sorted), as a float32 copy."""
        if self.row_reader is not None:
            return self.row_reader(rows)
        return np.asarray(self.matrix[rows], dtype=np.float32)

    def scores(self, query: np.ndarray, doc_ids: Iterable[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Cosine similarity of `query` to every row (optionally only rows of `doc_ids`):
        (node_ids, scores), in node-id order."""
        node_ids, _, scores = self._scored(query, doc_ids)
        return node_ids, scores

    def search(self, query: np.ndarray, k: int = 10, doc_ids: Iterable[int] | None = None,
               cut: Cut | None = EXACT) -> list[DenseHit]:
        """The `k` most similar leaves, best first (ties in document order)."""
        return self.search_scopes(query, k, [doc_ids], cut)[0]

    def search_scopes(self, query: np.ndarray, k: int, scopes: list[Iterable[int] | None],
                      cut: Cut | None = EXACT) -> list[list[DenseHit]]:
        """The top `k` per scope (None = every document), best first. Up to `cut.exact_max` rows
        (or with no cut) from ONE matrix-vector product: the scopes only differ in which rows
        compete (a question's whole store and the documents it names). Beyond it, a scope of more
        rows than `cut.exact_max` is searched through its sign bits (Cut), a smaller one exactly
        over its own rows, read alone."""
        if k <= 0 or not len(self):
            return [[] for _ in scopes]
        if cut is None or len(self) <= cut.exact_max:
            node_ids, docs, scores = self._scored(query, None)
            results = []
            for scope in scopes:
                rows = np.arange(len(scores)) if scope is None else self._scope_rows(scope)
                results.append(self._top(rows, scores[rows], k))
            return results
        query = self._unit(query)
        results = []
        for scope in scopes:
            rows = None if scope is None else self._scope_rows(scope)
            count = len(self) if rows is None else len(rows)
            pool = max(cut.pool, k)  # a pool smaller than k could not fill the top k
            if count > cut.exact_max and count > pool:
                rows = np.sort(self._coarse(query, rows, pool, cut.levels))
            elif rows is None:
                rows = np.arange(len(self))
            results.append(self._top(rows, self.rows(rows) @ query, k))
        return results

    def _scope_rows(self, scope: Iterable[int]) -> np.ndarray:
        return np.flatnonzero(np.isin(self.doc_ids, np.fromiter(scope, dtype=np.int64)))

    def _top(self, rows: np.ndarray, scores: np.ndarray, k: int) -> list[DenseHit]:
        """The best `k` of `rows` (their `scores` given), ties in node-id order."""
        if len(rows) > k:
            keep = np.argpartition(-scores, k - 1)[:k]
            rows, scores = rows[keep], scores[keep]
        order = np.lexsort((self.node_ids[rows], -scores))
        return [DenseHit(int(self.node_ids[rows[i]]), int(self.doc_ids[rows[i]]), float(scores[i])) for i in order]

    def _coarse(self, query: np.ndarray, rows: np.ndarray | None, pool: int, levels: int,
                chunk: int = 65536) -> np.ndarray:
        """The `pool` rows (of `rows`, else of all) whose sign bits best match the query's. A
        mismatch in dimension i costs |query_i|, rounded to its band's mean: the query's
        components sorted by size and cut into `levels` bands, one popcount pass per band. Plain
        Hamming distance (one band) ranks far worse: at a million random vectors it kept 71 % of
        the exact top 20 in a pool of 10,000, against 94 % with three bands. Chunked so each
        pass stays in cache."""
        codes = self._codes()
        words = codes.shape[0]
        padded = np.zeros(words * 64, np.float32)
        padded[:self.dim] = query
        qbits = np.packbits(padded > 0).view(np.uint64)
        bands = np.array_split(np.argsort(np.abs(padded[:self.dim])), max(1, levels))
        masks, weights = [], []
        for band in bands:
            if len(band):
                chosen = np.zeros(words * 64, bool)
                chosen[band] = True
                masks.append(np.packbits(chosen).view(np.uint64))
                weights.append(np.float32(np.abs(padded[band]).mean()))
        total = len(self) if rows is None else len(rows)
        cost = np.empty(total, np.float32)
        size = min(chunk, total)
        diff, word, bits = np.empty((words, size), np.uint64), np.empty(size, np.uint64), np.empty(size, np.uint8)
        count, acc = np.empty(size, np.uint8), np.empty(size, np.float32)
        for first in range(0, total, chunk):
            last = min(total, first + chunk)
            n = last - first
            block = codes[:, first:last] if rows is None else codes[:, rows[first:last]]
            np.bitwise_xor(block, qbits[:, None], out=diff[:, :n])
            acc[:n] = 0
            for mask, weight in zip(masks, weights):
                count[:n] = 0
                for w in range(words):
                    np.bitwise_and(diff[w, :n], mask[w], out=word[:n])
                    np.bitwise_count(word[:n], out=bits[:n])
                    count[:n] += bits[:n]
                acc[:n] += weight * count[:n]
            cost[first:last] = acc[:n]
        best = np.argpartition(cost, pool - 1)[:pool] if total > pool else np.arange(total)
        return best if rows is None else rows[best]

    def _codes(self) -> np.ndarray:
        if self.codes is None:  # read from SQLite rather than mapped: made once per process
            self.codes = vector_file.sign_codes(self.matrix)
        return self.codes

    def _unit(self, query) -> np.ndarray:
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dim:
            raise ValueError(f"query has dim {query.shape[0]}, vectors of {self.model} have {self.dim}")
        return query / max(float(np.linalg.norm(query)), 1e-12)

    def _scored(self, query, doc_ids):
        if not len(self):
            empty = np.zeros(0, np.int64)
            return empty, empty, np.zeros(0, np.float32)
        query = self._unit(query)
        if doc_ids is None:
            return self.node_ids, self.doc_ids, self.matrix @ query
        rows = self._scope_rows(doc_ids)
        if len(rows) * 4 >= len(self):
            scores = self.matrix @ query  # most rows: cheaper than copying a masked sub-matrix
            return self.node_ids[rows], self.doc_ids[rows], scores[rows]
        # a few documents of a large store: only their rows are read (a full product would read,
        # and hold, the whole matrix)
        return self.node_ids[rows], self.doc_ids[rows], self.rows(rows) @ query


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
        matrix = VectorMatrix(model, mapped.node_ids, mapped.doc_ids, mapped.matrix, mapped.codes, mapped.rows)
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
    """Read in slices into one preallocated matrix: a million rows fetched at once held their
    bytes three times over (rows, joined bytes, normalised copy), several GB."""
    where = "FROM embeddings e JOIN nodes n ON n.id = e.node_id WHERE e.model = ?"
    total = db.execute(f"SELECT count(*) {where}", [model]).fetchone()[0]
    cursor = db.execute(f"SELECT e.node_id, n.doc_id, e.dim, e.vector {where} ORDER BY e.node_id", [model])
    node_ids, doc_ids = np.empty(total, np.int64), np.empty(total, np.int64)
    matrix, have = None, 0
    while rows := cursor.fetchmany(8192):
        if matrix is None:
            matrix = np.empty((total, rows[0][2]), np.float32)
        dim = matrix.shape[1]
        if have + len(rows) > total or any(r[2] != dim or len(r[3]) != dim * 4 for r in rows):
            raise LongqaError(f"vectors of {model} have inconsistent sizes in the store; run `longqa reindex`")
        block = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        # stored rows are normalised already; this guards against any that are not
        matrix[have:have + len(rows)] = block / np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)
        node_ids[have:have + len(rows)] = [r[0] for r in rows]
        doc_ids[have:have + len(rows)] = [r[1] for r in rows]
        have += len(rows)
    if matrix is None or have != total:
        if have:
            raise LongqaError(f"vectors of {model} changed while they were read; run the command again")
        return VectorMatrix(model, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 0), np.float32))
    return VectorMatrix(model, node_ids, doc_ids, matrix)


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


def pending_leaf_count(db: sqlite_utils.Database, doc_id: int) -> int:
    """How many of the document's leaves have no vector of any embedder (pending_leaves, counted)."""
    return db.execute(
        "SELECT count(*) FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id "
        "WHERE n.doc_id = ? AND n.kind = 'paragraph' AND e.node_id IS NULL", [doc_id]
    ).fetchone()[0]


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
