"""Every kind of question goes to the default reader, and every kind of reply is proven, on a small
operator guide written here in markdown (not the sample handbook): a count the text writes in words,
a yes/no question answered No and one answered Yes (each quoting its deciding sentence), a
dot-command, "summarise section N" (several quotes from that section), a how-to question (its step
sentences quoted), a fact with its unit, and a fact the guide lacks (exit 4, `found` false).
"""

from __future__ import annotations

import pytest

from longqa.store import open_db
from tests.command import run, run_json

pytestmark = pytest.mark.models

GUIDE = """# Harbour Pumping Station: Operator Guide

## 1. The station

The station lifts storm water from the low harbour district into the river. It has three intake
screens, each cleared by a raking arm. The wet well holds 420 cubic metres of water between the
start and stop levels.

## 2. Daily checks

Each morning the operator reads the well level and the run hours of both pumps. The standby pump
may be started by hand from the control panel at any time. The main pump must not be started while
the intake screens are blocked.

## 3. Logging

The station computer keeps every reading for ninety days. To list the stored readings, type
.readings at the console prompt. To export them as a spreadsheet, type .export followed by a file
name. The log is copied to the district office every night at midnight. A reading older than ninety
days is removed from the computer but kept at the district office.

## 4. Replacing a raking arm blade

First, stop the raking arm with the red isolator switch on the screen housing. Next, unbolt the
worn blade from the arm with a 19 mm spanner. Then fit the new blade and tighten its four bolts.
Finally, restore the isolator and run the arm once to check that the blade clears the screen.
"""

ASKED = {
    "count": "How many intake screens does the station have?",
    "no": "Can the main pump be started while the intake screens are blocked?",
    "yes": "Can the standby pump be started by hand?",
    "command": "Which console command lists the stored readings?",
    "summary": "Summarise section 3",
    "how": "How do I replace a raking arm blade?",
    "unit": "How much water does the wet well hold?",
    "absent": "What is the name of the station's chief engineer?",
}


@pytest.fixture(scope="module")
def guide_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("guide")
    path = folder / "pumping_station_guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    db = folder / "guide.db"
    result = run("ingest", path, db=db)
    assert result.returncode == 0, result.stderr
    return db


def _asked(db, key: str, code: int = 0) -> dict:
    result, data = run_json("ask", ASKED[key], db=db, env={"LONGQA_MODEL": ""})  # the default reader
    assert result.returncode == code, (data.get("answer"), result.stderr)
    for quote in data["quotes"]:  # every quote is an exact slice of the stored text
        stored = open_db(db).execute("SELECT text FROM nodes WHERE id = ?", [quote["node_id"]]).fetchone()[0]
        assert stored[quote["char_start"]:quote["char_end"]] == quote["text"]
    return data


@pytest.mark.parametrize("key, answer, quoted", [
    ("count", "three", "three intake screens"),  # a count the text writes in words
    ("no", "No", "must not be started while the intake screens are blocked"),  # each verdict quotes
    ("yes", "Yes", "standby pump may be started by hand"),  # the sentence that decides it
    ("command", ".readings", "type .readings at the console prompt"),  # a dot-command keeps its dot
    ("unit", "420 cubic metres", "holds 420 cubic metres"),  # a fact with its unit
])
def test_a_short_answer_and_the_sentence_that_proves_it(guide_db, key, answer, quoted):
    data = _asked(guide_db, key)
    assert data["answer"].startswith(answer), data["answer"]
    assert quoted in data["quotes"][0]["text"], data["quotes"]


def test_a_summary_quotes_several_sentences_of_that_section(guide_db):
    data = _asked(guide_db, "summary")
    assert len(data["quotes"]) >= 2, data["answer"]
    assert all("Logging" in quote["section"] for quote in data["quotes"]), data["quotes"]


def test_a_how_to_question_quotes_its_steps(guide_db):
    data = _asked(guide_db, "how")
    said = " ".join(quote["text"] for quote in data["quotes"])
    assert len(data["quotes"]) >= 2, data["answer"]
    assert "isolator switch" in said or "unbolt the worn blade" in said, said


def test_a_fact_the_guide_lacks_is_declined(guide_db):
    data = _asked(guide_db, "absent", code=4)
    assert data["found"] is False and data["quotes"] == []
    assert data["answer"] in (None, "The documents do not say.")  # nothing relevant, or the reader's refusal
