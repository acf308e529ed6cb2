"""The reader's answer (ask/answer/reader.py): a reader profile's reply is parsed, proven word for
word in the stored text, and never shown as found when it is not there."""

from __future__ import annotations

import json
from dataclasses import replace
import math
import re

import pytest

from longqa.ask import prompts
from longqa.ask.answer import reader, reader_confidence
from longqa.ask.settings import DEFAULTS
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
    reader_confidence.forget()
    try:
        pipeline = _pipeline(tmp_path, "within 10 Seconds [1]")
        result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    finally:
        reader_confidence.forget()
    assert result.found and result.grounding.mode == "read"
    assert result.answer.startswith("within 10 seconds [")  # the stored text's spelling, not the model's
    quote = result.grounding.quotes[0]
    assert "emergency diesel generators start within 10 seconds" in quote.text
    assert quote.leaf.text[quote.char_start:quote.char_end] == quote.text
    assert result.grounding.confidence == pytest.approx(0.9) and not result.grounding.unsure


def test_a_reply_the_documents_do_not_hold_is_asked_again_then_declined(tmp_path):
    pipeline = _pipeline(tmp_path, "within 7 seconds [1]")
    result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    assert result.answer == NO_ANSWER and not result.found  # never shown, and no span picked instead
    assert result.grounding.mode == "none" and result.grounding.draft == "within 7 seconds [1]"
    assert result.grounding.quotes == [] and result.as_json()["found"] is False
    generated = [prompt for kind, prompt in pipeline.generator.calls if kind == "generate"]
    assert len(generated) == 2 and prompts.READER_COPY_AGAIN in generated[1]  # the same conversation, once more
    assert generated[1].startswith(generated[0])
    # the ranker's candidates, which never pick the answer, are the nearest ones shown beside it
    assert result.grounding.alternatives and all(c.sentence is not None for c in result.grounding.alternatives)


@pytest.mark.parametrize("certainty", [0.8, 0.2])
def test_unknown_is_asked_for_the_best_answer_and_declined_when_there_is_none(tmp_path, certainty):
    pipeline = _pipeline(tmp_path, "unknown", certainty=certainty)
    result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    assert result.answer == NO_ANSWER and not result.found
    assert result.as_json()["found"] is False and result.as_json()["declined"] == "no answer found"
    generated = [prompt for kind, prompt in pipeline.generator.calls if kind == "generate"]
    assert len(generated) == 2 and prompts.READER_BEST_GUESS in generated[1]


def test_the_best_answer_after_unknown_stands_with_that_judgement_among_its_signals(tmp_path):
    replies = iter(["unknown", "within 10 seconds [1]"])
    pipeline = _pipeline(tmp_path, lambda prompt: next(replies), certainty=0.7)
    result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
    assert result.found and result.answer.startswith("within 10 seconds")
    assert result.grounding.signals["said_unknown"] == pytest.approx(0.7)


def _numbered(fact: str, verdict: str = ""):
    """A reply naming the numbered sentence that holds `fact`, after `verdict` when one is given."""
    def said(prompt: str) -> str:
        number = re.search(r"\[(\d+)\] [^\n]*" + re.escape(fact), prompt).group(1)
        return f"{verdict} [{number}]".strip()
    return said


def _copying(fact: str, copied: str | None = None):
    """A reader that says "Yes [1]" and, asked which sentence decides it, copies `copied` (by
    default the sentence holding `fact`); asked for its number, names the one holding `fact`."""
    def said(prompt: str) -> str:
        if prompts.COPY_DECIDING_SENTENCE in prompt:
            return copied if copied is not None else re.search(r"[^\n.]*" + re.escape(fact) + r"[^\n.]*", prompt).group()
        if prompts.DECIDING_SENTENCE in prompt:
            return _numbered(fact)(prompt)
        return "Yes [1]"
    return said


@pytest.mark.parametrize("favoured, shown", [("Yes", "Yes"), ("No", "No")])
def test_a_verdict_is_read_from_the_readers_probabilities_and_quotes_the_sentence_it_copies(
        tmp_path, favoured, shown):
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    fact = "diesel generators start within 10 seconds"
    reader_ = FakeReader(_copying(fact), choose=lambda prompt, labels: favoured if favoured in labels else None)
    result = make_pipeline(db, reader_).answer(
        "Do the emergency diesel generators start within 10 seconds of a grid loss?")
    assert result.found and result.grounding.mode == "verdict"
    assert result.answer.startswith(f"{shown} [")
    assert fact in result.grounding.quotes[0].text
    generated = [prompt for kind, prompt in reader_.calls if kind == "generate"]
    assert prompts.READER_SYSTEM in generated[0]  # read over the passages, as a fact is


def test_a_verdict_carries_the_readers_probability_that_the_sentences_do_not_say(tmp_path):
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    reader_ = FakeReader(_copying("Fuel assemblies are replaced"),
                         choose=lambda prompt, labels: "unknown" if "unknown" in labels else None)
    result = make_pipeline(db, reader_).answer("Do the fuel assemblies contain thorium?")
    assert result.grounding.signals["said_unknown"] == pytest.approx(0.8)
    assert "Fuel assemblies are replaced" in result.grounding.quotes[0].text


def test_a_how_question_is_answered_by_the_sentences_the_reader_selects_in_document_order(tmp_path):
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    first, second = "1,200 litres per minute", "diesel generators start within 10 seconds"

    def said(prompt: str) -> str:  # the later sentence named first
        return f"{_numbered(second)(prompt)} {_numbered(first)(prompt)}"

    result = make_pipeline(db, FakeReader(said)).answer(
        "How does the plant keep the coolant moving and power its pumps after a grid loss?")
    assert result.found and result.grounding.mode == "selection"
    texts = [quote.text for quote in result.grounding.quotes]
    assert len(texts) == 2 and first in texts[0] and second in texts[1]  # in document order
    lines = result.answer.splitlines()
    assert len(lines) == 2 and all(line.startswith("- ") for line in lines)


def test_a_selection_naming_no_sentence_shown_is_declined(tmp_path):
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    result = make_pipeline(db, FakeReader("[999]")).answer("How are the fuel assemblies replaced?")
    assert result.answer == NO_ANSWER and not result.found


def test_a_proven_answer_below_the_decline_threshold_is_declined_and_kept_as_an_alternative(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_confidence, "TABLES", tmp_path)
    reader_confidence.forget()
    _table(tmp_path, QWEN_05B.name, {"own_logprob": 10.0}, bias=5.0)  # sure as the reader is of its reply
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    settings = DEFAULTS.but(answer=replace(DEFAULTS.answer, reader_decline=0.5))
    question = "How quickly do the emergency diesel generators start after a grid loss?"
    try:
        sure = make_pipeline(db, FakeReader("within 10 seconds [1]", 0.9), settings=settings).answer(question)
        unsure = make_pipeline(db, FakeReader("within 10 seconds [1]", 0.3), settings=settings).answer(question)
    finally:
        reader_confidence.forget()
    assert sure.found and sure.answer.startswith("within 10 seconds")
    assert unsure.answer == NO_ANSWER and not unsure.found and unsure.quotes == []
    shown = unsure.as_json()
    assert shown["declined"] == "below the reader's confidence" and shown["declined_answer_mode"] == "read"
    assert shown["alternatives"][0]["text"] == "within 10 seconds"
    assert "diesel generators start within 10 seconds" in shown["alternatives"][0]["quote"]["text"]


@pytest.mark.parametrize("chosen", [0.5, None])
def test_by_default_a_reader_declines_below_the_threshold_chosen_for_its_table(tmp_path, monkeypatch, chosen):
    monkeypatch.setattr(reader_confidence, "TABLES", tmp_path)
    reader_confidence.forget()
    _table(tmp_path, QWEN_05B.name, {"own_logprob": 10.0}, bias=5.0, decline_below=chosen)
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    assert DEFAULTS.answer.reader_decline == -1  # the profile's own threshold
    try:
        result = make_pipeline(db, FakeReader("within 10 seconds [1]", 0.3)).answer(
            "How quickly do the emergency diesel generators start after a grid loss?")
    finally:
        reader_confidence.forget()
    assert result.grounding.calibrated and result.grounding.confidence < 0.5
    # with a chosen threshold the unsure answer is declined; with none chosen it is shown, unsure
    assert result.found is (chosen is None)
    if chosen is None:
        assert result.grounding.unsure


def test_an_uncalibrated_reader_never_declines_on_its_own_probability(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_confidence, "TABLES", tmp_path)  # no fitted table
    reader_confidence.forget()
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    settings = DEFAULTS.but(answer=replace(DEFAULTS.answer, reader_decline=0.5))
    try:
        result = make_pipeline(db, FakeReader("within 10 seconds [1]", 0.3), settings=settings).answer(
            "How quickly do the emergency diesel generators start after a grid loss?")
    finally:
        reader_confidence.forget()
    assert result.found and result.grounding.confidence == pytest.approx(0.3) and result.grounding.unsure


def test_the_reader_checks_its_answer_against_the_sentence_that_proves_it(tmp_path):
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    reader_ = FakeReader("within 10 seconds [1]", choose=lambda prompt, labels: "No" if prompts.CHECK_SYSTEM in prompt else None)
    result = make_pipeline(db, reader_).answer("How quickly do the emergency diesel generators start after a grid loss?")
    checks = [prompt for kind, prompt in reader_.calls if kind == "label_probs" and prompts.CHECK_SYSTEM in prompt]
    assert len(checks) == 1
    assert "Sentence: The emergency diesel generators start within 10 seconds" in checks[0]
    assert "Answer: within 10 seconds" in checks[0]
    assert result.grounding.signals["checked"] == pytest.approx(math.log(0.2 / 0.8))


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
    assert signals["in_focus"] == 1.0 and signals["verdict"] == 0.0 and signals["selection"] == 0.0
    assert signals["repeats_question"] == 0.0  # "10 seconds" says nothing the question says


def _table(directory, profile: str, weights: dict[str, float], bias: float = 0.0,
           decline_below: float | None = None) -> None:
    names = list(reader_confidence.SIGNALS)
    table = {"weights": {n: weights.get(n, 0.0) for n in names}, "means": {n: 0.0 for n in names},
             "scales": {n: 1.0 for n in names}, "bias": bias}
    if decline_below is not None:  # as bench/refusal.py --choose --write keeps it
        table["provenance"] = {"decline_below": decline_below}
    (directory / f"{profile}.json").write_text(json.dumps(table), encoding="utf-8")


def test_a_profile_with_a_fitted_table_gets_its_calibrated_confidence(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_confidence, "TABLES", tmp_path)
    reader_confidence.forget()
    # Sure only when the span ranker, which never saw the reply, picks the same answer.
    _table(tmp_path, QWEN_05B.name, {"ranker_agrees": 8.0, "own_logprob": 0.0}, bias=-4.0)
    try:
        pipeline = _pipeline(tmp_path, "within 10 seconds [1]", certainty=0.99)
        result = pipeline.answer("How quickly do the emergency diesel generators start after a grid loss?")
        agrees = result.grounding.signals["ranker_agrees"]
        assert result.grounding.confidence == pytest.approx(1 / (1 + math.exp(-(8.0 * agrees - 4.0))), abs=1e-3)
        assert result.grounding.unsure == (agrees == 0.0)
    finally:
        reader_confidence.forget()


def test_a_table_weighting_an_unknown_signal_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_confidence, "TABLES", tmp_path)
    reader_confidence.forget()
    (tmp_path / "some-reader.json").write_text(json.dumps(
        {"weights": {"moon_phase": 1.0}, "means": {}, "scales": {}}), encoding="utf-8")
    try:
        with pytest.raises(LongqaError, match="some-reader.json: not a reader confidence table"):
            reader_confidence.calibrated("some-reader", {"own_logprob": 0.0})
        assert reader_confidence.calibrated("no-such-reader", {"own_logprob": 0.0}) is None
    finally:
        reader_confidence.forget()


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


def test_a_copied_sentence_that_says_nothing_asked_gives_way_to_the_one_the_reader_numbers(tmp_path):
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    fact = "diesel generators start within 10 seconds"
    reader_ = FakeReader(_copying(fact, copied="Harbor Point Reactor Handbook"))  # the title: says nothing asked
    result = make_pipeline(db, reader_).answer(
        "Do the emergency diesel generators start within 10 seconds of a grid loss?")
    assert result.found and fact in result.grounding.quotes[0].text


def test_a_readers_alternatives_start_with_the_rankers_own_pick(tmp_path):
    db = build_store(tmp_path / "r.db", {"handbook.md": reactor_handbook()}, tmp_path)
    for said in ("every 18 months", "unknown"):  # a proven answer, and one the reader could not give
        result = make_pipeline(db, FakeReader(said, 0.9)).answer("How often are the fuel assemblies replaced?")
        grounding = result.grounding
        shown = said if result.found else None
        picked = next(c["text"] for c in grounding.candidates if c["kind"] != "none" and c["text"] != shown)
        assert grounding.alternatives[0].text == picked, (said, [c["text"] for c in grounding.candidates[:3]])
