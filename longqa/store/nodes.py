"""Read nodes and whole trees back from the store."""

from __future__ import annotations

import sqlite_utils

from longqa.errors import NotFoundError
from longqa.structure.tree import Node

FIELDS = (  # the nodes table's columns, in order; Node has a field of each name
    "id", "doc_id", "parent_id", "kind", "title", "text", "summary", "path", "ord", "depth",
    "page_start", "page_end", "char_start", "char_end", "tokens",
)
SELECT_NODES = f"SELECT {', '.join(FIELDS)} FROM nodes"


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
    for i in range(0, len(node_ids), 500):
        chunk = node_ids[i : i + 500]
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


def ancestors(db: sqlite_utils.Database, node: Node) -> list[Node]:
    """From the root down to the node's parent."""
    chain = []
    parent_id = node.parent_id
    while parent_id is not None:
        parent = get_node(db, parent_id)
        chain.append(parent)
        parent_id = parent.parent_id
    return list(reversed(chain))
