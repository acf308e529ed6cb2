"""The answer stage as a ranker: candidates with their structural kind, named features, learned
weights, a calibrated confidence with alternatives, yes/no by question form, and summaries.

Stores are real SQLite files built from generated manuals, contracts and reports; the generator is
the scripted fake (control flow only), so what decides is the shipped, learned ranker.json.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from longqa.ask.analysis.asked import read
from longqa.ask.answer import candidates, ranker
from longqa.ask.answer.features import FEATURES
from longqa.ask.settings import DEFAULTS
from tests.ask_support import build_store, make_pipeline
from tests.fakes import FakeGenerator


def answer(tmp_path, documents: dict[str, str], question: str, **options):
    db = build_store(tmp_path / "store.db", documents, tmp_path)
    return make_pipeline(db, FakeGenerator(), coverage_min=0.0, cosine_min=0.0, **options).answer(question)


def test_code_like_tokens_are_candidates():
    found = {span.text for span in candidates.code_spans(
        "Type .tables to list them, set numbersep=5pt in the options, or pass --force to overwrite; "
        "the limit is read from max_tokens.")}
    assert {".tables", "numbersep=5pt", "--force", "max_tokens"} <= found
    assert not candidates.code_spans("A well-known plant, built in 1998. It runs.")


def test_section_numbers_enumerators_and_cells_are_told_from_body_figures(tmp_path):
    # The ranker learns how much each structural kind counts; the kinds must be read right.
    manual = ("# Converter Manual\n\n## 6. Output formats\n\n"
              "6. The converter writes 14 output formats, from plain text to PDF.\n\n"
              "## 7. Configuration\n\n"
              "1. The system file sets the fonts.\n\nThe limits table: Pages | 500 | 2,000\n")
    result = answer(tmp_path, {"manual.md": manual}, "How many output formats does the converter write?")
    kinds = {c.text: c.structure for c in result.grounding.pool}
    assert kinds["14"] != "number_label" and kinds.get("6") == "number_label" and kinds.get("1") == "number_label"
    assert "14" in {c["text"] for c in result.grounding.candidates}  # on the shortlist the model reads


def test_only_text_before_the_first_section_is_the_documents_opening(tmp_path):
    # A report's cover date stands before its first section; a date inside a section is body text,
    # however short the document.
    report = ("Annual Maintenance Report, issued 3 March 2021.\n\n"
              "## 1. Inspections\n\nThe boiler was inspected on 12 May 2020 and passed.\n")
    result = answer(tmp_path, {"report.md": report}, "When was the boiler inspected?")
    kinds = {c.text: c.structure for c in result.grounding.pool}
    assert kinds.get("12 May 2020") == "body"
    assert kinds.get("3 March 2021") == "opening"


@pytest.mark.parametrize("question, verdict, said", [
    ("Can an inline snippet have a frame?", "No", "cannot"),
    ("Can a listing have line numbers?", "Yes", "line numbers"),
])
def test_an_auxiliary_verb_question_gets_yes_or_no_and_a_quote_that_agrees(tmp_path, question, verdict, said):
    manual = ("# Listings Manual\n\n## Frames\n\n"
              "An inline snippet cannot have a frame, because it sits inside a line of text.\n\n"
              "## Numbering\n\nA listing can have line numbers on the left or the right.\n")
    assert read(question).want == "yesno"
    result = answer(tmp_path, {"manual.md": manual}, question)
    assert result.answer.split(" [")[0] == verdict
    assert said in result.quotes[0].text


def test_summarise_a_section_gives_three_to_seven_cited_points_from_it(tmp_path):
    measured = FakeGenerator()
    measured.name = "gemma-3-270m-fake"  # a model whose own prose was measured below quoting
    sections = []
    for number, topic in ((1, "intake"), (2, "filters"), (3, "disinfection"), (4, "storage")):
        lines = [f"The {topic} stage step {i} is checked by the shift operator every {i + 1} hours of running."
                 for i in range(8)]
        sections.append(f"## {number}. {topic.title()}\n\n" + "\n\n".join(lines))
    manual = "# Treatment Works Manual\n\n" + "\n\n".join(sections) + "\n"
    db = build_store(tmp_path / "store.db", {"manual.md": manual}, tmp_path)
    result = make_pipeline(db, measured, coverage_min=0.0, cosine_min=0.0).answer("Summarise section 3")
    points = result.answer.splitlines()
    assert result.grounding.mode == "summary" and 3 <= len(points) <= 7, result.answer
    assert all(p.startswith("- ") and p.rstrip().endswith("]") for p in points)
    assert all("disinfection" in q.text for q in result.quotes), [q.text for q in result.quotes]


def test_the_answer_carries_a_confidence_alternatives_and_each_features_share(tmp_path):
    manual = "# Pump Manual\n\n## Running\n\nThe standby pump runs for about 52 hours on a full tank of diesel.\n"
    result = answer(tmp_path, {"manual.md": manual}, "How long does the standby pump run on a full tank?")
    document = result.as_json()
    assert 0.0 <= document["confidence"] <= 1.0 and isinstance(document["unsure"], bool)
    for alternative in document["alternatives"]:
        assert alternative["quote"]["text"] and alternative["text"]
    top = result.grounding.candidates[0]
    assert top["contributions"] and set(top["contributions"]) <= set(FEATURES)


def _weights_favouring_no_answer(path: Path) -> Path:
    table = json.loads(ranker.WEIGHTS_FILE.read_text())
    final = table["final"]
    final["weights"] = {**{name: 0.0 for name in final["weights"]}, "no_answer": 5.0}
    final["means"], final["scales"] = {**final["means"], "no_answer": 0.0}, {**final["scales"], "no_answer": 1.0}
    path.write_text(json.dumps(table))
    return path


def test_when_the_documents_do_not_say_wins_the_answer_is_not_found(tmp_path):
    manual = "# Pump Manual\n\n## Running\n\nThe standby pump runs for about 52 hours on a full tank of diesel.\n"
    weights = _weights_favouring_no_answer(tmp_path / "weights.json")
    settings = DEFAULTS.with_values({"answer.ranker_weights": str(weights)})
    result = answer(tmp_path, {"manual.md": manual}, "How long does the standby pump run?", settings=settings)
    assert result.answer == "The documents do not say." and not result.found
    assert result.as_json()["found"] is False and result.refined.found


def test_the_shipped_weights_were_fitted_not_written():
    table = json.loads(ranker.WEIGHTS_FILE.read_text())
    provenance = table["provenance"]
    assert provenance["command"].startswith("python bench/answer_ranker.py fit")
    assert provenance["commit"] and provenance["data_sha256"] and provenance["questions"] >= 50
    assert set(table["final"]["weights"]) <= set(FEATURES) and set(table["prior"]["weights"]) <= set(FEATURES)
    loaded = ranker.load()
    assert loaded.threshold == table["threshold"] and len(loaded.features) >= 3


def test_a_weights_file_that_is_not_one_is_a_one_line_error(tmp_path):
    from longqa.errors import LongqaError

    broken = tmp_path / "weights.json"
    broken.write_text('{"prior": {}}')
    with pytest.raises(LongqaError, match="weights.json: not an answer ranker weights file"):
        ranker.load(broken)


def test_a_listwise_confidence_is_the_candidates_share_of_its_shortlist():
    # With a listwise fit the scores mean something only against each other: a candidate far
    # ahead of the rest is surer than the same score among close rivals.
    stage = ranker.Stage({"lead": 1.0}, {"lead": 0.0}, {"lead": 1.0})
    listwise = ranker.Ranker(stage, stage, {"final": 1.0, "bias": 0.0}, "share")

    def top_probability(*leads: float) -> float:
        shortlist = [candidates.Candidate(f"c{i}", "phrase", None, features={"lead": lead})
                     for i, lead in enumerate(leads)]
        return listwise.rank(shortlist)[0].probability

    alone = top_probability(2.0, 0.0, 0.0)
    assert alone == pytest.approx(math.exp(2) / (math.exp(2) + 2))  # the softmax share itself
    assert top_probability(2.0, 1.9, 0.0) < alone
    table = json.loads(ranker.WEIGHTS_FILE.read_text())
    assert ranker.from_dict({**table, "calibration": [2.0, -1.0]}).calibration == {"final": 2.0, "bias": -1.0}
