"""A document's information-point graph in the store: all of the graph's SQL lives here.

Written whole in one transaction (an interrupted `ingest --graph` leaves no half graph; the next
run builds the documents still missing one). A graph belongs to one content hash of its
document and to the leaves it was built from (their key, LEAF_KEY): after the document changes
or is stored again, `graph_of` no longer returns it and the next `ingest --graph` replaces it.
Storing a document again drops its graph in the same transaction (store/documents.py); removing
it removes its graph (ON DELETE CASCADE).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sqlite_utils

from longqa.errors import NotFoundError
from longqa.store.db import now, snapshot, transaction
from longqa.store.nodes import LEAF_KEY, leaf_key, load_tree
from longqa.tree_types import Node


_CURRENT = f"g.sha256 = d.sha256 AND g.leaves = ({LEAF_KEY.format(doc='g.doc_id')})"


@dataclass
class GraphNode:
    level: int  # 0: a leaf of the document's tree; 1, 2, ...: information points
    ord: int  # position within its level, document order
    leaf_id: int  # the leaf itself (level 0) or the leaf the point's sentence comes from
    text: str  # points only; a leaf's text stays in `nodes`
    tokens: int
    vector: np.ndarray | None = None
    id: int | None = None  # set once stored


@dataclass
class Graph:
    doc_id: int
    sha256: str
    points: str  # "extractive" | "generated"
    edges: str  # "attention" | "cosine"
    model: str  # whose attention (or summaries); "" for cosine edges with extractive points
    embed_model: str
    leaves: str = ""  # the document's leaf key (LEAF_KEY) when the graph was built from them
    input_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    nodes: list[GraphNode] = field(default_factory=list)
    # (parent index, child index, weight), indices into `nodes`; after load, node ids
    edge_list: list[tuple[int, int, float]] = field(default_factory=list)

    @property
    def levels(self) -> int:
        return max((n.level for n in self.nodes), default=0)


def graph_of(db: sqlite_utils.Database, doc_id: int) -> dict | None:
    """The graph's header when the document has a graph built from its current content and its
    present leaves; None otherwise (no graph, or a stale one the search must not use)."""
    rows = list(db.query(
        f"SELECT g.* FROM graph_docs g JOIN documents d ON d.id = g.doc_id WHERE g.doc_id = ? AND {_CURRENT}",
        [doc_id]))
    return rows[0] if rows else None


def graph_source(db: sqlite_utils.Database, doc_id: int) -> tuple[str, Node, str] | None:
    """What a graph is built from, as one version of the document: (content hash, tree, leaf
    key), read in one snapshot; None when the document is gone."""
    with snapshot(db):
        row = db.execute("SELECT sha256 FROM documents WHERE id = ?", [doc_id]).fetchone()
        if row is None:
            return None
        try:
            tree = load_tree(db, doc_id)
        except NotFoundError:
            return None
        return row[0], tree, leaf_key(db, doc_id)


def graph_is_current(db: sqlite_utils.Database, doc_id: int) -> bool:
    """Whether the document has a graph the search may use (built from its present leaves)."""
    return graph_of(db, doc_id) is not None


def save_graph(db: sqlite_utils.Database, graph: Graph) -> bool:
    """Replace the document's graph by `graph`, atomically. False, and nothing written, when the
    document was removed or stored again (by another process) after the graph was built from it."""
    with transaction(db) as conn:
        row = conn.execute("SELECT sha256 FROM documents WHERE id = ?", (graph.doc_id,)).fetchone()
        if row is None or row[0] != graph.sha256 or leaf_key(conn, graph.doc_id) != graph.leaves:
            return False
        conn.execute("DELETE FROM graph_docs WHERE doc_id = ?", (graph.doc_id,))
        conn.execute(
            "INSERT INTO graph_docs (doc_id, sha256, points, edges, model, embed_model, levels, "
            "input_tokens, generated_tokens, seconds, created, leaves) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (graph.doc_id, graph.sha256, graph.points, graph.edges, graph.model, graph.embed_model,
             graph.levels, graph.input_tokens, graph.generated_tokens, round(graph.seconds, 3), now(),
             graph.leaves),
        )
        for node in graph.nodes:
            blob = None if node.vector is None else np.asarray(node.vector, np.float32).tobytes()
            node.id = conn.execute(
                "INSERT INTO graph_nodes (doc_id, level, ord, leaf_id, text, tokens, vector) VALUES (?,?,?,?,?,?,?)",
                (graph.doc_id, node.level, node.ord, node.leaf_id, node.text, node.tokens, blob),
            ).lastrowid
        conn.executemany(
            "INSERT INTO graph_edges (parent, child, weight) VALUES (?,?,?)",
            [(graph.nodes[p].id, graph.nodes[c].id, float(w)) for p, c, w in graph.edge_list if w > 0],
        )
    return True


def load_graph(db: sqlite_utils.Database, doc_id: int) -> Graph | None:
    """The document's current graph with its nodes (by level, then order) and edges (by node id);
    None when it has none built from its current content and leaves. Header, nodes and edges come
    from one snapshot, so a concurrent re-ingest cannot pair them with other leaves."""
    with snapshot(db):
        header = graph_of(db, doc_id)
        return None if header is None else _load_graph(db, doc_id, header)


def _load_graph(db: sqlite_utils.Database, doc_id: int, header: dict) -> Graph:
    graph = Graph(doc_id=doc_id, sha256=header["sha256"], points=header["points"], edges=header["edges"],
                  model=header["model"], embed_model=header["embed_model"], leaves=header["leaves"],
                  input_tokens=header["input_tokens"],
                  generated_tokens=header["generated_tokens"], seconds=header["seconds"])
    for row in db.query("SELECT * FROM graph_nodes WHERE doc_id = ? ORDER BY level, ord", [doc_id]):
        vector = np.frombuffer(row["vector"], dtype=np.float32) if row["vector"] is not None else None
        graph.nodes.append(GraphNode(row["level"], row["ord"], row["leaf_id"], row["text"], row["tokens"],
                                     vector, row["id"]))
    graph.edge_list = [
        (row["parent"], row["child"], row["weight"])
        for row in db.query(
            "SELECT e.parent, e.child, e.weight FROM graph_edges e JOIN graph_nodes n ON n.id = e.parent "
            "WHERE n.doc_id = ? ORDER BY e.parent, e.weight DESC", [doc_id])
    ]
    return graph


def graph_summary(db: sqlite_utils.Database) -> dict[int, dict]:
    """Per document with a graph: its header (current or stale) and node counts per level."""
    out: dict[int, dict] = {}
    for row in db.query(f"SELECT g.*, {_CURRENT} AS current FROM graph_docs g JOIN documents d ON d.id = g.doc_id"):
        out[row["doc_id"]] = dict(row)
    for row in db.query("SELECT doc_id, level, count(*) AS n FROM graph_nodes GROUP BY doc_id, level"):
        if row["doc_id"] in out:
            out[row["doc_id"]].setdefault("per_level", {})[row["level"]] = row["n"]
    return out
