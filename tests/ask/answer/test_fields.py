"""Labelled fields (ask/fields.py): the box of "Label | Value" lines, or label and value on lines
of their own, that encyclopedia pages printed to PDF open with. The field text is copied from the
UDA evaluation's "Supreme Court of the United States" PDF as the PDF parser stores it."""

from __future__ import annotations

from longqa.ask.analysis.asked import read
from longqa.ask.answer import fields
from longqa.ask.answer import focus
from longqa.ask.context import Passage
from longqa.tree_types import Node

INFOBOX = """Established | June 21, 1788

Location | Washington, D.C., United States

Authorized by | United States Constitution

Judge term length

Life tenure

Number of positions

9, by statute"""

DOC = "Supreme Court of the United States"


def context(*texts: str, adjacent: bool = False) -> list[focus.Sentence]:
    """One passage per text; with `adjacent`, each text's leaf starts right where the previous ended."""
    passages, at = [], 0
    for n, text in enumerate(texts, 1):
        leaf = Node("paragraph", text=text, id=n, doc_id=1, char_start=at, char_end=at + len(text))
        at = at + len(text) + (2 if adjacent else 500)
        passages.append(Passage(n, n, 1, DOC, "scotus.pdf", "", 1, 1, 1.0, text, len(text.split()), [n], node=leaf))
    return focus.context_sentences(passages)


def matched(question: str, *texts: str, adjacent: bool = False) -> list[str]:
    found = fields.match(read(question), context(*texts, adjacent=adjacent))
    return [] if found is None else [found[1].text]


def test_the_field_whose_label_names_what_is_asked_gives_the_value_of_the_kind_wanted():
    assert matched("how many supreme court justice's are there", INFOBOX) == ["9"]
    assert matched("what is the term of office for the supreme court", INFOBOX) == ["Life tenure"]
    assert matched("where is the supreme court of the united states located", INFOBOX) == ["Washington"]
    assert matched("when was the supreme court established", INFOBOX) == ["June 21, 1788"]


def test_no_field_answers_when_no_label_names_the_question_or_two_labels_do():
    # "appointed" is said by no label; the document's own name ("court") is not what is asked
    assert matched("when were the current supreme court justices appointed", INFOBOX) == []
    tied = INFOBOX + "\n\nJudge pay grade\n\nLevel IV"
    assert matched("what is known about a judge", tied) == []  # "judge": two labels say it
    # the value must be of the kind asked for: "how many" wants a figure, not "Life tenure"
    assert matched("how many terms does a judge serve", INFOBOX) == []
    # a table's header over its unit note is not a field: "thousands" is no count of shares
    assert matched("what is the total value of vested shares in 2012?", "Number of Shares\n\n(in thousands)") == []


def test_a_field_cut_between_two_paragraphs_is_read_across_them():
    first, second = INFOBOX.split("\n\nLife tenure")
    second = "Life tenure" + second
    assert matched("what is the term of office for the supreme court", first, second, adjacent=True) == ["Life tenure"]
    # paragraphs that are not next to each other in the document are not one field
    assert matched("what is the term of office for the supreme court", first, second) == []


def test_the_answer_stage_answers_from_the_field_and_quotes_its_value(tmp_path, monkeypatch):
    from tests.ask_support import build_store, make_pipeline
    from tests.fakes import FakeGenerator

    prose = ("The Supreme Court of the United States is the highest federal court of the United States. "
             "There are currently three living retired justices of the Supreme Court of the United States. "
             "In recent years, three justices have sat with several Courts of Appeals around the country.")
    doc = f"# {DOC}\n\n{INFOBOX}\n\n## History\n\n{prose}\n"
    db = build_store(tmp_path / "scotus.db", {"scotus.md": doc}, tmp_path)
    question = "how many supreme court justice's are there"
    result = make_pipeline(db, FakeGenerator()).answer(question)
    assert result.answer.startswith("9 [")
    quote = result.quotes[0]
    stored = db.execute("SELECT text FROM nodes WHERE id = ?", [quote.node_id]).fetchone()[0]
    assert stored[quote.char_start:quote.char_end] == quote.text and "9, by statute" in quote.text
    field = next(c for c in result.grounding.pool if c.text == "9")
    assert field.features["labelled_field"] == 1.0


def test_a_tight_budget_keeps_the_field_that_answers(tmp_path, monkeypatch):
    from tests.ask_support import build_store, make_pipeline

    # sentences saying the question's words, none of them the answer
    prose = " ".join(f"There are supreme court justice's clerks who heard {n} cases in term {n}." for n in range(3, 30))
    doc = f"# {DOC}\n\n{INFOBOX}\n\n## Cases\n\n{prose}\n"
    db = build_store(tmp_path / "scotus.db", {"scotus.md": doc}, tmp_path)
    question = "how many supreme court justice's are there"

    def context_text() -> str:
        # room for about two sentences: whatever ranks first is kept, and the budget's remainder
        # (filled by any sentence that fits) is too small for the field's line
        refined = make_pipeline(db, budget=25).retrieve_context(question)
        assert refined.passages and all(p.spans is not None for p in refined.passages)  # an excerpt
        return "\n".join(p.text for p in refined.passages)

    assert "9, by statute" in context_text() and "Number of positions" in context_text()
    monkeypatch.setattr(fields, "raise_match", lambda asked, found: None)
    assert "9, by statute" not in context_text()
