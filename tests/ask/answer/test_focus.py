"""The reader's window (ask/answer/focus.py) on a real store: which sentences it reads and how
they are laid out. A pronoun's sentence comes with the sentence that names what it stands for, and
a passage spanning several sections names the section of each run of sentences."""

from __future__ import annotations

from longqa import tokens
from longqa.ask.answer import focus
from longqa.ask.context import Passage, passage_text
from longqa.ask.settings import DEFAULTS, applied
from longqa.store.nodes import load_tree
from longqa.structure.tree import walk
from tests.ask_support import build_store
from tests.fakes import FakeEmbedder

MANUAL = """# Boiler Room Manual

## Feed Pump

The feed pump sits on the north wall beside the water softener. It draws 40 watts at full speed and
starts when the tank level falls below the lower mark. The pump was replaced in the spring.

## Burner

The burner lights within 5 seconds of a heat demand. Its fan then runs at full speed for a minute.
"""


def whole_document(tmp_path) -> Passage:
    db = build_store(tmp_path / "manual.db", {"manual.md": MANUAL}, tmp_path, FakeEmbedder())
    doc_id = db.execute("SELECT id FROM documents").fetchone()[0]
    root = load_tree(db, doc_id)
    text = passage_text(root)
    return Passage(n=1, node_id=root.id, doc_id=doc_id, doc=root.title, doc_path="manual.md", section="",
                   page_start=1, page_end=1, score=1.0, text=text, tokens=tokens.count(text),
                   leaf_ids=[n.id for n in walk(root) if n.is_leaf], node=root)


def test_refers_back_by_pronoun_or_demonstrative():
    assert focus.refers_back("It draws 40 watts at full speed.")
    assert focus.refers_back("Prior to the upgrade, they replaced the valves.")
    assert focus.refers_back("These settings apply to every printer.")
    assert not focus.refers_back("The burner lights within 5 seconds of a heat demand.")
    assert not focus.refers_back("The valve closes when the pressure, measured at the outlet of the main supply, reaches its limit.")


def test_a_pronoun_sentence_brings_the_sentence_naming_its_subject(tmp_path):
    found = focus.context_sentences([whole_document(tmp_path)])
    focus.score("How many watts at full speed?", found, None)
    best = max(found, key=lambda s: s.score)
    assert best.text.startswith("It draws 40 watts")
    before = found[best.order - 1]
    assert before.text.startswith("The feed pump sits")
    room = tokens.count(best.text) + tokens.count(before.text) + 2
    with_subject = focus.select(found, room, spread=False, antecedents=True)
    assert [s.text for s in with_subject] == [before.text, best.text]
    # Without: the next best sentence (another section's "full speed") takes the subject's place.
    alone = [s.text for s in focus.select(found, room, spread=False, antecedents=False)]
    assert best.text in alone and before.text not in alone and len(alone) == 2
    # A window too small for both keeps the best sentence alone, as before.
    assert focus.select(found, 3, spread=False, antecedents=True) == [best]


def test_sentences_from_several_sections_are_shown_under_their_titles(tmp_path):
    passage = whole_document(tmp_path)
    found = focus.context_sentences([passage])
    chosen = [s for s in found if s.text.startswith(("It draws", "The burner lights"))]
    shown = focus.render(chosen, subsections=True).splitlines()
    assert shown == ["[1] Boiler Room Manual (p. 1)", "## Feed Pump", chosen[0].text, "## Burner",
                     chosen[1].text]
    assert "##" not in focus.render(chosen, subsections=False)
    # None reads the setting: every prompt a reader is given for one question renders alike.
    with applied(DEFAULTS.with_values({"answer.subsection_titles": False})):
        assert focus.render(chosen) == focus.render(chosen, subsections=False)
    with applied(DEFAULTS.with_values({"answer.subsection_titles": True})):
        assert focus.render(chosen) == focus.render(chosen, subsections=True)
