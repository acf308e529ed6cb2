"""BM25's top rows in a large store without scoring every row that holds a common word.

FTS5 scores every row a MATCH expression matches before it can order them: at a million leaves a
financial question's OR of terms ("revenue", "fiscal", "net sales" among them) matched 171,000
rows, and bm25() over them took 540-800 ms where counting them took 92. The rows that can reach
the top are almost always among those holding one of the question's rarer phrases, so the
phrases are split by how many rows hold them (more than `common_rows`: common) and only rows
holding a rare phrase are scored, in two queries:

    (rare) AND (common)    rows with a rare and a common phrase, each with its full score
    rare                   rows with a rare phrase, scored on the rare phrases alone

The first expression holds every phrase of the question once, and bm25() takes its IDFs from the
whole index, so its rows' scores are exactly those of the full OR; a row of the second that the
first lacks holds no common phrase, so its rare-only score is its full score too. A row of the
second that the first holds beyond its top `limit` scores less than all of those (its rare-only
score is below its full one), so the best `limit` of both, the first's scores winning, are the
full OR's best `limit` among rows with a rare phrase (checked: the same 80 rows and scores on the
million-leaf bench store). The second query reads no common word's list, which is the cost.
What is given up: rows holding only common phrases, which score at most what those phrases' low
IDFs allow; when the rare phrases reach fewer rows than were asked for, the full OR runs as
before. With no common phrase (any store of the sizes measured before, 100,000 leaves) nothing
changes.
"""

from __future__ import annotations

import sqlite_utils

from longqa.store.beside import beside, side_reader
from longqa.store.fts import match_rows


def holds_more_than(db: sqlite_utils.Database, phrase: str, rows: int) -> bool:
    """Whether more than `rows` index rows match `phrase`; stops counting there (a common word
    costs ~2 ms at a million rows, where counting it all would read its whole list)."""
    sql = "SELECT count(*) FROM (SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ? LIMIT ?)"
    return db.execute(sql, [phrase, rows + 1]).fetchone()[0] > rows


def common_phrases(db: sqlite_utils.Database, phrases: list[str], rows: int) -> list[str]:
    """The quoted `phrases` that more than `rows` index rows hold. A phrase with a rare word is
    rare without asking (its rows are among that word's), so phrases are counted only when all
    their words are common: word counts need no positions, phrase counts do."""
    words: dict[str, bool] = {}

    def common_word(word: str) -> bool:
        if word not in words:
            words[word] = holds_more_than(db, f'"{word}"', rows)
        return words[word]

    common = []
    for phrase in phrases:
        parts = phrase.strip('"').split()
        if all(common_word(w) for w in parts) and (len(parts) == 1 or holds_more_than(db, phrase, rows)):
            common.append(phrase)
    return common


def match_rows_cut(db: sqlite_utils.Database, phrases: list[str], column_weights: tuple[float, ...], limit: int,
                   common_rows: int) -> list[tuple[int, float]]:
    """(node id, score) of the best `limit` rows for the OR of the quoted `phrases`, best first,
    scoring only rows that hold a phrase fewer than `common_rows` rows hold (see the module
    docstring); the plain OR when no phrase is that common, or every one is, or `limit` is -1."""
    full = " OR ".join(phrases)
    if limit < 0 or common_rows <= 0 or len(phrases) < 2:
        return match_rows(db, full, column_weights, limit)
    common = common_phrases(db, phrases, common_rows)
    rare = [p for p in phrases if p not in common]
    if not common or not rare:
        return match_rows(db, full, column_weights, limit)
    either = " OR ".join(rare)
    reader = side_reader(db)  # the second query runs on the other core when it can
    rare_job = beside(match_rows, reader, either, column_weights, limit) if reader is not None else None
    both = match_rows(db, f"({either}) AND ({' OR '.join(common)})", column_weights, limit)
    seen = {node for node, _ in both}
    rare_rows = rare_job.result() if rare_job is not None else match_rows(db, either, column_weights, limit)
    rows = both + [row for row in rare_rows if row[0] not in seen]
    if len(rows) < limit:  # too few rows hold a rare phrase: the common ones must fill the list
        return match_rows(db, full, column_weights, limit)
    rows.sort(key=lambda row: (-row[1], row[0]))
    return rows[:limit]
