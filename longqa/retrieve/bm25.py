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

from longqa.retrieve.settings import RetrievalSettings
from longqa.retrieve.terms import content_terms, fts_match
from longqa.store import fts, fts_cut
from longqa.store.nodes import id_range



@dataclass
class Hit:
    node_id: int
    score: float  # higher is better (FTS5's bm25() is negated)


def search(
    db: sqlite_utils.Database, question: str, k: int, doc_ids: list[int] | None = None, *,
    settings: RetrievalSettings,
) -> list[Hit]:
    """The `k` best leaves for `question` by BM25, best first; [] when it has no content words.
    `settings` is the call's retrieval section (column weights, over-fetch, the common-row cut)."""
    match = fts_match(question)
    if match is None or k <= 0:
        return []
    ranges = [id_range(db, d) for d in doc_ids] if doc_ids else [None]
    hits: list[Hit] = []
    for span in ranges:
        if span is None:  # the whole store: rows holding only common phrases are not scored (fts_cut.py)
            rows = fts_cut.match_rows_cut(db, match.split(" OR "), settings.column_weights,
                                          k * settings.overfetch, settings.bm25_common_rows)
        else:
            rows = fts.match_rows(db, match, settings.column_weights, k * settings.overfetch, span)
        keep = fts.leaf_ids_among(db, [node_id for node_id, _ in rows], doc_ids)
        hits += [Hit(node_id, score) for node_id, score in rows if node_id in keep]
    hits.sort(key=lambda h: (-h.score, h.node_id))
    if len(hits) < k:  # many section nodes among the best rows: ask again, filtering in SQL
        hits = [Hit(*row) for row in fts.match_leaves(db, match, settings.column_weights, k, doc_ids)]
    return hits[:k]


def matched_terms(db: sqlite_utils.Database, question: str, doc_ids: list[int] | None = None,
                  settings: RetrievalSettings | None = None) -> dict[str, int]:
    """For each content term of `question`, how many leaves hold it in their text or section path
    (0 = the store never says it; counting stops at `settings.term_count_cap`). The lexical half of
    the "nothing relevant" decision. `settings` is the call's retrieval section; a caller that
    passes none (ask/search/relevance.py, for now) counts up to the default cap."""
    settings = settings or RetrievalSettings()
    # A leaf's text and its section path: an article often names its subject only in its heading
    # ("# Tikhaya Sosna River" over "The river has its sources ..."); the title column (empty for
    # leaves) is left out.
    return {term: fts.leaves_matching(db, f'{{path text}} : "{term}"', doc_ids, settings.term_count_cap)
            for term in content_terms(question)[:32]}


def scores_in_documents(db: sqlite_utils.Database, question: str, doc_ids: list[int], *,
                        settings: RetrievalSettings) -> dict[int, float]:
    """BM25 of EVERY node of `doc_ids` that matches `question` (no top-k), by node id.

    Whole-document scoring needs the score of each paragraph of a candidate document, not only
    the best few of the store; restricting FTS5 to the documents' rowid ranges keeps it cheap.
    Section nodes are included (their rows hold titles and paths); callers keep the leaves."""
    match = fts_match(question)
    if match is None:
        return {}
    found: dict[int, float] = {}
    for doc_id in doc_ids:
        span = id_range(db, doc_id)
        if span is not None:
            found.update(fts.match_rows(db, match, settings.column_weights, -1, span))
    return found
