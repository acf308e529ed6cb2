"""Retrieval: safe FTS5 queries from any user text, BM25/dense over leaves, fusion math, doc names."""

import pytest

from longqa.retrieve import bm25, dense
from longqa.retrieve.bm25 import Hit
from longqa.retrieve.docnames import name_scores, name_terms
from longqa.retrieve.equivalents import _PHRASES, equivalent_phrases
from longqa.text.stems import singular_phrase as _stem
from longqa.retrieve.fusion import fuse, min_max, weights
from longqa.retrieve.hybrid import HybridRetriever
from longqa.retrieve.settings import RETRIEVAL
from longqa.retrieve.terms import content_terms, fts_match
from tests.ask_support import build_store, reactor_handbook
from tests.fakes import FakeEmbedder

NASTY = [
    '"unbalanced quote about coolant',
    "coolant AND",
    "AND OR NOT",
    "NEAR(coolant fuel",
    "NEAR(coolant fuel, 3)",
    "coolant*",
    "*",
    "-coolant -fuel",
    "(coolant OR (fuel",
    "title:coolant",
    "{title path}: coolant",
    "^coolant",
    "coolant + fuel",
    "'single' quotes and `backticks`",
    "café Zürich 東京 ☢️ coolant",
    "\u0301\u0302",
    "",
    "   ",
    "?!?.,;:",
    "coolant" * 200,
    "x " * 500,
    'coolant" OR "fuel',
    "SELECT * FROM nodes; --",
    "col1:col2:col3",
]


@pytest.fixture
def handbook_db(tmp_path, db_path):
    return build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)


@pytest.mark.parametrize("text", NASTY)
def test_any_user_text_is_a_valid_fts_query(handbook_db, text):
    hits = bm25.search(handbook_db, text, 20, settings=RETRIEVAL)  # must not raise an FTS5 syntax error
    assert all(isinstance(h, Hit) for h in hits)
    expression = fts_match(text)
    if expression is not None:
        assert all(part.startswith('"') and part.endswith('"') for part in expression.split(" OR "))


def test_operators_become_plain_words_and_still_find_content(handbook_db):
    kinds = {row["id"]: row for row in handbook_db.query("SELECT id, kind, text FROM nodes")}
    for text in ['NEAR(coolant AND "loop', "-coolant* (loop)"]:
        hits = bm25.search(handbook_db, text, 20, settings=RETRIEVAL)
        assert hits, text
        assert all(kinds[h.node_id]["kind"] == "paragraph" for h in hits)
        assert "coolant" in kinds[hits[0].node_id]["text"].lower()


def test_stopwords_only_gives_no_query(handbook_db):
    assert fts_match("what is the, and how?") is None
    assert bm25.search(handbook_db, "what is the, and how?", 20, settings=RETRIEVAL) == []


def test_content_terms_keep_names_years_and_drop_question_words():
    assert content_terms("What was Amazon's revenue in FY2017?") == ["amazon", "revenue", "fy2017", "2017"]
    assert content_terms("NEAR(a) AND b") == ["near"]


def test_bm25_and_dense_respect_doc_filter(tmp_path, db_path):
    db = build_store(db_path, {
        "cooling.md": "# Cooling Notes\n\nThe coolant pump runs at 1,200 litres per minute.\n",
        "fuel.md": "# Fuel Notes\n\nThe coolant is never mixed with the fuel oil.\n",
    }, tmp_path)
    fuel_id = db.execute("SELECT id FROM documents WHERE title = 'Fuel Notes'").fetchone()[0]
    doc_of = dict(db.execute("SELECT id, doc_id FROM nodes").fetchall())
    assert len({doc_of[h.node_id] for h in bm25.search(db, "coolant", 20, settings=RETRIEVAL)}) == 2
    assert {doc_of[h.node_id] for h in bm25.search(db, "coolant", 20, [fuel_id], settings=RETRIEVAL)} == {fuel_id}
    vector = FakeEmbedder().embed(["coolant pump"])[0]
    assert {doc_of[h.node_id] for h in dense.search(db, vector, FakeEmbedder.name, 20, [fuel_id], settings=RETRIEVAL)} == {fuel_id}


def test_min_max_and_equal_scores():
    assert min_max({1: 4.0, 2: 2.0, 3: 3.0}) == {1: 1.0, 2: 0.0, 3: 0.5}
    assert min_max({1: 0.3, 2: 0.3}) == {1: 1.0, 2: 1.0}
    assert min_max({}) == {}
    # with a floor (BM25's 0: no query word), values above it keep their distance from it
    assert min_max({1: 4.0, 2: 2.0}, floor=0.0) == {1: 1.0, 2: 0.5}
    assert min_max({1: 0.0, 2: 0.0}, floor=0.0) == {1: 0.0, 2: 0.0}


def test_weights_lean_three_to_two_toward_the_pattern():
    assert weights("exact", RETRIEVAL.pattern_lean) == (0.6, 0.4)
    assert weights("semantic", RETRIEVAL.pattern_lean) == (0.4, 0.6)
    assert weights("both", RETRIEVAL.pattern_lean) == (0.5, 0.5)


def test_fusion_math_and_relative_cutoff():
    lexical = [Hit(1, 10.0), Hit(2, 6.0), Hit(3, 2.0)]  # normalised 1, 0.5, 0
    semantic = [Hit(2, 0.9), Hit(4, 0.7), Hit(5, 0.5)]  # normalised 1, 0.5, 0
    exact = {f.node_id: f.score for f in fuse(lexical, semantic, "exact", settings=RETRIEVAL)}
    assert exact == pytest.approx({1: 0.6, 2: 0.6 * 0.5 + 0.4 * 1.0, 4: 0.4 * 0.5})
    both = {f.node_id: f.score for f in fuse(lexical, semantic, "both", settings=RETRIEVAL)}
    assert both == pytest.approx({2: 0.75, 1: 0.5, 4: 0.25})
    ranked = fuse(lexical, semantic, "semantic", settings=RETRIEVAL)
    assert [f.node_id for f in ranked] == [2, 1, 4]  # 0.8, 0.4, 0.3
    ranked_scores = {f.node_id: f.score for f in ranked}
    assert ranked_scores == pytest.approx({2: 0.8, 1: 0.4, 4: 0.3})
    # 0.1 x best: fused 0.11 of the best is kept, 0.09 is dropped
    lex = [Hit(1, 1.0), Hit(2, 0.0)]
    sem = [Hit(1, 1.0), Hit(3, 0.22), Hit(4, 0.18), Hit(2, 0.0)]
    kept = {f.node_id: f.score for f in fuse(lex, sem, "both", settings=RETRIEVAL)}
    assert kept == pytest.approx({1: 1.0, 3: 0.11})


def test_fusion_with_one_retriever_uses_its_scores_alone():
    only = fuse([Hit(1, 5.0), Hit(2, 3.0), Hit(3, 1.0)], [], "exact", settings=RETRIEVAL)
    assert [(f.node_id, f.score) for f in only] == [(1, 1.0), (2, 0.5)]


def test_the_name_prior_weights_before_the_cutoff():
    """Step 3 before step 4: a leaf of an unnamed document counts 1 / (1 + name_boost) as much,
    and the 0.1 x best cut-off is taken after that, so it can drop the leaf."""
    lexical = [Hit(1, 1.0), Hit(2, 0.3), Hit(3, 0.0)]  # normalised 1, 0.3, 0
    doc_of = {1: 10, 2: 20, 3: 10}
    plain = {f.node_id: f.score for f in fuse(lexical, [], "both", settings=RETRIEVAL)}
    assert plain == pytest.approx({1: 1.0, 2: 0.3})
    named = {f.node_id: f.score for f in fuse(lexical, [], "both", {10: 1.0, 20: 0.0}, doc_of, settings=RETRIEVAL)}
    assert named == pytest.approx({1: 1.0})  # 0.3 / (1 + 3) = 0.075 < 0.1: cut
    half = {f.node_id: f.score for f in fuse(lexical, [], "both", {10: 1.0, 20: 0.5}, doc_of, settings=RETRIEVAL)}
    assert half == pytest.approx({1: 1.0, 2: 0.3 * 2.5 / 4})


def test_hybrid_candidates_are_exactly_the_fusion_of_its_hits(tmp_path, db_path):
    """The retriever scores through fusion.fuse and nothing else: fusing its own hits again with the
    same name prior gives back its candidates, scores and order."""
    db = build_store(db_path, {
        "NIKE_2018_10K.md": "# Annual report\n\nRevenues grew in the year.\n",
        "AMAZON_2017_10K.md": "# Annual report\n\nRevenues grew in the year.\n",
        "AMAZON_2019_10K.md": "# Annual report\n\nRevenues grew in the year.\n",
    }, tmp_path)
    result = HybridRetriever(db, FakeEmbedder()).retrieve("What was Amazon's revenue growth in FY2017?")
    assert result.named_docs and result.bm25_hits and result.dense_hits
    again = fuse(result.bm25_hits, result.dense_hits, "both", result.named_docs, result.doc_of, settings=RETRIEVAL)
    assert [(c.node_id, c.score) for c in again] == [(c.node_id, c.score) for c in result.candidates]


def test_document_names_pick_the_filing_the_question_names(tmp_path, db_path):
    assert {"nike", "2018", "10k"} <= name_terms("Form 10-K", "/x/NIKE_2018_10K.pdf")
    db = build_store(db_path, {
        "NIKE_2018_10K.md": "# Annual report\n\nRevenues grew in the year.\n",
        "AMAZON_2017_10K.md": "# Annual report\n\nRevenues grew in the year.\n",
        "AMAZON_2019_10K.md": "# Annual report\n\nRevenues grew in the year.\n",
    }, tmp_path)
    ids = dict(db.execute("SELECT path, id FROM documents").fetchall())
    by_name = {path.rsplit("/", 1)[1]: i for path, i in ids.items()}
    scores = name_scores(db, "What was Amazon's revenue growth in FY2017?")
    assert scores[by_name["AMAZON_2017_10K.md"]] == 1.0
    assert 0 < scores[by_name["AMAZON_2019_10K.md"]] < 1.0
    assert by_name["NIKE_2018_10K.md"] not in scores
    assert name_scores(db, "What grew?") == {}

    retriever = HybridRetriever(db, FakeEmbedder())
    result = retriever.retrieve("What was Amazon's revenue growth in FY2017?")
    assert result.doc_of[result.candidates[0].node_id] == by_name["AMAZON_2017_10K.md"]


def test_a_name_glued_in_a_file_name_is_named(tmp_path, db_path):
    """File names glue a company's words ("MGMRESORTS", "BESTBUY"): a capitalised name the question
    says opens such a word; a lower-case word ("net") does not, nor does the question's first word."""
    db = build_store(db_path, {
        "MGMRESORTS_2022Q4_EARNINGS.md": "# Results\n\nRevenues grew in the quarter.\n",
        "BESTBUY_2024Q2_10Q.md": "# Results\n\nRevenues grew in the quarter.\n",
        "NETFLIX_2022_10K.md": "# Results\n\nRevenues grew in the year.\n",
    }, tmp_path)
    by_name = {path.rsplit("/", 1)[1]: i for path, i in db.execute("SELECT path, id FROM documents").fetchall()}
    scores = name_scores(db, "What was MGM's interest coverage ratio in FY2022?")
    assert scores[by_name["MGMRESORTS_2022Q4_EARNINGS.md"]] == 1.0
    assert scores[by_name["NETFLIX_2022_10K.md"]] < 0.5  # the year alone
    assert by_name["BESTBUY_2024Q2_10Q.md"] not in scores
    best_buy = name_scores(db, "Did Best Buy hold more cash than a year before?")
    assert best_buy[by_name["BESTBUY_2024Q2_10Q.md"]] == 1.0 and by_name["NETFLIX_2022_10K.md"] not in best_buy
    assert by_name["NETFLIX_2022_10K.md"] not in name_scores(db, "What was the net income in 2024?")
    assert by_name["NETFLIX_2022_10K.md"] not in name_scores(db, "Net income grew in 2024?")


def test_hybrid_modes(handbook_db):
    question = "How quickly do the emergency diesel generators start?"
    for mode in ("hybrid", "bm25", "dense"):
        retriever = HybridRetriever(handbook_db, FakeEmbedder() if mode != "bm25" else None, mode)
        result = retriever.retrieve(question)
        top = handbook_db.execute("SELECT text FROM nodes WHERE id = ?", [result.candidates[0].node_id]).fetchone()[0]
        assert "emergency" in top.lower(), mode
        assert (result.dense_hits == []) == (mode == "bm25")
        assert (result.bm25_hits == []) == (mode == "dense")
        best = result.candidates[0].score
        assert all(c.score >= 0.1 * best for c in result.candidates)


def test_store_without_vectors_falls_back_to_bm25(tmp_path, db_path):
    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    db.execute("DELETE FROM embeddings")  # as if ingested without an embedder
    retriever = HybridRetriever(db, FakeEmbedder())
    assert not retriever.uses_dense and "no vectors" in retriever.dense_note
    assert retriever.retrieve("coolant loop").candidates


def test_a_caption_is_found_under_its_other_names(tmp_path, db_path):
    """'revenue' and 'the income statement' find a filing's 'Total net sales' row under
    'Consolidated Statements of Operations', ahead of a note that says the question's own words."""
    db = build_store(db_path, {"filing.md": (
        "# Annual Report 2017\n\n"
        "## Revenue Recognition\n\nWe recognize revenue when control of a product passes to the "
        "customer, and income taxes are presented in Note 9.\n\n"
        "## Consolidated Statements of Operations\n\nTotal net sales | 177,866 | 135,987\n\n"
        "Cost of sales | 111,934 | 88,265\n\n"
        "## Legal Proceedings\n\nThe company is party to several lawsuits arising in the ordinary course.\n"
    )}, tmp_path)
    question = "What was the revenue shown in the income statement?"
    assert "statement of operations" in equivalent_phrases(question)
    assert "net sales" in equivalent_phrases(question)
    assert equivalent_phrases("Who wrote Hamlet?") == []
    # the question's own phrase, plural or not, is not searched twice
    assert "net revenues" not in equivalent_phrases("What net revenue did Orion Foods report?")
    best = bm25.search(db, question, 20, settings=RETRIEVAL)[0]
    text = db.execute("SELECT text FROM nodes WHERE id = ?", [best.node_id]).fetchone()[0]
    assert text.startswith("Total net sales")
    assert fts_match("SG&A in the balance sheet").count('"selling general and administrative"') == 1
    # one name per stem (FTS5 reads "statement" and "statements" alike), so nothing is added twice
    stems = [_stem(phrase) for group in _PHRASES for phrase in group]
    assert len(stems) == len(set(stems))
