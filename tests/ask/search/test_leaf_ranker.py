"""The learned leaf score: named features of every candidate leaf, weights from the shipped
leaf_ranker.json, scores on the scale the search reads. Stores are real SQLite files built from a
generated manual; the models are the fakes (control flow only)."""

from __future__ import annotations

import json

import pytest

from longqa.ask.search import leaf_ranker
from longqa.errors import LongqaError
from longqa.store.nodes import load_tree
from longqa.tree_types import walk
from tests.ask_support import build_store, make_pipeline

MANUAL = """# Pump Station Manual

## 1. Installation

The pump is bolted to a concrete plinth and levelled before the pipes are connected.

The inlet pipe must be flushed before the first start to clear welding debris.

## 2. Maintenance intervals

The impeller is inspected every 2,000 running hours and replaced when worn.

| Part | Interval | Action |
| Seal | 4,000 hours | replace |
| Bearing | 8,000 hours | grease |

## References

Hydraulic Institute (2019). Rotodynamic pumps for design and application, maintenance chapter.
"""


def _inputs(tmp_path, question: str, sources_asked: bool = False) -> leaf_ranker.LeafInputs:
    db = build_store(tmp_path / "store.db", {"manual.md": MANUAL}, tmp_path)
    root = load_tree(db, 1)
    leaves = [n for n in walk(root) if n.is_leaf]
    scores = {leaf.id: (1.0 if "impeller" in leaf.text else 0.2) for leaf in leaves}
    return leaf_ranker.LeafInputs(question, [root], scores, scores, scores, scores, {}, {root.doc_id: 1.0},
                                  sources_asked)


def test_every_leaf_gets_every_named_feature(tmp_path):
    inputs = _inputs(tmp_path, "How often is the impeller of the pump inspected for maintenance?")
    table = leaf_ranker.features(inputs)
    leaves = {n.id: n for n in walk(inputs.roots[0]) if n.is_leaf}
    assert set(table) == set(leaves)
    assert all(set(values) == set(leaf_ranker.FEATURES) for values in table.values())
    impeller = next(v for i, v in table.items() if "impeller" in leaves[i].text)
    install = next(v for i, v in table.items() if "plinth" in leaves[i].text)
    assert impeller["title_match"] > install["title_match"]  # "Maintenance intervals" names what is asked
    assert next(v for i, v in table.items() if "Seal" in leaves[i].text)["table"] > 0.5
    reference = next(v for i, v in table.items() if "Hydraulic Institute" in leaves[i].text)
    assert reference["back_matter"] == 1.0 and impeller["back_matter"] == 0.0
    assert install["position"] == 0.0 and reference["position"] == 1.0


def test_back_matter_is_not_marked_when_the_question_asks_for_sources(tmp_path):
    inputs = _inputs(tmp_path, "Which references does the pump manual cite?", sources_asked=True)
    assert all(values["back_matter"] == 0.0 for values in leaf_ranker.features(inputs).values())


def test_the_shipped_weights_load_and_score_on_the_searchs_scale(tmp_path):
    ranker = leaf_ranker.load()
    assert ranker is not None, "leaf_ranker.json ships with the package"
    assert set(ranker.stage.weights) <= set(leaf_ranker.FEATURES)
    assert ranker.provenance["command"].startswith("python bench/leaf_ranker.py fit")
    table = leaf_ranker.features(_inputs(tmp_path, "How often is the impeller inspected?"))
    scale = {leaf: 1.0 / (1 + i) for i, leaf in enumerate(table)}  # a hand-weighted score's values
    scores = ranker.scores(table, scale)
    assert sorted(scores.values()) == sorted(scale.values())  # the same values, in the learned order
    order = sorted(table, key=lambda leaf: -ranker.stage.score(table[leaf]))
    assert [scores[leaf] for leaf in order] == sorted(scale.values(), reverse=True)


def test_the_learned_score_sends_the_search_to_the_asked_passage(tmp_path):
    db = build_store(tmp_path / "store.db", {"manual.md": MANUAL}, tmp_path)
    refined = make_pipeline(db, coverage_min=0.0, budget=60, learned_leaves=True).retrieve_context(
        "How often is the impeller inspected?")
    assert "2,000 running hours" in "\n".join(p.text for p in refined.passages)


def test_a_damaged_weights_file_is_a_one_line_error_naming_it(tmp_path):
    bad = tmp_path / "leaf_ranker.json"
    bad.write_text(json.dumps({"weights": {"no_such_feature": 1.0}, "means": {}, "scales": {}}))
    with pytest.raises(LongqaError, match=f"{bad}: not a leaf ranker weights file"):
        leaf_ranker.load(bad)
    assert leaf_ranker.load(tmp_path / "absent.json") is None  # no file: the hand-weighted score
