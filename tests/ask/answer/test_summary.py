"""Extractive summaries (ask/answer/summary.py): points quoted from the stored sentences, ranked by
Maximal Marginal Relevance, of the section a question names by number.

Each context is built the way the answer stage builds it: leaves (with the ancestor path the store
gives them) in numbered passages, split into sentences and scored against the question by
focus.py, then handed to `summarise` with the question's real `Asked` record.
"""

from __future__ import annotations

import pytest

from longqa.ask.analysis.asked import read
from longqa.ask.answer import focus, summary
from longqa.ask.answer.grounded import NO_ANSWER
from longqa.ask.answer.stage import plan_answer
from longqa.ask.context import Passage
from longqa.ask.settings import DEFAULTS, applied
from longqa.tree_types import Node
from tests.ask_support import build_store, make_pipeline
from tests.fakes import FakeGenerator

DOC = "Boiler Operator Handbook"


def context(leaves: list[tuple[list[str], str]]) -> list[focus.Sentence]:
    """One passage per (section titles, text), numbered from 1, in document order."""
    passages = []
    for n, (titles, text) in enumerate(leaves, 1):
        leaf = Node("paragraph", text=text, id=n, doc_id=1, path=" > ".join([DOC, *titles]))
        passages.append(Passage(n, n, 1, DOC, "handbook.pdf", " > ".join(titles), 1, 1, 1.0, text,
                                len(text.split()), [n], node=leaf))
    return focus.context_sentences(passages)


def summarise(question: str, leaves: list[tuple[list[str], str]], **settings):
    asked = read(question)
    found = context(leaves)
    focus.score_for(asked, found)
    with applied(DEFAULTS.with_values(settings)):
        return summary.summarise(asked, found)


def quoted(grounding) -> list[str]:
    return [q.text for q in grounding.quotes]


def test_points_are_exact_quotes_in_document_order_each_with_its_passage_number():
    # The sentence that matches the question best comes last in the document: the points still
    # follow the document, not the ranking. The double space stays in the quote (an offset into
    # the stored text) and is collapsed in the point's line.
    leaves = [
        (["1 Start-up"], "Open the feed valve before you light the burner on a cold morning."),
        (["2 Running"], "Check the level in the gauge glass at the  start of every shift."),
        (["3 Water treatment"], "The water treatment plant softens the feed water for the boiler."),
    ]
    text, grounding = summarise("Summarise the water treatment of the boiler", leaves)
    assert grounding.mode == "summary"
    assert text.splitlines() == [
        "- Open the feed valve before you light the burner on a cold morning. [1]",
        "- Check the level in the gauge glass at the start of every shift. [2]",
        "- The water treatment plant softens the feed water for the boiler. [3]",
    ]
    assert quoted(grounding)[1] == "Check the level in the gauge glass at the  start of every shift."
    for quote in grounding.quotes:
        assert quote.leaf.text[quote.char_start:quote.char_end] == quote.text and quote.node_id == quote.passage.n
    assert [s.text for s in grounding.focused] == quoted(grounding)


def test_points_from_several_sentences_of_one_leaf_keep_their_offsets_and_order():
    body = ("The deaerator strips oxygen from the feed water. The sulphite dose binds the oxygen that is left. "
            "Hardness is tested at the start of each shift. The blowdown valve is opened for ten seconds a day. "
            "Every reading goes into the water treatment log.")
    text, grounding = summarise("Give an overview of the water treatment", [(["2 Water treatment"], body)])
    assert len(grounding.quotes) == 3  # five sentences: the three-point floor
    starts = [q.char_start for q in grounding.quotes]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    for quote, line in zip(grounding.quotes, text.splitlines()):
        assert body[quote.char_start:quote.char_end] == quote.text
        assert line == f"- {quote.text} [1]"


@pytest.mark.parametrize("count, points", [(2, 2), (4, 3), (9, 3), (13, 4), (21, 5), (36, 6), (64, 7), (120, 7)])
def test_the_number_of_points_grows_with_the_root_of_the_pool_from_three_to_seven(count, points):
    # Fewer sentences than three: every one is a point; otherwise round(sqrt(n)) within [3, 7]
    # (13 and 21 tell rounding from truncation).
    sentences = [f"Valve number {i} on the steam line is checked by the shift operator every {i} days."
                 for i in range(1, count + 1)]
    leaves = [(["4 Valves"], " ".join(sentences[i:i + 8])) for i in range(0, count, 8)]
    text, grounding = summarise("Summarise the valve checks", leaves)
    assert len(grounding.quotes) == points and len(text.splitlines()) == points
    assert summary.MIN_POINTS == 3 and summary.MAX_POINTS == 7


def water_works() -> list[tuple[list[str], str]]:
    """A manual whose section numbers share digits with 3: 3 and its subsections (one of them
    un-numbered), 13, 4.3."""
    return [
        (["1 Intake"], "The intake screens stop leaves and fish from entering the raw water pumps."),
        (["3 Filters"], "The filter hall holds eight rapid gravity filters in two rows."),
        (["3 Filters", "3.1 Sand filters"], "Each sand filter holds forty tonnes of graded quartz sand."),
        (["3 Filters", "3.2 Backwash"], "A filter is backwashed with air and water after two days of running."),
        (["3 Filters", "Filter cleaning"], "The filter walls are scrubbed by hand once a year in spring."),
        (["4 Storage", "4.3 Spare filters"], "Spare filter nozzles are stored in the workshop on shelf nine."),
        (["13 Records"], "Filter run times are recorded in the log book for seven years."),
    ]


def test_a_section_named_by_number_takes_that_section_and_its_subsections_only():
    found = context(water_works())
    inside = [s.text for s in summary.in_section(found, read("Summarise section 3").section)]
    assert inside == [
        "The filter hall holds eight rapid gravity filters in two rows.",
        "Each sand filter holds forty tonnes of graded quartz sand.",
        "A filter is backwashed with air and water after two days of running.",
        "The filter walls are scrubbed by hand once a year in spring.",
    ]
    _, grounding = summarise("Summarise section 3", water_works())
    assert len(grounding.quotes) == 3 and set(quoted(grounding)) <= set(inside)
    only = [s.text for s in summary.in_section(found, read("What does section 3.2 say?").section)]
    assert only == ["A filter is backwashed with air and water after two days of running."]


@pytest.mark.parametrize("title", ["3. Filters", "3) Filters", "3: Filters", "Section 3 Filters", "Chapter 3: Filters",
                                   "3"])
def test_the_section_number_is_read_in_the_usual_heading_forms(title):
    leaves = [(["2 Pumps"], "The raw water pumps lift the water twelve metres to the works."),
              ([title], "The filter hall holds eight rapid gravity filters in two rows."),
              (["30 Glossary"], "A filter bed is the layer of sand and gravel inside a filter.")]
    inside = summary.in_section(context(leaves), "3")
    assert [s.passage.n for s in inside] == [2]


def test_a_leaf_without_a_stored_path_is_placed_by_its_passages_section():
    leaf = Node("paragraph", text="Each sand filter holds forty tonnes of graded quartz sand.", id=1, doc_id=1)
    other = Node("paragraph", text="Spare filter nozzles are stored in the workshop on shelf nine.", id=2, doc_id=1)
    passages = [Passage(1, 1, 1, DOC, "handbook.pdf", "3 Filters > 3.1 Sand filters", 1, 1, 1.0, leaf.text, 9, [1],
                        node=leaf),
                Passage(2, 2, 1, DOC, "handbook.pdf", "4 Storage > 4.3 Spare filters", 1, 1, 1.0, other.text, 10, [2],
                        node=other)]
    assert [s.passage.n for s in summary.in_section(focus.context_sentences(passages), "3")] == [1]


@pytest.mark.parametrize("question", ["Summarise section 9", "Summarise the filters"])
def test_all_sentences_count_when_no_section_carries_the_number_or_none_is_named(question):
    found = context(water_works())
    assert summary.in_section(found, read(question).section) == found
    text, grounding = summarise(question, water_works())
    assert text != NO_ANSWER and len(grounding.quotes) == 3


def test_a_section_named_in_a_real_store_is_read_from_the_stored_paths(tmp_path):
    # The same rule on a manual ingested through the real path: the leaves' stored paths, not
    # hand-written ones, decide what "section 3" covers.
    manual = ("# Water Works Manual\n\n"
              "## 1. Intake\n\nThe intake screens stop leaves and fish from entering the raw water pumps.\n\n"
              "## 3. Filters\n\nThe filter hall holds eight rapid gravity filters in two rows.\n\n"
              "### 3.1 Sand filters\n\nEach sand filter holds forty tonnes of graded quartz sand.\n\n"
              "### 3.2 Backwash\n\nA filter is backwashed with air and water after two days of running.\n\n"
              "### Filter cleaning\n\nThe filter walls are scrubbed by hand once a year in spring.\n\n"
              "## 4. Storage\n\n### 4.3 Spare filters\n\nSpare filter nozzles are stored in the workshop on shelf nine.\n\n"
              "## 13. Records\n\nFilter run times are recorded in the log book for seven years.\n")
    db = build_store(tmp_path / "store.db", {"manual.md": manual}, tmp_path)
    refined = make_pipeline(db, FakeGenerator(), coverage_min=0.0, cosine_min=0.0).retrieve_context(
        "Summarise section 3")
    asked = read(refined.question)
    plan = plan_answer(asked, refined.passages, "abstractive", 0.9)
    texts = {s.text for s in plan.sentences}
    assert {"Spare filter nozzles are stored in the workshop on shelf nine.",
            "Filter run times are recorded in the log book for seven years."} <= texts  # the decoys are there
    inside = ["The filter hall holds eight rapid gravity filters in two rows.",
              "Each sand filter holds forty tonnes of graded quartz sand.",
              "A filter is backwashed with air and water after two days of running.",
              "The filter walls are scrubbed by hand once a year in spring."]
    assert [s.text for s in summary.in_section(plan.sentences, asked.section)] == inside
    _, grounding = summary.summarise(asked, plan.sentences)
    assert len(grounding.quotes) == 3 and set(quoted(grounding)) <= set(inside)


@pytest.mark.parametrize("question", ["Summarise appendix A", "summarise appendix a"])
def test_an_appendix_letter_is_not_the_article_that_opens_a_title(question):
    leaves = [(["1 Installation"], "Mount the heater on a wall that can carry twenty kilograms."),
              (["A Note on Safety"], "Never cover the heater while it is switched on and running."),
              (["Appendix A: Wiring"], "The live wire goes to the brown terminal on the left side."),
              (["Appendix B: Spare parts"], "Order spare filters from the dealer who sold you the heater.")]
    inside = summary.in_section(context(leaves), read(question).section)
    assert [s.passage.n for s in inside] == [3]


def test_a_lettered_heading_without_its_keyword_is_found_by_its_letter():
    leaves = [(["1 Installation"], "Mount the heater on a wall that can carry twenty kilograms."),
              (["A. Wiring"], "The live wire goes to the brown terminal on the left side."),
              (["B. Spare parts"], "Order spare filters from the dealer who sold you the heater.")]
    inside = summary.in_section(context(leaves), read("Summarise appendix B").section)
    assert [s.passage.n for s in inside] == [3]


WATER_TREATMENT = [
    "The feed water is softened to remove calcium and magnesium salts before it reaches the boiler.",
    "Oxygen is removed in the deaerator before the feed water enters the boiler drum.",
    "A chemical dose of sulphite binds any oxygen that the deaerator leaves in the water.",
    "Test the boiler water for hardness and sulphite at the start of every shift.",
    "Blow down the boiler for ten seconds each day to remove settled sludge from the drum.",
    "Record every test result in the water treatment log kept beside the control panel.",
    "Call the chemical supplier when the sulphite reading stays low for two days in a row.",
]
WARNING = "Always wear goggles and gloves when you handle water treatment chemicals near the boiler."
NEAR_WARNING = "Always wear goggles and gloves when handling the water treatment chemicals near a boiler."


def treatment_manual(second_warning: str) -> list[tuple[list[str], str]]:
    section = ["2 Water treatment"]
    return [(["1 Start-up"], "Open the feed valve before lighting the burner. Check the gauge glass twice."),
            (section, " ".join(WATER_TREATMENT[:5])),
            (section, " ".join([*WATER_TREATMENT[5:], WARNING, second_warning])),
            (["3 Shutdown"], "Close the fuel valve and let the fan purge the furnace for five minutes.")]


def test_near_duplicates_are_not_both_points_and_the_diversity_setting_decides_it():
    leaves = treatment_manual(NEAR_WARNING)
    _, plain = summarise("Summarise section 2", leaves)
    assert len(plain.quotes) == 3
    assert len({WARNING, NEAR_WARNING} & set(quoted(plain))) == 1
    # Without the overlap penalty the two warnings, each the other's closest neighbour, both win.
    _, undiversified = summarise("Summarise section 2", leaves, **{"answer.summary_diversity": 0.0})
    assert {WARNING, NEAR_WARNING} <= set(quoted(undiversified))
    # Only the penalty: the picks share as few words as they can.
    _, spread = summarise("Summarise section 2", leaves, **{"answer.summary_diversity": 1.0})
    assert len({WARNING, NEAR_WARNING} & set(quoted(spread))) <= 1


def test_a_repeated_sentence_is_not_quoted_twice_at_the_default_diversity():
    _, grounding = summarise("Summarise the water treatment", treatment_manual(WARNING))
    assert quoted(grounding).count(WARNING) == 1


def test_lines_too_short_to_be_points_are_left_out():
    # Headings and labels name the question's words but are no point; five words make one.
    leaves = [(["5 Daily checks"], "Daily checks"),
              (["5 Daily checks"], "Check the gauge glass."),
              (["5 Daily checks"], "Check the gauge glass daily."),
              (["5 Daily checks"], "The safety valve is lifted by hand once a week."),
              (["5 Daily checks"], "The low water alarm is tested before the burner is lit.")]
    _, grounding = summarise("Summarise the daily checks of the gauge glass", leaves)
    assert quoted(grounding) == ["Check the gauge glass daily.", "The safety valve is lifted by hand once a week.",
                                 "The low water alarm is tested before the burner is lit."]


@pytest.mark.parametrize("leaves", [[], [(["5 Daily checks"], "Daily checks"), (["6 Tools"], "Spanners and gauges.")]])
def test_no_sentence_to_quote_gives_the_documents_do_not_say(leaves):
    text, grounding = summarise("Summarise section 5", leaves)
    assert text == NO_ANSWER == "The documents do not say."
    assert grounding.mode == "none" and grounding.quotes == [] and grounding.focused == []
