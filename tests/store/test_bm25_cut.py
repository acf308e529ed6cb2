"""BM25 over the whole store scoring only rows with a rarer phrase (store/fts_cut.py) gives those
rows exactly the scores of the full OR, and falls back to the full OR when they are too few."""

from __future__ import annotations

from longqa.ingest import Ingestor
from longqa.retrieve import bm25
from longqa.retrieve.settings import RETRIEVAL
from longqa.retrieve.terms import fts_match
from longqa.store import fts
from longqa.store.fts_cut import common_phrases, match_rows_cut

WEIGHTS = RETRIEVAL.column_weights


def shelf(tmp_path, db):
    """Every paragraph says 'revenue'; a few say 'footwear' too; one says 'footwear' alone."""
    parts = []
    for i in range(40):
        extra = " Footwear revenue grew in the wholesale channel." if i % 8 == 0 else ""
        parts.append(f"# Part {i}\n\nRevenue of segment {i} was reported for the year.{extra}\n")
    parts.append("# Shoes\n\nFootwear sold through our own stores.\n")
    path = tmp_path / "filing.md"
    path.write_text("\n".join(parts))
    Ingestor(db=db).ingest(path)


def test_rare_rows_keep_their_full_scores_and_the_top_is_the_same(tmp_path, db):
    shelf(tmp_path, db)
    phrases = fts_match("footwear revenue").split(" OR ")
    assert common_phrases(db, phrases, 10) == ['"revenue"']
    full = fts.match_rows(db, " OR ".join(phrases), WEIGHTS, -1)
    scores = dict(full)
    cut = match_rows_cut(db, phrases, WEIGHTS, 5, 10)
    assert len(cut) == 5
    assert all(abs(scores[node] - score) < 1e-9 for node, score in cut)
    assert [node for node, _ in cut] == [node for node, _ in sorted(full, key=lambda r: (-r[1], r[0]))[:5]]


def test_too_few_rare_rows_fall_back_to_every_matching_row(tmp_path, db):
    shelf(tmp_path, db)
    phrases = fts_match("footwear revenue").split(" OR ")
    full = fts.match_rows(db, " OR ".join(phrases), WEIGHTS, 30)
    cut = match_rows_cut(db, phrases, WEIGHTS, 30, 10)  # 6 rows hold 'footwear'
    assert sorted(cut) == sorted(full)


def test_nothing_changes_where_no_phrase_is_common(tmp_path, db):
    shelf(tmp_path, db)
    phrases = fts_match("footwear revenue").split(" OR ")
    assert common_phrases(db, phrases, RETRIEVAL.bm25_common_rows) == []
    assert match_rows_cut(db, phrases, WEIGHTS, 8, RETRIEVAL.bm25_common_rows) == fts.match_rows(
        db, " OR ".join(phrases), WEIGHTS, 8)
    assert [h.node_id for h in bm25.search(db, "footwear revenue", 4, settings=RETRIEVAL)]


def test_a_phrase_with_a_rare_word_is_rare_without_being_counted(tmp_path, db, monkeypatch):
    shelf(tmp_path, db)
    from longqa.store import fts_cut

    asked = []
    real = fts_cut.holds_more_than
    monkeypatch.setattr(fts_cut, "holds_more_than", lambda d, p, r: asked.append(p) or real(d, p, r))
    assert common_phrases(db, ['"footwear revenue"', '"segment was"'], 10) == []
    assert '"footwear revenue"' not in asked and '"segment was"' in asked
