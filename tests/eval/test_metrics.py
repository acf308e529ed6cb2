"""Evaluation measures on hand-worked examples."""

from __future__ import annotations

import pytest

from longqa.eval import choice, metrics
from longqa.eval.retrieved import Passage, Retrieved
from longqa.eval.data import Evidence, Question
from longqa.eval.score import answer_measures, context_measures


# -- normalisation, EM, F1 --------------------------------------------------------------------------
def test_normalize_follows_squad():
    assert metrics.normalize("The  Eiffel Tower!") == "eiffel tower"
    assert metrics.normalize("An apple, a pear & THE plum.") == "apple pear plum"
    # articles only as whole words: "theater" and "another" keep their letters
    assert metrics.normalize("Another theater") == "another theater"
    assert metrics.normalize("“Quoted” — text…") == "quoted text"
    assert metrics.normalize("30.8%") == "308"


def test_exact_match_any_gold():
    assert metrics.exact_match("the Chief of Protocol.", ["Chief of Protocol"]) == 1.0
    assert metrics.exact_match("Chief", ["Chief of Protocol", "ambassador"]) == 0.0
    assert metrics.exact_match("Ambassador", ["Chief of Protocol", "ambassador"]) == 1.0


def test_token_f1_worked_example():
    # prediction tokens: stanley hall was president (4); gold: g stanley hall (3); common 2
    # precision 2/4, recall 2/3 → F1 = 2·(1/2)(2/3)/(1/2+2/3) = 4/7
    assert metrics.token_f1("Stanley Hall was president", ["G. Stanley Hall"]) == pytest.approx(4 / 7)
    # the best gold counts
    assert metrics.token_f1("Stanley Hall was president", ["G. Stanley Hall", "Stanley Hall"]) == pytest.approx(
        2 * (2 / 4) * 1 / (2 / 4 + 1)
    )
    assert metrics.token_f1("nothing shared", ["Chief of Protocol"]) == 0.0
    # repeated tokens count once per occurrence in both
    assert metrics.token_f1("paris paris", ["paris"]) == pytest.approx(2 * 0.5 * 1 / 1.5)


# -- answer recall ------------------------------------------------------------------------------------
def test_answer_in_context_on_word_boundaries():
    context = "Revenue rose 30.8% in FY2017. She served as Chief of Protocol of the United States."
    assert metrics.answer_in_context(["30.8%"], context) is True
    assert metrics.answer_in_context(["chief of protocol"], context) is True
    assert metrics.answer_in_context(["Chief"], "Mischief managed") is False  # not inside a word
    assert metrics.answer_in_context(["1,577"], context) is False
    assert metrics.answer_in_context(["the", "!"], context) is None  # nothing left to look for
    assert metrics.answer_in_context(["Yes"], "yes, she did") is None  # a verdict, not a span
    assert metrics.answer_in_context(["no", "Chief of Protocol"], context) is True


# -- evidence coverage ----------------------------------------------------------------------------
def test_window_coverage_counts_tokens_in_one_window():
    evidence = "a b c d e".split()
    assert metrics.window_coverage(evidence, "x a b c d e y".split()) == 1.0
    # 4 of 5 in one window of 5 ("a b c d q")
    assert metrics.window_coverage(evidence, "a b c d q z z z z z e".split()) == pytest.approx(0.8)
    # the same tokens scattered far apart never share a window of 5
    assert metrics.window_coverage(evidence, "a z z z z b z z z z c z z z z d z z z z e".split()) == pytest.approx(0.2)
    # multiset: a repeated evidence token needs repeated context tokens
    assert metrics.window_coverage("b b b".split(), "b x x".split()) == pytest.approx(1 / 3)
    assert metrics.window_coverage("a b".split(), []) == 0.0


def test_evidence_recall_threshold():
    context = "Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer. Other text."
    covered = "Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer."
    missing = "As an adult, she was named United States ambassador to Ghana."
    recall, coverages = metrics.evidence_recall([covered, missing], context)
    # covered: 16 normalised tokens ("a" is dropped), of which "then" and "17yearold" are absent:
    # 14/16 = 0.875 ≥ 0.8
    assert coverages[0] == pytest.approx(14 / 16)
    assert coverages[1] < 0.5
    assert recall == 0.5
    assert metrics.evidence_recall([], context) == (None, [])


def test_page_hit():
    assert metrics.page_hit([38], [(36, 37), (38, 38)]) is True
    assert metrics.page_hit([38], [(30, 40)]) is True
    assert metrics.page_hit([38], [(39, 41), (1, 37)]) is False
    assert metrics.page_hit([None], [(1, 2)]) is None
    assert metrics.page_hit([5], []) is False


# -- multiple choice -----------------------------------------------------------------------------
QUALITY = (
    "Why did the Tr'en leave the door unlocked?\n\n (A) They were careless. \n (B) Their subconscious "
    "wanted him gone. \n (C) They wanted a revolt.  \n (D) He was no threat. "
)


def test_options_and_gold_letter():
    listed = choice.options(QUALITY)
    assert list(listed) == ["A", "B", "C", "D"]
    assert listed["B"] == "Their subconscious wanted him gone."
    assert choice.stem(QUALITY) == "Why did the Tr'en leave the door unlocked?"
    assert choice.gold_letter(["(B) Their subconscious wanted him gone."], QUALITY) == "B"


@pytest.mark.parametrize(
    "answer, letter",
    [
        ("B", "B"), ("(C)", "C"), ("C) They wanted a revolt.", "C"), ("D.", "D"), ("[A]", "A"),
        ("The answer is D", "D"), ("answer: (B)", "B"), ("I think (C) is right", "C"),
        ("Their subconscious wanted him gone", "B"),  # no letter: matched by the option's text
        ("A man walked in", None),  # an article, not an option letter
        ("E", None),  # not among the listed options
        ("", None),
    ],
)
def test_extract_letter(answer, letter):
    assert choice.extract_letter(answer, choice.options(QUALITY)) == letter


# -- per-question scoring ------------------------------------------------------------------------
def _question(**kw) -> Question:
    base = dict(id="q", dataset="d", task="t", question="Q?", answers=["Chief of Protocol"],
                docs=[], metric="f1")
    base.update(kw)
    return Question(**base)


def test_context_measures_use_own_documents_for_page_hit(tmp_path):
    own, other = str(tmp_path / "own.pdf"), str(tmp_path / "other.pdf")
    question = _question(docs=[tmp_path / "own.pdf"], evidence=[Evidence("net sales rose", 38)], answers=["30.8%"])
    wrong_doc = Retrieved([Passage("net sales rose 30.8%", doc=other, page_start=38, page_end=38)])
    right_doc = Retrieved([Passage("net sales rose", doc=own, page_start=37, page_end=39)])
    a, b = context_measures(question, wrong_doc), context_measures(question, right_doc)
    assert (a["page_hit"], a["doc_hit"], a["answer_recall"], a["evidence_recall"]) == (0.0, 0.0, 1.0, 1.0)
    assert (b["page_hit"], b["doc_hit"], b["answer_recall"], b["evidence_recall"]) == (1.0, 1.0, 0.0, 1.0)


def test_recall_is_measured_on_recall_passages_when_given():
    question = _question(answers=["Ghana"])
    retrieved = Retrieved([Passage("first part", doc="x")], recall_passages=[Passage("first part ... Ghana", doc="x")])
    assert context_measures(question, retrieved)["answer_recall"] == 1.0


def test_answer_measures_by_metric():
    f1 = answer_measures(_question(), "chief of protocol")
    assert (f1["em"], f1["f1"], f1["choice_correct"]) == (1.0, 1.0, None)
    quality = _question(question=QUALITY, answers=["(B) Their subconscious wanted him gone."], metric="choice")
    assert answer_measures(quality, "B")["choice_correct"] == 1.0
    assert answer_measures(quality, "(A)")["choice_correct"] == 0.0
    assert context_measures(quality, Retrieved([]))["answer_recall"] is None
    judge = answer_measures(_question(metric="judge"), "anything")
    assert judge["em"] is None and judge["f1"] is None
    assert answer_measures(_question(), None)["f1"] is None  # --no-generate
    assert answer_measures(_question(answers=[]), "10")["f1"] is None  # no gold: not scorable
