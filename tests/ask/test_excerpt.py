"""A tight context budget keeps the best sentences of a larger search (ask/excerpt.py), on real
stores: the budget holds, every kept sentence is the stored text, and quotes stay exact."""

import pytest

from longqa.ask.analysis.asked import read
from longqa import tokens
from longqa.ask.answer import focus
from longqa.ask.excerpt import SEPARATOR_TOKENS
from tests.ask_support import build_store, films_corpus, make_pipeline, reactor_handbook
from tests.fakes import FakeEmbedder, FakeGenerator

QUESTION = "How fast do the emergency diesel generators start after a grid loss?"
FACT = "The emergency diesel generators start within 10 seconds of a grid loss."


@pytest.fixture
def handbook_db(tmp_path, db_path):
    return build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)


def stored_text(db, node_id: int) -> str:
    return db.execute("SELECT text FROM nodes WHERE id = ?", [node_id]).fetchone()[0]


def test_a_tight_budget_keeps_the_best_sentences_of_the_larger_search(handbook_db):
    refined = make_pipeline(handbook_db, budget=120).retrieve_context(QUESTION)
    assert sum(p.tokens for p in refined.passages) <= 120 and refined.budget == 120
    assert [p.n for p in refined.passages] == list(range(1, len(refined.passages) + 1))
    assert any(FACT in p.text for p in refined.passages)
    excerpt_steps = [s for s in refined.steps if s.action == "excerpt"]
    assert excerpt_steps and excerpt_steps[0].details["searched_tokens"] == 2000
    for passage in refined.passages:
        assert passage.spans and passage.leaf_ids == list(dict.fromkeys(leaf for leaf, _, _ in passage.spans))
        for leaf_id, start, end in passage.spans:  # each kept sentence is the stored leaf's text
            sentence = stored_text(handbook_db, leaf_id)[start:end]
            assert " ".join(sentence.split()) in passage.text
        assert passage.as_context()["excerpt"] is True
    # more places than whole paragraphs would fit: the handbook's paragraphs run ~75 tokens
    whole = make_pipeline(handbook_db, budget=120, excerpt_below=0).retrieve_context(QUESTION)
    assert all(p.spans is None for p in whole.passages)
    assert len({leaf for p in refined.passages for leaf in p.leaf_ids}) > len(
        {leaf for p in whole.passages for leaf in p.leaf_ids})


@pytest.mark.parametrize("budget", [90, 150, 300])
def test_the_budget_is_filled_until_no_sentence_left_out_would_fit(handbook_db, budget):
    refined = make_pipeline(handbook_db, budget=budget).retrieve_context(QUESTION)
    room = budget - sum(p.tokens for p in refined.passages)
    assert room >= 0
    kept = {(leaf, start, end) for p in refined.passages for leaf, start, end in p.spans}
    pool = make_pipeline(handbook_db, budget=2000).retrieve_context(QUESTION)  # what the excerpt cut
    left_out = [s for s in focus.context_sentences(pool.passages) if (s.leaf.id, s.start, s.end) not in kept]
    assert left_out
    # A sentence costs at most its own tokens and a gap: every one left out costs more than the room.
    for sentence in left_out:
        assert tokens.count(" ".join(sentence.text.split())) + SEPARATOR_TOKENS > room, sentence.text


def test_at_the_default_budget_passages_are_whole(handbook_db):
    refined = make_pipeline(handbook_db, budget=2000).retrieve_context(QUESTION)
    assert refined.passages and all(p.spans is None for p in refined.passages)
    assert not [s for s in refined.steps if s.action == "excerpt"]


def test_the_answer_reads_only_the_kept_sentences_and_quotes_them_exactly(handbook_db):
    result = make_pipeline(handbook_db, FakeGenerator(), budget=120).answer(QUESTION)
    shortlist = {c["text"] for c in result.grounding.candidates}
    assert shortlist & {"within 10 seconds", "10 seconds"} and result.quotes
    kept = {(leaf, start, end) for p in result.refined.passages for leaf, start, end in p.spans}
    for quote in result.quotes:
        assert stored_text(handbook_db, quote.node_id)[quote.char_start:quote.char_end] == quote.text
        assert (quote.node_id, quote.char_start, quote.char_end) in kept


def test_a_sentence_longer_than_the_budget_is_cut_to_a_prefix_of_the_stored_text(tmp_path, db_path):
    row = "| " + " | ".join(f"cell {i} holds the value {i * 7}" for i in range(60)) + " |"
    db = build_store(db_path, {"table.md": f"# Values\n\n## Table\n\n{row}\n"}, tmp_path)
    refined = make_pipeline(db, budget=100).retrieve_context("Which cell holds the value 21?")
    assert len(refined.passages) == 1
    passage = refined.passages[0]
    (leaf_id, start, end), = passage.spans
    assert stored_text(db, leaf_id)[start:end] == passage.text and tokens.count(passage.text) <= 100


def test_the_best_passages_stay_whole_within_their_share_and_the_context_keeps_its_order(handbook_db):
    refined = make_pipeline(handbook_db, budget=200, excerpt_whole_share=0.5).retrieve_context(QUESTION)
    whole = [p for p in refined.passages if p.spans is None]
    cut = [p for p in refined.passages if p.spans is not None]
    assert whole and cut and sum(p.tokens for p in whole) <= 100
    assert any(FACT in p.text for p in whole)  # the search's best passage, whole
    assert sum(p.tokens for p in refined.passages) <= 200
    ords = {n: o for n, o in handbook_db.execute("SELECT id, ord FROM nodes").fetchall()}
    leaves_in_order = [p.leaf_ids[0] for p in refined.passages]
    assert leaves_in_order == sorted(leaves_in_order, key=lambda leaf: ords[leaf])


def test_the_search_s_bridge_query_raises_the_second_hop_sentence(tmp_path, db_path):
    # "Lena Marsh spent her childhood in Tromso" shares no word with the question; the search's
    # bridge query ("Lena Marsh woman grow") is what raises it among the sentences to keep
    from longqa.ask import excerpt
    from longqa.ask.answer import focus

    db = build_store(db_path, {"films.md": films_corpus()}, tmp_path)
    question = "Where did the woman who directed Cold Harbour grow up?"
    pool = make_pipeline(db, budget=2000, hop_after=1).retrieve_context(question)
    queries = excerpt.search_queries(pool.steps)
    assert queries[:1] == ["Lena Marsh woman grow"]

    def rank(with_queries: list[str]) -> int:
        found = focus.context_sentences(pool.passages)
        excerpt.score_with_search(read(question), found, FakeEmbedder(), queries=with_queries,
                                  leaf_scores=pool.leaf_scores, leaf_weight=0.3)
        order = sorted(found, key=lambda s: -s.score)
        return next(i for i, s in enumerate(order) if "Tromso" in s.text)

    assert rank(queries) < rank([])


def test_table_rows_kept_next_to_each_other_stay_on_their_own_lines(tmp_path, db_path):
    rows = "\n".join(f"Pump {i} | Service every {i + 2} weeks | Bay {i}" for i in range(1, 40))
    db = build_store(db_path, {"pumps.md": f"# Pumps\n\n## Schedule\n\n{rows}\n"}, tmp_path)
    refined = make_pipeline(db, budget=60).retrieve_context("How often is Pump 7 serviced, and Pump 8?")
    text = "\n".join(p.text for p in refined.passages)
    lines = text.splitlines()
    assert "Pump 7 | Service every 9 weeks | Bay 7" in lines and "Pump 8 | Service every 10 weeks | Bay 8" in lines
    assert all(p.spans for p in refined.passages)


def test_a_sentence_holding_the_kind_of_answer_asked_for_is_raised(tmp_path, db_path):
    # "When did the plant open?" wants a date: of two sentences saying the question's words, the
    # one holding a date gains; a question wanting no typed answer changes nothing.
    doc = ("# Plant\n\nThe plant did open to visitors with a ceremony for the town. The plant opened "
           "on 3 May 1998.\n")
    db = build_store(db_path, {"plant.md": doc}, tmp_path)
    from longqa.ask.answer import focus

    found = focus.context_sentences(make_pipeline(db).retrieve_context("When did the plant open?").passages)
    assert len(found) == 2
    for question, raised in (("When did the plant open?", True), ("Who opened the plant?", False)):
        for sentence in found:
            sentence.score = 1.0
        focus.raise_fitting(read(question), found, 0.3)
        dated = next(s for s in found if "1998" in s.text)
        other = next(s for s in found if "1998" not in s.text)
        assert other.score == 1.0
        assert dated.score == pytest.approx(1.3 if raised else 1.0)
