"""The baselines' answer step (eval/answer.py): a reader reads them through its own chat prompt, as
longqa's answers are read, so that only the context differs; a completion model keeps the
completion prompt."""

from __future__ import annotations

from longqa.ask import prompts
from longqa.eval import answer as answering
from longqa.eval.retrieved import Passage
from tests.fakes import FakeGenerator, FakeReader

PASSAGES = [Passage("The pool opens at 6:30 on weekdays. It holds 850 cubic metres of water.", "/docs/pool.md",
                    title="Pool Manual", label="1. Opening hours")]


def test_a_reader_reads_a_baseline_through_its_own_chat_prompt_and_its_citation_is_not_the_answer():
    reader = FakeReader("850 cubic metres [1]")
    result = answering.answer(reader, "How much water does the pool hold?", PASSAGES, is_choice=False)
    assert result.text == "850 cubic metres"
    generated = [prompt for kind, prompt in reader.calls if kind == "generate"]
    assert generated[0].startswith(f"<system>\n{prompts.READER_SYSTEM}")
    assert "[1] Pool Manual > 1. Opening hours\nThe pool opens at 6:30" in generated[0]


def test_a_reader_picks_a_lettered_option_by_its_probability_of_the_bracketed_letter():
    reader = FakeReader(choose=lambda prompt, labels: "(B)" if "(B)" in labels else None)
    question = "When does the pool open on weekdays? (A) 5:30 (B) 6:30 (C) 8:00"
    result = answering.answer(reader, question, PASSAGES, is_choice=True)
    assert result.text == "B"


def test_a_completion_model_keeps_the_completion_prompt():
    generator = FakeGenerator(reply=lambda prompt, grammar: " 850 cubic metres\n")
    result = answering.answer(generator, "How much water does the pool hold?", PASSAGES, is_choice=False)
    assert result.text == "850 cubic metres"
    generated = [prompt for kind, prompt in generator.calls if kind == "generate"]
    assert generated[0].endswith("Short answer:") and "<system>" not in generated[0]
