"""Each retrieval setting set as `--set retrieval.NAME=VALUE` changes what retrieval returns: the
leaves, their order or their scores, from a real store, through the Pipeline that the CLI builds."""

from __future__ import annotations

import pytest

from longqa.ask.settings import DEFAULTS
from longqa.ingest import Ingestor
from longqa.retrieve import bm25
from longqa.store import fts
from tests.ask_support import build_store, make_pipeline, reactor_handbook

QUESTION = "How often are fuel assemblies replaced?"


@pytest.fixture
def handbook(tmp_path):
    return build_store(tmp_path / "s.db", {"handbook.md": reactor_handbook()}, tmp_path)


def retrieved(db, values: dict, question: str = QUESTION, pattern: str = "exact", **options):
    """What the retriever of a Pipeline built with `--set` values returns for `question`."""
    pipeline = make_pipeline(db, settings=DEFAULTS.with_values(values), **options)
    return pipeline.retriever.retrieve(question, pattern)


def ranked(hits) -> list[tuple[int, float]]:
    return [(h.node_id, round(h.score, 6)) for h in hits]


def test_column_weights_move_the_bm25_scores_and_the_whole_document_scores(handbook):
    before, after = retrieved(handbook, {}), retrieved(handbook, {"retrieval.column_weights": "0,0,1"})
    assert ranked(before.bm25_hits) != ranked(after.bm25_hits)  # the section path no longer counts
    context = make_pipeline(handbook, use_loop=False).retrieve_context(QUESTION).leaf_scores
    changed = make_pipeline(handbook, use_loop=False, settings=DEFAULTS.with_values(
        {"retrieval.column_weights": "0,0,1"})).retrieve_context(QUESTION).leaf_scores
    assert context != changed  # the search's leaf scores read the same weights (retrieve/local.py)


def test_pattern_lean_moves_the_fusion_and_the_whole_document_scores(handbook):
    before, after = retrieved(handbook, {}), retrieved(handbook, {"retrieval.pattern_lean": "0.9"})
    assert ranked(before.candidates) != ranked(after.candidates)
    values = {"retrieval.pattern_lean": "0.9"}
    question = "How often does Harbor Point replace its fuel assemblies?"  # a name: the exact pattern
    pipeline = make_pipeline(handbook, use_loop=False)
    leaning = make_pipeline(handbook, use_loop=False, settings=DEFAULTS.with_values(values))
    refined = pipeline.retrieve_context(question)
    assert refined.analysis.pattern != "both"
    assert refined.leaf_scores != leaning.retrieve_context(question).leaf_scores


def test_the_term_count_cap_caps_the_coverage_counts(handbook):
    capped = DEFAULTS.with_values({"retrieval.term_count_cap": "2"}).retrieval
    counts = bm25.matched_terms(handbook, QUESTION, None, DEFAULTS.retrieval)
    assert counts["fuel"] > 2
    assert bm25.matched_terms(handbook, QUESTION, None, capped)["fuel"] == 2


def test_overfetch_sets_how_many_rows_fts5_is_asked_for(handbook, monkeypatch):
    """A speed setting: the leaves are the same, the rows read for them are not."""
    asked = []
    real = fts.match_leaves
    monkeypatch.setattr(fts, "match_leaves", lambda *a, **kw: asked.append(a) or real(*a, **kw))
    question = "Harbor Point reactor coolant"
    wide = retrieved(handbook, {}, question, k=8, retrieval="bm25")
    assert not asked  # 4 rows a leaf held enough leaves among the section nodes
    narrow = retrieved(handbook, {"retrieval.overfetch": "1"}, question, k=8, retrieval="bm25")
    assert asked  # one row a leaf did not: the leaves were asked for again, filtered in SQL
    assert ranked(narrow.bm25_hits) == ranked(wide.bm25_hits)


def shelf(tmp_path) -> str:
    """A filing whose short paragraphs repeat a common word and whose long ones say a rare word once."""
    parts = [f"# Part {i}\n\nRevenue of segment {i}.\n" for i in range(40)]
    parts.append("# Summary\n\n" + "Revenue " * 30 + "\n")
    filler = " ".join(["goods"] * 280)
    parts += [f"# Shoes {i}\n\n{filler} footwear sold in store {i}.\n" for i in range(6)]
    path = tmp_path / "filing.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def test_bm25_common_rows_leaves_rows_of_common_words_alone_unscored(tmp_path):
    from longqa.store import open_db

    db = open_db(tmp_path / "s.db")
    Ingestor(db=db).ingest(shelf(tmp_path))
    text = dict(db.execute("SELECT id, text FROM nodes").fetchall())
    every_row = retrieved(db, {"retrieval.bm25_common_rows": "0"}, "footwear revenue", k=1, retrieval="bm25")
    cut = retrieved(db, {"retrieval.bm25_common_rows": "10"}, "footwear revenue", k=1, retrieval="bm25")
    assert text[every_row.bm25_hits[0].node_id].startswith("Revenue Revenue")  # scored: it wins
    assert "footwear" in text[cut.bm25_hits[0].node_id]  # only rows with the rarer word were scored
