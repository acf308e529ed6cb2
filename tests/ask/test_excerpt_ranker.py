"""The learned sentence score of a tight-budget context: named features of every sentence of the
search's pool, weights from the shipped excerpt_ranker.json. Stores are real SQLite files built
from generated documents; the models are the fakes (control flow only)."""

from __future__ import annotations

import json

import pytest

from longqa.ask import excerpt_ranker
from longqa.ask.analysis.asked import read
from longqa.ask.answer import focus
from longqa.ask.excerpt import _readings
from longqa.errors import LongqaError
from tests.ask_support import build_store, make_pipeline, reactor_handbook

PLANT = ("# Plant\n\n## History\n\nThe plant did open to visitors with a ceremony for the town. The plant opened "
         "on 3 May 1998. It cost the town a great deal.\n\n## Staff\n\nForty people work at the plant in shifts.\n")


def _found(tmp_path, db_path, question):
    db = build_store(db_path, {"plant.md": PLANT}, tmp_path)
    refined = make_pipeline(db).retrieve_context(question)
    return focus.context_sentences(refined.passages), refined


def test_each_sentence_gets_every_named_feature(tmp_path, db_path):
    question = "When did the plant open?"
    found, refined = _found(tmp_path, db_path, question)
    readings = _readings(read(question), found, None, None, [], refined.leaf_scores, False)
    table = excerpt_ranker.features(question, found, readings)
    assert len(table) == len(found) and all(set(v) == set(excerpt_ranker.FEATURES) for v in table)
    by_text = {s.text: v for s, v in zip(found, table)}
    dated = by_text["The plant opened on 3 May 1998."]
    assert dated["kind_fit"] == 1.0 and by_text["Forty people work at the plant in shifts."]["kind_fit"] == 0.0
    assert by_text["It cost the town a great deal."]["pronoun_start"] == 1.0 and dated["pronoun_start"] == 0.0
    assert max(v["focus"] for v in table) == 1.0 and max(v["focus_rank"] for v in table) == 1.0
    first = [v["first_of_paragraph"] for v in table]
    assert first[0] == 1.0 and sum(first) == len({s.leaf.id for s in found})


def test_the_shipped_weights_load():
    ranker = excerpt_ranker.load()
    assert ranker is not None, "excerpt_ranker.json ships with the package"
    assert set(ranker.stage.weights) <= set(excerpt_ranker.FEATURES)
    assert ranker.provenance["command"].startswith("python bench/excerpt_ranker.py fit")


def test_a_tight_budget_keeps_the_asked_fact_by_the_learned_score(tmp_path, db_path):
    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    question = "How fast do the emergency diesel generators start after a grid loss?"
    learned = make_pipeline(db, budget=120, learned_excerpt=True).retrieve_context(question)
    assert any(s.action == "excerpt" for s in learned.steps)
    assert sum(p.tokens for p in learned.passages) <= 120
    assert any("start within 10 seconds of a grid loss" in p.text for p in learned.passages)


def test_a_damaged_weights_file_is_a_one_line_error_naming_it(tmp_path):
    bad = tmp_path / "excerpt_ranker.json"
    bad.write_text(json.dumps({"weights": {"focus": 1.0}}))
    with pytest.raises(LongqaError, match=f"{bad}: not an excerpt ranker weights file"):
        excerpt_ranker.load(bad)
