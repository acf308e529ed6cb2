"""The reader's window as whole paragraphs (focus.select_leaves, answer.reader_window): a paragraph
is taken whole, best first, while it fits; the room left goes to the best sentences; its sentences
run on as one paragraph, while a table keeps its lines."""

from __future__ import annotations

from longqa import tokens
from longqa.ask.analysis.asked import read
from longqa.ask.answer import focus
from longqa.ask.context import Passage
from longqa.tree_types import Node

DOC = "Riverside Community Pool: Operating Manual"
WATER = ("The main pool holds 850 cubic metres of water. Its filters are backwashed every Monday and "
         "Thursday before opening. The backwash water goes to the foul sewer.")
HOURS = ("The pool opens at 6.30 on weekdays. It closes at 21.00, and at 18.00 on Sundays. "
         "Lane swimming ends an hour before closing.")
PRICES = "Adult | Child\nSingle swim | 4.20 | 2.10\nSeason ticket | 180 | 90"


def scored(question: str, leaves: list[tuple[str, str]]) -> list[focus.Sentence]:
    passages = []
    for n, (section, text) in enumerate(leaves, 1):
        leaf = Node("paragraph", text=text, id=n, doc_id=1, path=f"{DOC} > {section}")
        passages.append(Passage(n, n, 1, DOC, "pool.pdf", section, 1, 1, 1.0, text, tokens.count(text), [n],
                                node=leaf))
    found = focus.context_sentences(passages)
    focus.score_for(read(question), found)
    return found


def test_the_best_paragraph_comes_whole_and_the_room_left_goes_to_the_best_sentences():
    found = scored("How often are the filters backwashed?", [("Opening hours", HOURS), ("Water", WATER)])
    water = sum(tokens.count(s.text) + 1 for s in found if s.leaf.id == 2)
    room = water + tokens.count(found[0].text) + 1  # the water paragraph and one more sentence
    chosen = focus.select_leaves(found, room)
    assert [s.text for s in chosen if s.leaf.id == 2] == [s.text for s in found if s.leaf.id == 2]
    assert len([s for s in chosen if s.leaf.id == 1]) == 1  # the hours paragraph does not fit whole
    assert [s.order for s in chosen] == sorted(s.order for s in chosen)
    # in the same small room the best sentences alone give the filters sentence without its paragraph
    assert [s.text for s in focus.select(found, 20, spread=False)] == [found[4].text]


def test_a_paragraph_longer_than_the_window_still_gives_its_best_sentence():
    found = scored("How often are the filters backwashed?", [("Water", WATER)])
    chosen = focus.select_leaves(found, 5)
    assert [s.text for s in chosen] == ["Its filters are backwashed every Monday and Thursday before opening."]


def test_a_paragraph_runs_on_in_one_line_and_a_table_keeps_its_rows():
    found = scored("What does a season ticket cost?", [("Water", WATER), ("Prices", PRICES)])
    shown = focus.render(found, as_paragraphs=True).splitlines()
    assert shown[1] == " ".join(WATER.split())
    assert shown[-2:] == ["Single swim | 4.20 | 2.10", "Season ticket | 180 | 90"]
    assert len(focus.render(found).splitlines()) == len(shown) + 2  # one sentence a line otherwise


def test_every_turn_of_the_readers_conversation_shows_the_paragraphs_it_first_read():
    from longqa.ask.answer.stage import plan_answer, run_answer
    from longqa.ask.settings import DEFAULTS, applied
    from tests.fakes import FakeReader

    question = "How often are the filters backwashed?"
    found = scored(question, [("Opening hours", HOURS), ("Water", WATER)])
    passages = [s.passage for s in found if s.start == 0]  # each paragraph's passage, once
    reader = FakeReader(said="unknown")  # its best answer is then asked for in the same conversation
    with applied(DEFAULTS.with_values({"answer.reader_window": "paragraphs"})):
        plan = plan_answer(read(question), passages, "extractive", 0.0, None, None, reader)
        list(run_answer(reader, read(question), plan, []))
    prompts = [prompt for kind, prompt in reader.calls if kind == "generate"]
    assert " ".join(WATER.split()) in prompts[0]  # the paragraph in one line
    assert len(prompts) > 1 and all(later.startswith(prompts[0]) for later in prompts[1:])
