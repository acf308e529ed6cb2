"""The sample handbook as a scan: its pages as pictures with no text layer, read by OCR, then asked the
quick-start question with the real models. The answer and its quote are those of the text handbook,
each quote an exact slice of the stored text, and the citation names its page as read by OCR.

Slow (OCR of seven pages, then llama.cpp); needs the `ocr` extra (skipped without it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from longqa.parse import ocr
from longqa.store import open_db
from tests.command import run_json
from tests.pdfgen import scanned_pdf

pytestmark = [pytest.mark.models,
              pytest.mark.skipif(not ocr.available(), reason="the OCR engine is the `ocr` extra: "
                                                             "pip install 'longqa[ocr]'")]
REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "kestrel_valley_handbook.pdf"
SAMPLE_QUESTION = "How long can the standby generators run the works before the diesel runs out?"


def asked(pdf: Path, db: Path) -> dict:
    result, out = run_json("ingest", pdf, db=db)
    assert result.returncode == 0, result.stderr
    result, data = run_json("ask", SAMPLE_QUESTION, db=db)
    assert result.returncode == 0, result.stderr
    for quote in data["quotes"]:
        stored = open_db(db).execute("SELECT text FROM nodes WHERE id = ?", [quote["node_id"]]).fetchone()[0]
        assert stored[quote["char_start"]:quote["char_end"]] == quote["text"]
    return out["documents"][0] | {"answer": data["answer"], "quotes": [q["text"] for q in data["quotes"]],
                                  "sections": [q["section"] for q in data["quotes"]],
                                  "pages": [q["page"] for q in data["quotes"]]}


def test_the_scanned_handbook_answers_the_quick_start_question_as_the_text_one(tmp_path):
    scan = scanned_pdf(SAMPLE, tmp_path / "kestrel_valley_handbook_scan.pdf", dpi=200)
    text = asked(SAMPLE, tmp_path / "text.db")
    scanned = asked(scan, tmp_path / "scan.db")
    assert scanned["ocr_pages"] == [1, 2, 3, 4, 5, 6, 7] and text["ocr_pages"] == []
    # The passage numbers may differ: the text handbook's sections come from its bookmarks, the
    # scan's (which has none) from its headings, so the passages around the answer are cut apart.
    assert re.sub(r" \[\d+\]", "", scanned["answer"]) == re.sub(r" \[\d+\]", "", text["answer"])
    assert scanned["quotes"] == text["quotes"]
    assert scanned["sections"] == text["sections"] and scanned["pages"] == text["pages"]
