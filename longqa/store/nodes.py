"""Read nodes and whole trees back from the store."""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from longqa.errors import NotFoundError
from longqa.tree_types import Node

FIELDS = (  # the nodes table's columns, in order; Node has a field of each name
    "id", "doc_id", "parent_id", "kind", "title", "text", "summary", "path", "ord", "depth",
    "page_start", "page_end", "char_start", "char_end", "tokens",
)
SELECT_NODES = f"SELECT {', '.join(FIELDS)} FROM nodes"
CHUNK = 500  # ids bound per statement (SQLite limits the number of bound parameters)
# The document's leaves as one value: their count and lowest and highest id. Node ids are never
# reused (AUTOINCREMENT) and a document's nodes are written together, so the key changes whenever
# the document is stored again, even with the same content. `{doc}` is SQL giving the document id.
LEAF_KEY = ("SELECT count(*) || ':' || coalesce(min(id), 0) || ':' || coalesce(max(id), 0) "
            "FROM nodes WHERE nodes.doc_id = {doc} AND nodes.kind = 'paragraph'")


@dataclass(frozen=True)
class LeafText:
    """What a leaf's vector is made from."""

    node_id: int
    path: str
    text: str


def to_node(row: dict) -> Node:
    return Node(**{field: row[field] for field in FIELDS})


def get_node(db: sqlite_utils.Database, node_id: int) -> Node:
    rows = list(db.query(f"{SELECT_NODES} WHERE id = ?", [node_id]))
    if not rows:
        raise NotFoundError(f"node {node_id}: no such node in the store")
    return to_node(rows[0])


def get_nodes(db: sqlite_utils.Database, node_ids: list[int]) -> dict[int, Node]:
    """Nodes by id, fetched in chunks (SQLite limits the number of bound parameters)."""
    found: dict[int, Node] = {}
    for i in range(0, len(node_ids), CHUNK):
        chunk = node_ids[i : i + CHUNK]
        marks = ",".join("?" * len(chunk))
        for row in db.query(f"{SELECT_NODES} WHERE id IN ({marks})", chunk):
            found[row["id"]] = to_node(row)
    return found


def load_tree(db: sqlite_utils.Database, doc_id: int) -> Node:
    """The document's root with all descendants linked, children in document order."""
    by_id: dict[int, Node] = {}
    root = None
    for row in db.query(f"{SELECT_NODES} WHERE doc_id = ? ORDER BY ord", [doc_id]):
        node = to_node(row)
        by_id[node.id] = node
        if node.parent_id is None:
            root = node
        else:
            by_id[node.parent_id].children.append(node)
    if root is None:
        raise NotFoundError(f"document {doc_id}: no such document in the store")
    return root


def leaf_count(db: sqlite_utils.Database, doc_ids: list[int] | None = None) -> int:
    """Leaves in the store, or in `doc_ids`.

    The whole store's count is every document's node count (written with its tree, in the same
    transaction) less the inner nodes, which the kind index holds as two short ranges around
    'paragraph': under a millisecond at a million leaves, where counting the leaves themselves
    took 55-110 ms of every `ask`."""
    if not doc_ids:
        return db.execute(
            "SELECT (SELECT coalesce(sum(nodes), 0) FROM documents) - "
            "(SELECT count(*) FROM nodes WHERE kind < 'paragraph' OR kind > 'paragraph')"
        ).fetchone()[0]
    marks = ",".join("?" * len(doc_ids))
    return db.execute(
        f"SELECT count(*) FROM nodes WHERE kind = 'paragraph' AND doc_id IN ({marks})", list(doc_ids)
    ).fetchone()[0]


def leaf_texts(db: sqlite_utils.Database, doc_id: int) -> list[LeafText]:
    """Every leaf of the document, in id order."""
    return [LeafText(*row) for row in db.execute(
        "SELECT id, path, text FROM nodes WHERE doc_id = ? AND kind = 'paragraph' ORDER BY id", [doc_id]
    ).fetchall()]


def leaf_key(db_or_conn, doc_id: int) -> str:
    """The document's leaf key now (see LEAF_KEY); "0:0:0" for a document that is gone."""
    return db_or_conn.execute(LEAF_KEY.format(doc="?"), [doc_id]).fetchone()[0]


def id_range(db: sqlite_utils.Database, doc_id: int) -> tuple[int, int] | None:
    """(lowest, highest) node id of the document: its nodes get consecutive ids at ingest."""
    row = db.execute("SELECT min(id), max(id) FROM nodes WHERE doc_id = ?", [doc_id]).fetchone()
    return None if row[0] is None else (row[0], row[1])


def documents_of(db: sqlite_utils.Database, node_ids: list[int]) -> dict[int, int]:
    """Node id -> its document id."""
    found: dict[int, int] = {}
    for i in range(0, len(node_ids), CHUNK):
        chunk = node_ids[i : i + CHUNK]
        marks = ",".join("?" * len(chunk))
        found.update(db.execute(f"SELECT id, doc_id FROM nodes WHERE id IN ({marks})", chunk).fetchall())
    return found


def document_paths_of(db: sqlite_utils.Database, node_ids: list[int]) -> dict[int, str]:
    """Node id -> the stored path of its document."""
    found: dict[int, str] = {}
    for i in range(0, len(node_ids), CHUNK):
        chunk = node_ids[i : i + CHUNK]
        marks = ",".join("?" * len(chunk))
        found.update(db.execute(
            f"SELECT nodes.id, documents.path FROM nodes JOIN documents ON documents.id = nodes.doc_id "
            f"WHERE nodes.id IN ({marks})", chunk).fetchall())
    return found
