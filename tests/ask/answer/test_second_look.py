"""The reader's second look (ask/answer/second_look.py): its proven answer set beside the span
ranker's next candidates, the reader choosing; whatever it chooses is a slice of the stored text."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import pytest

from longqa.ask.answer import second_look
from longqa.ask.settings import DEFAULTS
from tests.ask_support import build_store, make_pipeline
from tests.fakes import FakeReader

QUESTION = "How long can the standby generators run the plant before the fuel runs out?"
RAN = "The standby generators ran for 31 hours in total during two grid failures last year."
LASTS = "The fuel store holds enough diesel to run both generators at full load for about 52 hours."
START = "If both feeders fail, two standby generators start automatically within 45 seconds."


def letter_of(text: str):
    """A reader's choice: the letter the prompt lists `text` under."""
    def choose(prompt, labels):
        found = re.search(rf"^([A-H])\. {re.escape(text)}$", prompt, re.M)
        return found.group(1) if found and found.group(1) in labels else None
    return choose


CANDIDATES = [("31 hours", SimpleNamespace(text=RAN)), ("45 seconds", SimpleNamespace(text=START)),
              ("about 52 hours", SimpleNamespace(text=LASTS))]


def test_the_candidate_the_reader_prefers_wins_in_whatever_place_it_is_listed():
    probabilities = second_look.compared(FakeReader(choose=letter_of("about 52 hours")), QUESTION, CANDIDATES)
    assert probabilities == pytest.approx([0.1, 0.1, 0.8])


def test_a_reader_that_only_favours_the_first_letter_prefers_no_candidate():
    # asked once per rotation, a pure preference for "A" lands on each candidate once
    reader = FakeReader(choose=lambda prompt, labels: "A")
    probabilities = second_look.compared(reader, QUESTION, CANDIDATES)
    assert probabilities == pytest.approx([1 / 3] * 3)
    assert sum(kind == "label_probs" for kind, _ in reader.calls) == 3


def test_one_candidate_or_no_chat_model_is_not_asked():
    assert second_look.compared(FakeReader(), QUESTION, CANDIDATES[:1]) == []
    assert second_look.compared(None, QUESTION, CANDIDATES) == []


def _plant(tmp_path):
    text = ("# Standby Power\n\n"
            f"{START} {LASTS}\n\n"
            "# Performance\n\n"
            f"{RAN} Supply to customers was not interrupted.\n")
    return build_store(tmp_path / "plant.db", {"plant.md": text}, tmp_path)


def _answer(db, choose, candidates: int):
    settings = DEFAULTS.but(answer=replace(DEFAULTS.answer, reader_second_look=candidates, reader_decline=0.0))
    reader_ = FakeReader("31 hours", 0.9, choose=choose)  # proven wherever it stands
    return make_pipeline(db, reader_, settings=settings, coverage_min=0.0).answer(QUESTION)


def test_the_reader_choosing_another_candidate_makes_it_the_answer_with_its_own_quote(tmp_path):
    db = _plant(tmp_path)
    result = _answer(db, letter_of("about 52 hours"), candidates=2)
    assert result.answer.startswith("about 52 hours [")
    assert [q.text for q in result.quotes] == [LASTS]
    shown = result.grounding.shown
    assert shown.sentence.text[shown.sentence.text.find("about 52 hours"):].startswith(shown.text)
    assert result.grounding.alternatives[0].text == "31 hours"  # its own reply, next in line
    assert result.grounding.signals["second_look_changed"] == 1.0


def test_without_a_second_look_or_when_the_reader_keeps_its_answer_nothing_changes(tmp_path):
    db = _plant(tmp_path)
    for candidates, choose in ((0, letter_of("about 52 hours")), (2, letter_of("31 hours"))):
        result = _answer(db, choose, candidates)
        assert result.answer.startswith("31 hours ["), candidates
        assert [q.text for q in result.quotes] == [RAN]
