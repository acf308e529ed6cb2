"""Each installed profile through the real llama.cpp path on a small manual written here as a PDF:
a figure question gets the figure and its quote, a yes/no question Yes or No and its sentence, an
absent fact exit 4. The reader profiles are skipped, with the reason, where their extra is absent.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from longqa.models import profiles
from longqa.models.packaged import installed
from longqa.store import open_db
from tests.command import drained, run, run_json
from tests.pdfgen import H, P, make_pdf

pytestmark = pytest.mark.models

MANUAL = [
    [H("Riverside Community Pool: Operating Manual", 18),
     H("1. Opening hours"),
     P("The pool opens at 6:30 in the morning on weekdays and at 8:00 on weekends. Lane swimming ends "
       "at 21:00, and the building closes thirty minutes later."),
     H("2. Water treatment"),
     P("The main pool holds 850 cubic metres of water. Its filters are backwashed every Monday and "
       "Thursday before opening. Free chlorine is kept between 1.0 and 3.0 milligrams per litre, and "
       "the water is tested every two hours while the pool is open."),
     H("3. Safety"),
     P("Two lifeguards are on duty whenever the main pool is open. Diving is not allowed in the "
       "shallow end, which is 0.9 metres deep. The first-aid room is next to the reception desk.")],
]
FIGURE = "How much water does the main pool hold?"
YES_NO = "Is diving allowed in the shallow end?"
ABSENT = "What does a season ticket for the sauna cost?"


@pytest.fixture(scope="module")
def manual_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("manual")
    pdf = make_pdf(folder / "pool_manual.pdf", MANUAL)
    db = folder / "manual.db"
    result = run("ingest", pdf, db=db)
    assert result.returncode == 0, result.stderr
    return db


def _profile_or_skip(name: str) -> str:
    profile = profiles.named(name)
    if not installed(profile):
        pytest.skip(f"{name} is not installed (pip install 'longqa[{profile.extra}]')")
    return name


def _exact(db, quote) -> None:
    stored = open_db(db).execute("SELECT text FROM nodes WHERE id = ?", [quote["node_id"]]).fetchone()[0]
    assert stored[quote["char_start"]:quote["char_end"]] == quote["text"]


@pytest.mark.parametrize("name", [n for n, p in profiles.PROFILES.items() if p.reads])
def test_a_reader_answers_figures_yes_no_and_absent_facts(manual_db, name):
    model = _profile_or_skip(name)
    result, data = run_json("ask", FIGURE, "-m", model, db=manual_db)
    assert result.returncode == 0, result.stderr
    assert data["answer"].startswith("850 cubic metres"), data["answer"]
    assert "850 cubic metres of water" in data["quotes"][0]["text"]
    _exact(manual_db, data["quotes"][0])

    result, data = run_json("ask", YES_NO, "-m", model, db=manual_db)
    assert result.returncode == 0, result.stderr
    assert data["answer"].startswith("No"), data["answer"]
    assert "Diving is not allowed in the shallow end" in data["quotes"][0]["text"]

    absent = run("ask", ABSENT, "-m", model, db=manual_db)
    assert absent.returncode == 4, (absent.stdout, absent.stderr)


def test_the_default_answers_the_same_manual(manual_db):
    default = {"LONGQA_MODEL": ""}  # the tests' own default is the smallest profile (conftest)
    result, data = run_json("ask", FIGURE, db=manual_db, env=default)
    assert result.returncode == 0, result.stderr
    assert data["answer"].startswith("850 cubic metres"), data["answer"]
    assert "850 cubic metres of water" in data["quotes"][0]["text"]
    _exact(manual_db, data["quotes"][0])
    result, data = run_json("ask", YES_NO, db=manual_db, env=default)
    assert result.returncode == 0, result.stderr
    assert data["answer"].startswith("No"), data["answer"]
    assert "Diving is not allowed in the shallow end" in data["quotes"][0]["text"]
    absent = run("ask", ABSENT, db=manual_db, env=default)
    assert absent.returncode == 4, (absent.stdout, absent.stderr)


def test_the_structurer_answers_figures_from_spans(manual_db):
    result, data = run_json("ask", FIGURE, "-m", "gemma-3-270m", db=manual_db)
    assert result.returncode == 0, result.stderr
    assert data["quotes"] and data["unsure"] in (True, False)  # a chooser's pick, shown with its confidence
    _exact(manual_db, data["quotes"][0])


def _ask_on_terminal(db, *args: str) -> tuple[str, int]:
    """`longqa ask ARGS` with stdout on a pseudo-terminal: (what the terminal received, exit code)."""
    controller, terminal = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("LONGQA_DEBUG", "LONGQA_MODEL")}
    process = subprocess.Popen([sys.executable, "-m", "longqa", "ask", *args, "-d", str(db)],
                               stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.DEVNULL, env=env)
    os.close(terminal)
    return drained(controller), process.wait(60)


def test_a_readers_words_show_dimmed_as_written_then_give_way_to_the_proven_answer(manual_db):
    model = _profile_or_skip(profiles.QWEN_05B.name)  # the reader CI installs
    shown, code = _ask_on_terminal(manual_db, FIGURE, "-m", model)
    assert code == 0, shown
    draft, _, after = shown.partition("\x1b[J")  # the wipe: back to the draft's first row, cleared to the end
    assert "\x1b[2m" in draft and "850" in draft  # the reply, dimmed, before it was proven
    assert after.lstrip().startswith("850 cubic metres [")  # the proven answer in its place
    piped = run("ask", FIGURE, "-m", model, db=manual_db)
    assert piped.stdout.startswith("850 cubic metres [") and "\x1b" not in piped.stdout  # a pipe gets the answer only
