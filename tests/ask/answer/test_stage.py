"""Answer-side helpers: citation markers, the repetition guard, and the evidence rules."""

import pytest

from longqa.ask.answer.stage import AnswerGuard
from longqa.ask.answer.citations import cited_numbers
from longqa.ask.search.relevance import check, top_share
from tests.ask_support import build_store, reactor_handbook
from tests.fakes import FakeGenerator


def guarded(text: str, size: int = 3, sentences: int = 0) -> str:
    guard, out = AnswerGuard(sentences), ""
    for i in range(0, len(text), size):
        out += guard.feed(text[i:i + size])
        if guard.stopped:
            return out
    return out + guard.flush()


def test_cited_numbers():
    assert cited_numbers("See [2] and [1, 3]; also [2-4] and [9].", 4) == [2, 1, 3, 4]
    assert cited_numbers("no markers here", 3) == []
    assert cited_numbers("[0] [12]", 5) == []


def test_repeat_guard_stops_loops_and_keeps_plain_answers():
    loop = "The pumps run for 10 hours, then stop. The pumps run for 10 hours, then stop. The pumps"
    assert guarded(loop) == "The pumps run for 10 hours, then stop."
    assert guarded(" About 52 hours with both generators [2]. One lasts 4 days [2].") == \
        "About 52 hours with both generators [2]. One lasts 4 days [2]."
    assert guarded("Yes. Yes. Yes.") == "Yes."
    assert guarded("In late winter [1].", size=50) == "In late winter [1]."
    assert guarded("It grew 4.5 percent [2]. Then it fell. Then it rose.", sentences=2) == "It grew 4.5 percent [2]. Then it fell."


def test_top_share_counts_the_question_words_the_passages_hold():
    texts = ["The coolant loop moves borated water.", "Fuel is replaced every 18 months."]
    # "moves" meets "move" through a crude stem; words the store lacks ("pressure") do not count
    assert top_share("How much water does the coolant loop move?", texts) == 1.0
    assert top_share("coolant pressure", texts) == pytest.approx(1 / 2)
    assert top_share("coolant pressure", texts, {"coolant": 2.0}) == 1.0


def test_relevance_needs_words_or_closeness(tmp_path, db_path):
    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    assert check(db, "emergency diesel generators", 0.1).found  # every word is in the store
    assert not check(db, "tungsten boiling point", 0.1).found
    assert check(db, "tungsten boiling point", 0.5).found  # close in embedding space
    assert not check(db, "tungsten boiling point", None).found
    assert check(db, "emergency diesel generators tungsten", None).found  # no vectors: half suffices
    assert check(db, "Summarize the document.", 0.1).found  # no topic words: nothing can be absent
    assert check(db, "Summarize the emergency work.", 0.1).found  # "summarize" is not a topic
    # Verbs that only frame a question are not topics either.
    assert check(db, "What happens to the emergency diesel generators?", 0.1).found
    assert check(db, "What does emergency diesel generators mean?", 0.1).found
    # A request to quote is not a topic: only "emergency diesel generators" must be found.
    assert check(db, "Highlight the parts (if any) of this handbook related to the emergency diesel generators.",
                 0.1).found


def test_a_subject_named_only_in_its_heading_is_relevant(tmp_path, db_path):
    # Wikipedia-style articles name their subject in the heading and say "The river" after it.
    river = "The river rises on the slopes of the Central Russian Upland and joins the Don west of the town of Liski. "
    other = "The Barcoo is a watercourse of the Wooli catchment in northern New South Wales. "
    articles = {"rivers.md": f"# Tikhaya Sosna River\n\n{river * 3}\n\n# Barcoo River\n\n{other * 3}\n"}
    db = build_store(db_path, articles, tmp_path)
    found = check(db, "Which town is west of the Tikhaya Sosna and the Don?", 0.1)
    assert found.found and "tikhaya" not in found.missing and "sosna" not in found.missing
    assert not check(db, "Which town is west of the Volga?", 0.1).found  # no heading or text says Volga


def test_free_answers_stream_without_a_grammar_and_use_it_only_when_nothing_came():
    from longqa.ask.answer.stage import stream_free

    def reply(prompt, grammar):  # a model that opens with a line break unless a grammar forbids it
        return "" if grammar is None else " The pumps stop. They restart."

    generator = FakeGenerator(reply=reply)
    assert "".join(stream_free(generator, "Question: why?\nAnswer:", 64, long_form=True)) == "The pumps stop. They restart."
    assert [kind for kind, _ in generator.calls] == ["generate", "generate"]
    direct = FakeGenerator(reply=lambda prompt, grammar: " Plain text." if grammar is None else " Grammar text.")
    assert "".join(stream_free(direct, "Question: why?\nAnswer:", 64, long_form=True)) == "Plain text."
    assert len(direct.calls) == 1  # one call, no grammar
