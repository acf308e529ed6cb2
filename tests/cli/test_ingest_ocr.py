"""`longqa ingest` of scanned PDFs through the real command: pages read by OCR are recorded and shown
("p. 2, OCR"), a resumed ingest does not read them again, and kill -9 in the middle of reading a
scan leaves no half document. Needs the `ocr` extra (skipped without it)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from longqa.ingest import Ingestor
from longqa.parse import ocr
from longqa.store import open_db
from tests.command import run, run_json
from tests.pdfgen import H, P, make_pdf, scanned_pdf, sentence

pytestmark = pytest.mark.skipif(not ocr.available(), reason="the OCR engine is the `ocr` extra: "
                                                              "pip install 'longqa[ocr]'")


TOPICS = ["Raw water intake", "Storage", "Treatment", "Emergencies"]


def source(tmp_path, pages: int = 3):
    """A numbered heading atop each page over enough paragraphs for it to stand out as one."""
    return make_pdf(tmp_path / "text.pdf", [
        [H(f"{n}. {TOPICS[n - 1]}")] + [P(sentence(f"{TOPICS[n - 1].lower()} part {k}", 2)) for k in range(1, 7)]
        for n in range(1, pages + 1)], title="Works Manual")


def test_ocr_pages_are_recorded_and_shown(tmp_path, db_path):
    mixed = scanned_pdf(source(tmp_path), tmp_path / "mixed.pdf", pages={2}, metadata=True)
    result, out = run_json("ingest", mixed, db=db_path)
    assert result.returncode == 0, result.stderr
    assert out["documents"][0]["ocr_pages"] == [2]
    result = run("ingest", mixed, "--force", db=db_path)
    assert result.returncode == 0 and result.stderr.strip().endswith("1 updated (1 page read by OCR)"), result.stderr

    _, docs = run_json("inspect", "docs", db=db_path)
    assert docs[0]["ocr_pages"] == [2] and docs[0]["pages"] == 3
    table = run("inspect", "docs", db=db_path).stdout
    assert "3 (1 OCR)" in table
    tree = run("inspect", "tree", "mixed.pdf", db=db_path).stdout
    lines = {line.split("  ")[0].strip("│├└─ "): line for line in tree.splitlines()}
    assert "p. 2, OCR" in lines["2. Storage"]
    assert "OCR" not in lines["1. Raw water intake"] and "OCR" not in lines["3. Treatment"]
    assert "pp. 1–3, OCR on p. 2" in tree.splitlines()[0]
    _, data = run_json("inspect", "tree", "mixed.pdf", db=db_path)
    assert [child["ocr_pages"] for child in data["children"]] == [[], [2], []]


def test_a_bad_ocr_mode_is_a_usage_error(tmp_path, db_path):
    result = run("ingest", source(tmp_path), "--ocr", "sometimes", db=db_path)
    assert result.returncode == 2 and "auto, always, never" in result.stderr


def test_a_resumed_ingest_does_not_read_stored_scans_again(tmp_path, monkeypatch):
    scan = scanned_pdf(source(tmp_path, 1), tmp_path / "scan.pdf", dpi=150)
    read = []
    real = ocr.read_image
    monkeypatch.setattr("longqa.parse.pdf.read_image", lambda *args: read.append(1) or real(*args))
    ingestor = Ingestor(db=open_db(tmp_path / "store.db"))
    first = ingestor.ingest(scan)
    assert first.status == "added" and first.ocr_pages == [1] and read == [1]
    again = ingestor.ingest(scan)
    assert again.status == "skipped" and again.ocr_pages == [1] and read == [1]


def test_kill_9_while_a_scan_is_read_leaves_no_half_document(tmp_path, db_path):
    scan = scanned_pdf(source(tmp_path, 4), tmp_path / "scan.pdf")
    argv = [sys.executable, "-m", "longqa", "ingest", str(scan), "-d", str(db_path), "--nice", "0"]
    env = {k: v for k, v in os.environ.items() if k != "LONGQA_DEBUG"}
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 120
    while not db_path.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    time.sleep(3.0)  # the engine loads and reads its first pages: four pages take longer than this
    if process.poll() is not None:
        pytest.skip("the ingest finished before it could be killed (a fast machine)")
    process.send_signal(signal.SIGKILL)
    process.wait()
    db = open_db(db_path)
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0
    result, out = run_json("ingest", scan, db=db_path)
    assert result.returncode == 0 and out["documents"][0]["status"] == "added"
    assert out["documents"][0]["ocr_pages"] == [1, 2, 3, 4]
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal size set the Linux way")
def test_a_terminal_shows_a_scan_being_read(tmp_path, db_path):
    """The progress line names the file with "(OCR)" while its pages are read, and counts them."""
    from tests.cli.test_ingest_progress import ingest_on_terminal

    scan = scanned_pdf(source(tmp_path, 2), tmp_path / "scan.pdf", dpi=150)
    screen, stdout, code = ingest_on_terminal(str(scan), "-d", str(db_path))
    assert code == 0 and stdout == ""
    assert "scan.pdf (OCR)" in screen, screen[-600:]
    assert re.search(r"1/1 files, 2 pages", screen), screen[-600:]
    assert screen.rstrip().endswith("1 added (2 pages read by OCR)")
