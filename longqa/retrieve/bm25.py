"""BM25 over paragraph leaves, from the store's FTS5 index (columns title, path, text).

A leaf's `path` starts with its document's title and continues with its section titles, so a
question that names a company, a year or a section finds the right document through the path
column even when the paragraph itself never repeats that name.

Speed at 100,000 leaves: joining the FTS match to `nodes` to keep only leaves doubled the query
time, so the match runs alone (over-fetching, then dropping section nodes by id); and a search
restricted to some documents asks FTS5 for their rowid ranges (a document's nodes get consecutive
ids at ingest), which it answers without scoring the rest of the index.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from longqa.retrieve.terms import content_terms, fts_match

# bm25() weights per FTS column (title, path, text). Leaves have no title of their own; the path
# counts less than the text because every leaf of a section repeats it.
COLUMN_WEIGHTS = (0.0, 0.6, 1.0)
OVERFETCH = 4  # rows asked of FTS5 per wanted leaf (section nodes are in the index too)


@dataclass
class Hit:
    node_id: int
    score: float  # higher is better (FTS5's bm25() is negated)


def search(
    db: sqlite_utils.Database, question: str, k: int = 20, doc_ids: list[int] | None = None
) -> list[Hit]:
    """The `k` best leaves for `question` by BM25, best first; [] when it has no content words."""
    match = fts_match(question)
    if match is None or k <= 0:
        return []
    ranges = [doc_range(db, d) for d in doc_ids] if doc_ids else [None]
    hits: list[Hit] = []
    for span in ranges:
        hits += _leaves_of(db, _match(db, match, k * OVERFETCH, span), doc_ids)
    hits.sort(key=lambda h: (-h.score, h.node_id))
    if len(hits) < k:  # many section nodes among the best rows: ask again, filtering in SQL
        hits = _match_leaves(db, match, k, doc_ids)
    return hits[:k]


def doc_range(db: sqlite_utils.Database, doc_id: int) -> tuple[int, int] | None:
    row = db.execute("SELECT min(id), max(id) FROM nodes WHERE doc_id = ?", [doc_id]).fetchone()
    return None if row[0] is None else (row[0], row[1])


def _match(db, match: str, limit: int, span: tuple[int, int] | None) -> list[tuple[int, float]]:
    weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
    where, params = ("", []) if span is None else (" AND rowid BETWEEN ? AND ?", list(span))
    sql = (f"SELECT rowid, -bm25(nodes_fts, {weights}) AS score FROM nodes_fts "
           f"WHERE nodes_fts MATCH ?{where} ORDER BY score DESC LIMIT ?")
    return db.execute(sql, [match, *params, limit]).fetchall()


def _leaves_of(db, rows: list[tuple[int, float]], doc_ids: list[int] | None) -> list[Hit]:
    if not rows:
        return []
    where, params = _leaf_filter(doc_ids)
    marks = ",".join("?" * len(rows))
    keep = {r[0] for r in db.execute(
        f"SELECT id FROM nodes WHERE id IN ({marks}) AND {where}", [r[0] for r in rows] + params)}
    return [Hit(node_id, float(score)) for node_id, score in rows if node_id in keep]


def _match_leaves(db, match: str, k: int, doc_ids: list[int] | None) -> list[Hit]:
    weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
    where, params = _leaf_filter(doc_ids)
    sql = (
        f"SELECT nodes_fts.rowid AS id, -bm25(nodes_fts, {weights}) AS score "
        f"FROM nodes_fts JOIN nodes ON nodes.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? AND {where} ORDER BY score DESC LIMIT ?"
    )
    return [Hit(row[0], float(row[1])) for row in db.execute(sql, [match, *params, k]).fetchall()]


def matched_terms(db: sqlite_utils.Database, question: str, doc_ids: list[int] | None = None) -> dict[str, int]:
    """For each content term of `question`, how many leaves contain it (0 = the store never says it;
    counting stops at 1000). The lexical half of the "nothing relevant" decision."""
    where, params = _leaf_filter(doc_ids)
    counts: dict[str, int] = {}
    for term in content_terms(question)[:32]:
        sql = (
            "SELECT count(*) FROM (SELECT nodes_fts.rowid FROM nodes_fts JOIN nodes "
            f"ON nodes.id = nodes_fts.rowid WHERE nodes_fts MATCH ? AND {where} LIMIT 1000)"
        )
        # Only the text column: a term that appears solely in titles is not evidence of content.
        counts[term] = db.execute(sql, [f'text : "{term}"', *params]).fetchone()[0]
    return counts


def _leaf_filter(doc_ids: list[int] | None) -> tuple[str, list]:
    if not doc_ids:
        return "nodes.kind = 'paragraph'", []
    marks = ",".join("?" * len(doc_ids))
    return f"nodes.kind = 'paragraph' AND nodes.doc_id IN ({marks})", list(doc_ids)


def scores_in_documents(db: sqlite_utils.Database, question: str, doc_ids: list[int]) -> dict[int, float]:
    """BM25 of EVERY node of `doc_ids` that matches `question` (no top-k), by node id.

    Whole-document scoring needs the score of each paragraph of a candidate document, not only
    the best few of the store; restricting FTS5 to the documents' rowid ranges keeps it cheap.
    Section nodes are included (their rows hold titles and paths); callers keep the leaves."""
    match = fts_match(question)
    if match is None:
        return {}
    found: dict[int, float] = {}
    for doc_id in doc_ids:
        span = doc_range(db, doc_id)
        if span is not None:
            found.update({row[0]: float(row[1]) for row in _match(db, match, -1, span)})
    return found
