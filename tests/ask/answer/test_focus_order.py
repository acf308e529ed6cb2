"""The order in which a reader reads its passages (focus.arranged, answer.reader_order): in the
documents' order, or the likeliest passage last, next to the question, each passage whole."""

from __future__ import annotations

from longqa.ask.analysis.asked import read
from longqa.ask.answer import focus
from longqa.ask.context import Passage
from longqa.ask.settings import DEFAULTS, applied
from longqa.tree_types import Node

DOC = "Heat Pump Installation Guide"
LEAVES = [
    (["1. Siting"], "Place the outdoor unit at least 30 cm from a wall. Keep the air outlet clear of shrubs."),
    (["4. Refrigerant"], "The unit holds 1.4 kg of R32 refrigerant. Only a certified engineer may open the circuit."),
    (["6. Noise"], "The outdoor unit makes 48 dB at one metre. A rubber mat lowers it slightly."),
]


def sentences() -> list[focus.Sentence]:
    passages = []
    for n, (titles, text) in enumerate(LEAVES, 1):
        leaf = Node("paragraph", text=text, id=n, doc_id=1, path=" > ".join([DOC, *titles]))
        passages.append(Passage(n, n, 1, DOC, "guide.pdf", " > ".join(titles), 1, 1, 1.0, text,
                                len(text.split()), [n], node=leaf))
    found = focus.context_sentences(passages)
    focus.score_for(read("How much refrigerant does the unit hold?"), found)
    return found


def test_document_order_keeps_the_context_order():
    found = sentences()
    assert focus.arranged(found, "document") == found


def test_relevance_order_reads_the_likeliest_passage_last_each_passage_whole():
    found = sentences()
    arranged = focus.arranged(found, "relevance")
    assert sorted(id(s) for s in arranged) == sorted(id(s) for s in found)
    # the refrigerant passage holds the best sentence: it comes last, its two sentences in order
    assert [s.passage.n for s in arranged][-2:] == [2, 2]
    assert [s.text for s in arranged][-2:] == [s.text for s in found if s.passage.n == 2]
    # each passage's sentences stay together, so each is rendered under one header
    passages = [s.passage.n for s in arranged]
    assert passages == sorted(passages, key=passages.index)


def test_the_reader_renders_the_order_in_effect():
    found = sentences()
    with applied(DEFAULTS.with_values({"answer.reader_order": "relevance"})):
        text = focus.for_reader(found)
    assert text.rindex("[2]") > text.rindex("[1]") and text.rindex("[2]") > text.rindex("[3]")
    with applied(DEFAULTS.with_values({"answer.reader_order": "document"})):
        assert focus.for_reader(found) == focus.render(found)
