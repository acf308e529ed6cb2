"""Full-text queries over the store's FTS5 index (`nodes_fts`: columns title, path, text).

The MATCH expression is built by retrieve/terms.py from the user's words (quoted plain terms
only); this module only runs it. Scores are FTS5's bm25() negated, so higher is better.
"""

from __future__ import annotations

import sqlite3

import sqlite_utils

LEAF = "nodes.kind = 'paragraph'"


def _weights(column_weights: tuple[float, ...]) -> str:
    return ", ".join(str(w) for w in column_weights)


def _leaf_filter(doc_ids: list[int] | None) -> tuple[str, list]:
    if not doc_ids:
        return LEAF, []
    marks = ",".join("?" * len(doc_ids))
    return f"{LEAF} AND nodes.doc_id IN ({marks})", list(doc_ids)


def match_rows(db: sqlite_utils.Database | sqlite3.Connection, match: str, column_weights: tuple[float, ...],
               limit: int, span: tuple[int, int] | None = None) -> list[tuple[int, float]]:
    """(node id, score) of matching index rows, best first, at most `limit` (-1: all); `span`
    restricts to a node-id range, which FTS5 answers without scoring the rest of the index.
    Section nodes are included: the match runs alone, without a join (twice as fast). `db` may
    be a plain connection (store/beside.py's reader)."""
    where, params = ("", []) if span is None else (" AND rowid BETWEEN ? AND ?", list(span))
    sql = (f"SELECT rowid, -bm25(nodes_fts, {_weights(column_weights)}) AS score FROM nodes_fts "
           f"WHERE nodes_fts MATCH ?{where} ORDER BY score DESC LIMIT ?")
    return [(row[0], float(row[1])) for row in db.execute(sql, [match, *params, limit]).fetchall()]


def leaf_ids_among(db: sqlite_utils.Database, node_ids: list[int], doc_ids: list[int] | None) -> set[int]:
    """Those of `node_ids` that are leaves (of `doc_ids`, when given)."""
    if not node_ids:
        return set()
    where, params = _leaf_filter(doc_ids)
    marks = ",".join("?" * len(node_ids))
    return {row[0] for row in db.execute(
        f"SELECT id FROM nodes WHERE id IN ({marks}) AND {where}", [*node_ids, *params])}


def match_leaves(db: sqlite_utils.Database, match: str, column_weights: tuple[float, ...], limit: int,
                 doc_ids: list[int] | None) -> list[tuple[int, float]]:
    """(leaf id, score), best first: the match joined to `nodes` so that only leaves count."""
    where, params = _leaf_filter(doc_ids)
    sql = (
        f"SELECT nodes_fts.rowid AS id, -bm25(nodes_fts, {_weights(column_weights)}) AS score "
        f"FROM nodes_fts JOIN nodes ON nodes.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? AND {where} ORDER BY score DESC LIMIT ?"
    )
    return [(row[0], float(row[1])) for row in db.execute(sql, [match, *params, limit]).fetchall()]


def leaves_matching(db: sqlite_utils.Database, match: str, doc_ids: list[int] | None, cap: int) -> int:
    """How many leaves (of `doc_ids`) match, counting stops at `cap`."""
    where, params = _leaf_filter(doc_ids)
    sql = (
        "SELECT count(*) FROM (SELECT nodes_fts.rowid FROM nodes_fts JOIN nodes "
        f"ON nodes.id = nodes_fts.rowid WHERE nodes_fts MATCH ? AND {where} LIMIT ?)"
    )
    return db.execute(sql, [match, *params, cap]).fetchone()[0]
