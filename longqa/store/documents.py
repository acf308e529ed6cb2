"""Documents in the store: write a whole tree atomically, find, list and remove documents."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import sqlite_utils

from longqa.errors import AmbiguousError, NotFoundError
from longqa.names import as_text, shown, stored_path
from longqa.store.db import now, transaction
from longqa.store.nodes import CHUNK, FIELDS
from longqa.tree_types import Node, walk


@dataclass
class DocumentRecord:
    path: str
    sha256: str
    title: str
    format: str
    pages: int
    structure: str
    bytes: int
    ocr_pages: str = ""  # pages whose text was read by OCR, as page_ranges() writes them


def page_ranges(pages: list[int]) -> str:
    """[3, 7, 8, 9] -> "3,7-9"."""
    runs: list[str] = []
    for n in sorted(set(pages)):
        if runs and runs[-1].rsplit("-", 1)[-1] == str(n - 1):
            runs[-1] = f"{runs[-1].split('-')[0]}-{n}"
        else:
            runs.append(str(n))
    return ",".join(runs)


def parse_page_ranges(text: str | None) -> set[int]:
    """"3,7-9" -> {3, 7, 8, 9}; '' or None -> set()."""
    pages: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        pages.update(range(int(low), int(high or low) + 1))
    return pages


def ocr_label(start: int, end: int, ocr_pages: set[int]) -> str:
    """What a citation adds to a page span some of whose pages were read by OCR: ", OCR" when all of
    them were, ", OCR on p. 12" (or "pp. 12-13") when only some were, '' when none was."""
    read = sorted(n for n in ocr_pages if start <= n <= end)
    if not read:
        return ""
    if len(read) == end - start + 1:
        return ", OCR"
    return ", OCR on " + (f"p. {read[0]}" if len(read) == 1 else f"pp. {page_ranges(read).replace(',', ', ')}")


def ocr_pages_of(db: sqlite_utils.Database, doc_ids: list[int] | None = None) -> dict[int, set[int]]:
    """Id -> pages read by OCR, for the documents that have any (of `doc_ids`, or all). A store
    from before OCR was recorded has none."""
    try:
        rows = db.execute("SELECT id, ocr_pages FROM documents WHERE ocr_pages != ''").fetchall()
    except sqlite3.OperationalError:  # no such column: read-only and not yet migrated
        return {}
    wanted = None if doc_ids is None else set(doc_ids)
    return {row[0]: parse_page_ranges(row[1]) for row in rows if wanted is None or row[0] in wanted}


@dataclass(frozen=True)
class DocumentLabel:
    """How a document is named in passages and matched by name: its id, title and stored path, and
    the pages OCR read (citations say so)."""

    id: int
    title: str
    path: str
    ocr_pages: frozenset[int] = frozenset()


def document_labels(db: sqlite_utils.Database, doc_ids: list[int] | None = None) -> dict[int, DocumentLabel]:
    """Id -> label of the documents `doc_ids` (every document when None)."""
    if doc_ids is None:
        rows = db.execute("SELECT id, title, path FROM documents").fetchall()
        found = {row[0]: DocumentLabel(*row) for row in rows}
    else:
        ids, found = list(doc_ids), {}
        for i in range(0, len(ids), CHUNK):
            chunk = ids[i : i + CHUNK]
            marks = ",".join("?" * len(chunk))
            for row in db.execute(f"SELECT id, title, path FROM documents WHERE id IN ({marks})", chunk):
                found[row[0]] = DocumentLabel(*row)
    for doc_id, pages in ocr_pages_of(db, doc_ids).items():
        if doc_id in found:
            found[doc_id] = DocumentLabel(doc_id, found[doc_id].title, found[doc_id].path, frozenset(pages))
    return found


def top_headings(db: sqlite_utils.Database) -> dict[int, list[str]]:
    """Each document's titled top-level sections, in document order (how a document may name itself)."""
    found: dict[int, list[str]] = {}
    for doc_id, title in db.execute("SELECT doc_id, title FROM nodes WHERE kind = 'section' AND depth = 1 "
                                    "AND title != '' ORDER BY doc_id, ord"):
        found.setdefault(doc_id, []).append(title)
    return found


def document_count(db: sqlite_utils.Database) -> int:
    return db.execute("SELECT count(*) FROM documents").fetchone()[0]


def document_ids(db: sqlite_utils.Database) -> set[int]:
    return {row[0] for row in db.execute("SELECT id FROM documents")}


def documents_version(db: sqlite_utils.Database) -> tuple[int, int, str]:
    """(count, highest id, digest of the documents' content hashes): changes whenever a document is
    added, removed or stored again with other content (which keeps its id, maybe not its title)."""
    row = db.execute("SELECT count(*), coalesce(max(id), 0), coalesce(group_concat(sha256, ''), '') "
                     "FROM (SELECT id, sha256 FROM documents ORDER BY id)").fetchone()
    return row[0], row[1], hashlib.blake2b(row[2].encode(), digest_size=8).hexdigest()


def get_document(db: sqlite_utils.Database, doc_id: int) -> dict:
    """The document's row (NotFoundError when there is none)."""
    rows = list(db.query("SELECT * FROM documents WHERE id = ?", [doc_id]))
    if not rows:
        raise NotFoundError(f"document {doc_id}: no such document in the store")
    return rows[0]


def find_by_path(db: sqlite_utils.Database, path: str) -> dict | None:
    rows = list(db.query("SELECT * FROM documents WHERE path = ?", [path]))
    return rows[0] if rows else None


def resolve(db: sqlite_utils.Database, ref: str | int) -> dict:
    """The one document `ref` names, tried in this order, each compared exactly (no patterns):
    id, stored path, the path of a file (made absolute), file name, title.

    The first kind of name that fits decides: one document is returned; several raise
    AmbiguousError listing them, so that nothing is done to a document the user did not mean."""
    ref = str(ref)
    text = as_text(ref)
    rows = list(db.query("SELECT id, path, title FROM documents ORDER BY id"))
    tests = []
    if ref.isdigit():
        tests.append(lambda row: row["id"] == int(ref))
    tests.append(lambda row: row["path"] == text)
    try:
        absolute = stored_path(Path(ref))
        tests.append(lambda row: row["path"] == absolute)
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte: not a file name then
        pass
    tests.append(lambda row: PurePosixPath(row["path"]).name == text)
    tests.append(lambda row: row["title"] == text)
    for test in tests:
        found = [row for row in rows if test(row)]
        if len(found) == 1:
            return db["documents"].get(found[0]["id"])
        if len(found) > 1:
            raise AmbiguousError(f"{shown(ref)}: {_candidates(found)}; name one by its id or full path")
    raise NotFoundError(f"{shown(ref)}: no such document in the store (see `longqa inspect docs`)")


def _candidates(rows: list[dict], limit: int = 8) -> str:
    listed = "; ".join(f"#{row['id']} {shown(row['path'])}" for row in rows[:limit])
    more = f"; and {len(rows) - limit} more" if len(rows) > limit else ""
    return f"fits {len(rows)} documents: {listed}{more}"


def list_documents(db: sqlite_utils.Database) -> list[dict]:
    return list(db.query("SELECT * FROM documents ORDER BY id"))


def save_document(
    db: sqlite_utils.Database,
    record: DocumentRecord,
    root: Node,
    vectors: np.ndarray | None = None,
    embed_model: str = "",
) -> int:
    """Store a document and its whole tree in one transaction; replaces any earlier version.

    `vectors`, when given, holds one row per leaf in document order and is stored with the
    embedder's identity `embed_model`. Returns the document id (kept when a path is re-ingested).
    """
    nodes = list(walk(root))
    with transaction(db) as conn:
        existing = conn.execute("SELECT id FROM documents WHERE path = ?", (record.path,)).fetchone()
        fields = (
            record.sha256, record.title, record.format, record.pages, root.tokens,
            len(nodes), record.structure, record.bytes, now(), record.ocr_pages,
        )
        if existing:
            doc_id = existing[0]
            _delete_nodes(conn, doc_id)
            conn.execute(
                "UPDATE documents SET sha256=?, title=?, format=?, pages=?, tokens=?, nodes=?, "
                "structure=?, bytes=?, added=?, ocr_pages=? WHERE id=?",
                (*fields, doc_id),
            )
        else:
            doc_id = conn.execute(
                "INSERT INTO documents (sha256, title, format, pages, tokens, nodes, structure, "
                "bytes, added, ocr_pages, path) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (*fields, record.path),
            ).lastrowid
        _insert_nodes(conn, doc_id, root)
        if vectors is not None:
            leaf_ids = [n.id for n in nodes if n.is_leaf]
            if len(leaf_ids) != len(vectors):
                raise ValueError(f"{len(vectors)} vectors for {len(leaf_ids)} leaves")
            conn.executemany(
                "INSERT INTO embeddings (node_id, model, dim, vector) VALUES (?,?,?,?)",
                [
                    (node_id, embed_model, vector.shape[0], np.asarray(vector, np.float32).tobytes())
                    for node_id, vector in zip(leaf_ids, vectors)
                ],
            )
    return doc_id


def _insert_nodes(conn, doc_id: int, root: Node) -> None:
    """Assign ids in pre-order (parents before children) and insert all nodes in one batch."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'nodes'").fetchone()
    next_id = (row[0] if row else 0) + 1
    rows = []

    def visit(node: Node, parent_id: int | None) -> None:
        nonlocal next_id
        node.id, node.parent_id, node.doc_id = next_id, parent_id, doc_id
        next_id += 1
        rows.append(tuple(getattr(node, field) for field in FIELDS))
        for child in node.children:
            visit(child, node.id)

    visit(root, None)
    columns, marks = ", ".join(FIELDS), ",".join("?" * len(FIELDS))
    conn.executemany(f"INSERT INTO nodes ({columns}) VALUES ({marks})", rows)


def _delete_nodes(conn, doc_id: int) -> None:
    # The graph is built over these leaves; it goes with them (edges and points cascade).
    conn.execute("DELETE FROM graph_docs WHERE doc_id = ?", (doc_id,))
    conn.execute("DELETE FROM embeddings WHERE node_id IN (SELECT id FROM nodes WHERE doc_id = ?)", (doc_id,))
    # Children reference their parents; check foreign keys at commit so row order does not matter.
    conn.execute("PRAGMA defer_foreign_keys = ON")
    conn.execute("DELETE FROM nodes WHERE doc_id = ?", (doc_id,))


def delete_document(db: sqlite_utils.Database, doc_id: int) -> None:
    """Remove a document and everything derived from it, atomically."""
    with transaction(db) as conn:
        _delete_nodes(conn, doc_id)
        conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
