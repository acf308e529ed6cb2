"""The reader's answer (ask/answer/reader.py): a reader profile's reply is parsed, proven word for
word in the stored text, and never shown as found when it is not there."""

from __future__ import annotations

import json
import math

import pytest

from longqa.ask.answer import reader, reader_confidence
from longqa.errors import LongqaError
from longqa.models.profiles import QWEN_05B
from longqa.ask.answer.grounded import NO_ANSWER
from tests.ask_support import build_store, make_pipeline, reactor_handbook
from tests.fakes import FakeReader


@pytest.mark.parametrize("raw, answer, cited, unknown", [
    ("45 seconds [3]", "45 seconds", 3, False),
    (" 1,200 litres per minute [2].", "1,200 litres per minute", 2, False),
    ("unknown", "unknown", None, True),
    ("Unknown.", "Unknown", None, True),
    ("", "", None, False),
    ("[1] [3]", "", 3, False),
    ("every 18 months", "every 18 months", None, False),
])
def test_a_reply_is_read_as_an_answer_and_the_passage_it_names(raw, answer, cited, unknown):
    reply = reader.parse(raw)
    assert (reply.answer, reply.cited, reply.unknown) == (answer, cited, unknown)


def test_passage_numbers_alone_are_no_answer():
    assert not reader.parse("[1] [3]").said and not reader.parse("").said
    assert reader.parse("see [2] and [4]").answer == "see and"


def test_a_yes_no_reply_gives_the_verdict_and_anything_else_is_no_verdict():
    assert reader.parse("No [2]", yesno=True).verdict == "No"
    assert reader.parse("yes, it does [1]", yesno=True).verdict == "Yes"
    other = reader.parse("season four [1]", yesno=True)  # the rules took it for yes/no; the reader did not
    assert other.verdict is None and not other.unknown and other.answer == "season four"


@pytest.mark.parametrize("answer, text, expected", [
    ("45 Seconds", "The generators take the load within 45 seconds.", "45 seconds"),
    ("the \u201cpump room\u201d", 'Keys are kept in the "pump room" safe.', 'the "pump room"'),
    ("1,200  litres", "It moves 1,200\nlitres per minute.", "1,200\nlitres"),
])
def test_an_answer_is_located_in_the_stored_text_however_it_was_spelled(answer, text, expected):
    start, end = reader.locate(answer, text)
    assert text[start:end] == expected


def test_an_answer_is_only_located_on_word_boundaries():
    assert reader.locate("5 seconds", "within 45 seconds") is None
    assert reader.locate("gas", "the gasket is replaced") is None
    assert reader.locate("", "anything") is None


@pytest.mark.parametrize("said, shown", [
    ("850", "850 cubic metres"), ("850 cubic metres", "850 cubic metres"), ("March", "12 March 2024"),
    ("pool", "pool"),
])
def test_a_figure_is_shown_with_the_unit_the_sentence_gives_it(said, shown):
    text = "On 12 March 2024 the main pool held 850 cubic metres of water."
    start, end = reader.locate(said, text)
    start, end = reader.whole_figure(text, start, end)
    assert text[start:end] == shown


def _pipeline(tmp_path, said, certainty=0.9):
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    return make_pipeline(db, FakeReader(said, certainty))


def test_a_proven_reply_is_the_answer_with_its_sentence_as_the_quote(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_confidence, "TABLES", tmp_path)  # no fitted table: its own probability
    reader_confidence.table_of.cache_clear()
    try:
        pipeline = _pipeline(tmp_path, "within 10 Seconds [1]")
        result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    finally:
        reader_confidence.table_of.cache_clear()
    assert result.found and result.grounding.mode == "read"
    assert result.answer.startswith("within 10 seconds [")  # the stored text's spelling, not the model's
    quote = result.grounding.quotes[0]
    assert "emergency diesel generators start within 10 seconds" in quote.text
    assert quote.leaf.text[quote.char_start:quote.char_end] == quote.text
    assert result.grounding.confidence == pytest.approx(0.9) and not result.grounding.unsure


def test_a_reply_the_documents_do_not_hold_is_never_shown_as_found(tmp_path):
    pipeline = _pipeline(tmp_path, "within 7 seconds [1]")
    result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    assert "7 seconds" not in result.answer  # the ranker chose among copied spans instead
    assert result.grounding.mode != "read"
    assert result.grounding.draft == "within 7 seconds"


def test_a_sure_unknown_is_the_documents_do_not_say(tmp_path):
    pipeline = _pipeline(tmp_path, "unknown", certainty=0.8)
    result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    assert result.answer == NO_ANSWER and not result.found
    assert result.as_json()["found"] is False


def test_an_unsure_unknown_leaves_the_choice_to_the_ranker_marked_unsure(tmp_path):
    pipeline = _pipeline(tmp_path, "unknown", certainty=0.2)
    result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    assert result.grounding.unsure


def test_a_yes_no_reply_is_the_verdict_quoted_by_an_agreeing_sentence(tmp_path):
    pipeline = _pipeline(tmp_path, "Yes [1]")
    result = pipeline.answer("Do the emergency diesel generators start within 10 seconds of a grid loss?")
    assert result.answer.startswith("Yes [") and result.grounding.mode == "yesno"
    assert "diesel generators start within 10 seconds" in result.grounding.quotes[0].text


def test_the_reader_reads_its_own_chat_prompt_and_no_completion_prompt(tmp_path):
    pipeline = _pipeline(tmp_path, "within 10 seconds [1]")
    pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    generated = [prompt for kind, prompt in pipeline.generator.calls if kind == "generate"]
    assert len(generated) == 1 and generated[0].startswith("<system>\n")
    assert "Question: How quickly do the emergency diesel generators start" in generated[0]


def test_a_proven_reply_records_the_signals_its_confidence_is_made_of(tmp_path):
    pipeline = _pipeline(tmp_path, "within 10 seconds [1]", certainty=0.9)
    result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    signals = result.grounding.signals
    assert set(signals) == set(reader_confidence.SIGNALS)
    assert signals["own_logprob"] == pytest.approx(math.log(0.9))
    assert signals["in_focus"] == 1.0 and signals["verdict"] == 0.0
    assert signals["repeats_question"] == 0.0  # "10 seconds" says nothing the question says


def _table(directory, profile: str, weights: dict[str, float], bias: float = 0.0) -> None:
    names = list(reader_confidence.SIGNALS)
    table = {"weights": {n: weights.get(n, 0.0) for n in names}, "means": {n: 0.0 for n in names},
             "scales": {n: 1.0 for n in names}, "bias": bias}
    (directory / f"{profile}.json").write_text(json.dumps(table), encoding="utf-8")


def test_a_profile_with_a_fitted_table_gets_its_calibrated_confidence(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_confidence, "TABLES", tmp_path)
    reader_confidence.table_of.cache_clear()
    # Sure only when the span ranker, which never saw the reply, picks the same answer.
    _table(tmp_path, QWEN_05B.name, {"ranker_agrees": 8.0, "own_logprob": 0.0}, bias=-4.0)
    try:
        pipeline = _pipeline(tmp_path, "within 10 seconds [1]", certainty=0.99)
        result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
        agrees = result.grounding.signals["ranker_agrees"]
        assert result.grounding.confidence == pytest.approx(1 / (1 + math.exp(-(8.0 * agrees - 4.0))), abs=1e-3)
        assert result.grounding.unsure == (agrees == 0.0)
    finally:
        reader_confidence.table_of.cache_clear()


def test_a_table_weighting_an_unknown_signal_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_confidence, "TABLES", tmp_path)
    reader_confidence.table_of.cache_clear()
    (tmp_path / "some-reader.json").write_text(json.dumps(
        {"weights": {"moon_phase": 1.0}, "means": {}, "scales": {}}), encoding="utf-8")
    try:
        with pytest.raises(LongqaError, match="some-reader.json: not a reader confidence table"):
            reader_confidence.calibrated("some-reader", {"own_logprob": 0.0})
        assert reader_confidence.calibrated("no-such-reader", {"own_logprob": 0.0}) is None
    finally:
        reader_confidence.table_of.cache_clear()


@pytest.mark.parametrize("one, other, same", [
    ("about 52 hours", "52 hours", True), ("Yes", "yes", True), ("45 seconds", "52 hours", False),
    ("the pump room", "", False),
])
def test_two_answers_say_the_same_when_one_holds_the_others_words(one, other, same):
    assert reader_confidence.same_answer(one, other) is same


@pytest.mark.parametrize("question", [
    "How do the startup times of the generators and the pumps compare?",  # multi-source: sub-questions
    "Who trains the operators that start the diesel generators?",  # multi-bridge: next queries
])
def test_a_chat_reader_is_never_given_the_completion_prompts_of_the_search(tmp_path, question):
    pipeline = _pipeline(tmp_path, "within 10 seconds [1]")
    result = pipeline.answer(question)
    generated = [prompt for kind, prompt in pipeline.generator.calls if kind == "generate"]
    assert generated and all(prompt.startswith("<system>\n") for prompt in generated)
    assert not any(step.to_json().get("source") == "model" for step in result.refined.steps)
