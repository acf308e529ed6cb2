"""Citations name the pages OCR read (ask/context.py): "p. 2, OCR" where every cited page was a
scan, "OCR on p. 3" where only some were, nothing where none was."""

from __future__ import annotations

from longqa.ask.context import Passage, Quote


def _passage(start: int, end: int, ocr: set[int]) -> Passage:
    return Passage(n=1, node_id=1, doc_id=1, doc="Scanned Manual", doc_path="/docs/scan.pdf", section="1. Intro",
                   page_start=start, page_end=end, score=1.0, text="text", tokens=1, ocr_pages=frozenset(ocr))


def test_a_citation_says_which_of_its_pages_ocr_read():
    assert _passage(2, 2, {2}).pages == "p. 2, OCR"
    assert _passage(2, 3, {3}).pages == "pp. 2-3, OCR on p. 3"
    assert _passage(2, 2, set()).pages == "p. 2"
    passage = _passage(2, 3, {2, 3})
    assert Quote("text", passage, 1, 0, 4, 3, 3).pages == "p. 3, OCR"
    assert "(pp. 2-3, OCR)" in passage.header()
