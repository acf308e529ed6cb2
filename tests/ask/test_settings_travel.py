"""A setting given to `ask` reaches the code that reads it: the retriever gets the call's retrieval
section, and the outline choice reads its size when it runs, not when it was imported."""

from __future__ import annotations

import dataclasses

import pytest

from longqa.ask.search import outline_choice
from longqa.ask.settings import DEFAULTS, applied
from longqa.retrieve.settings import RetrievalSettings
from longqa.structure.tree import Node
from tests.ask_support import build_store, make_pipeline, reactor_handbook

# A value for each retrieval field that differs from its default.
CHANGED = {"k": 7, "pattern_lean": 0.9, "name_boost": 1.5, "relative_cutoff": 0.3, "named_doc_min": 0.5,
           "partly_named": 0.5, "column_weights": (0.0, 0.2, 1.0), "overfetch": 2, "term_count_cap": 50,
           "query_cache": 4,
           "bm25_common_rows": 100, "dense_exact_max": 1000, "dense_cut_pool": 50, "dense_cut_levels": 2}


def test_every_retrieval_field_is_covered():
    assert set(CHANGED) == {f.name for f in dataclasses.fields(RetrievalSettings)}


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_a_retrieval_setting_reaches_the_retriever(tmp_path, name):
    db = build_store(tmp_path / "s.db", {"handbook.md": reactor_handbook()}, tmp_path)
    settings = DEFAULTS.with_values({f"retrieval.{name}": CHANGED[name]})
    pipeline = make_pipeline(db, settings=settings)
    assert getattr(pipeline.retriever.settings, name) == CHANGED[name]
    assert getattr(pipeline.settings_in_effect().retrieval, name) == CHANGED[name]  # what --explain prints
    if name == "k":
        assert pipeline.retriever.k == 7


def test_the_retrieval_cutoff_changes_what_is_retrieved(tmp_path):
    db = build_store(tmp_path / "s.db", {"handbook.md": reactor_handbook()}, tmp_path)
    question = "How often are fuel assemblies replaced?"
    loose = make_pipeline(db).retriever.retrieve(question, "both")
    strict = make_pipeline(db, settings=DEFAULTS.with_values({"retrieval.relative_cutoff": 0.95})).retriever.retrieve(
        question, "both")
    assert 0 < len(strict.candidates) < len(loose.candidates)


def _sections(count: int) -> list[Node]:
    root = Node(id=1, kind="document", title="Manual", depth=0)
    for i in range(count):
        section = Node(id=10 + i, kind="section", title=f"Part {i}", depth=1)
        section.children.append(Node(id=100 + i, kind="leaf", text=f"Text of part {i}.", depth=2))
        root.children.append(section)
    return [root]


def test_the_outline_size_is_read_when_the_choice_runs():
    roots = _sections(12)
    scores = {100 + i: 1.0 / (i + 1) for i in range(12)}
    assert len(outline_choice.candidate_sections(roots, scores)) == DEFAULTS.expansion.outline_entries
    with applied(DEFAULTS.with_values({"expansion.outline_entries": 4})):
        assert len(outline_choice.candidate_sections(roots, scores)) == 4


def test_the_scope_rules_and_the_heading_cut_read_their_settings_when_they_run():
    from longqa.ask.analysis import rules
    from longqa.ask.answer.candidates import structure_of
    from longqa.ask.answer.focus import Sentence

    question = "How many litres does the fuel store hold?"
    assert rules.scope_prior(question, "quantity") == DEFAULTS.search.scope_local
    with applied(DEFAULTS.with_values({"search.scope_local": 0.1})):
        assert rules.scope_prior(question, "quantity") == 0.1
    leaf = Node(id=5, kind="leaf", text="Fuel store capacity and refill times", depth=2)
    line = Sentence(passage=None, leaf=leaf, start=0, end=len(leaf.text), order=0)
    assert structure_of("Fuel", line, 0) == "heading"
    with applied(DEFAULTS.with_values({"answer.heading_words": 3})):
        assert structure_of("Fuel", line, 0) != "heading"


def test_a_span_kinds_fit_is_its_standing_valued_by_the_setting():
    from longqa.ask.answer import span_fit
    from longqa.text.spans import Span

    month = Span("March", "month", 0, 5)  # for "when": near, a coarser answer than a date
    assert span_fit.standing(month, "date") == span_fit.NEAR
    assert span_fit.fits(month, "date") == DEFAULTS.answer.kind_fit[1]
    with applied(DEFAULTS.with_values({"answer.kind_fit": (1.0, 0.1, -0.2, -0.9)})):
        assert span_fit.fits(month, "date") == 0.1
        assert span_fit.fits(Span("the pump", "phrase", 0, 8), "date") == -0.9


def test_the_decline_threshold_set_for_a_call_decides_its_outcome_to_the_end():
    """answer.reader_decline reaches the outcome the command shows: the answer stage settles the
    outcome inside the call's settings, and the result settles it again after the call; the
    threshold of the first settle stands."""
    from longqa.ask.answer.grounded import Grounding
    from longqa.ask.answer.outcome import settle
    from longqa.ask.result import AskResult

    def reader_answer() -> Grounding:  # a proven reader answer, its table's confidence 0.08
        return Grounding(mode="read", confidence=0.08, calibrated=True, decline_below=0.12)

    never = dataclasses.replace(DEFAULTS, answer=dataclasses.replace(DEFAULTS.answer, reader_decline=0.0))
    grounding = reader_answer()
    with applied(never):
        assert settle("31 hours [2]", grounding).answered
    assert AskResult(None, "31 hours [2]", grounding).outcome.answered  # after the call: still answered
    declined = reader_answer()
    assert not AskResult(None, "31 hours [2]", declined).outcome.answered  # the table's own threshold
    assert declined.settled_below == 0.12
