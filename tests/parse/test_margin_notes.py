"""Margin notes stay with their line: text printed in a page margin, smaller than the body and at
the height of a body line, joins that line's paragraph (before it when it stands left of the
paragraph's first line, after it otherwise). Real PDFs written with PyMuPDF."""

from __future__ import annotations

import pymupdf

from longqa.parse import parse_file
from tests.pdfgen import wrap

LEFT, RIGHT = 150, 480  # the text column; notes go at x 70 (left margin) or 500 (right margin)
PUMP = ("The pump is started from the control panel after the inlet valve has been opened and the casing "
        "has been vented of air. Check the pressure gauge before the motor is switched on.")
SEALS = ("The seals are inspected every month by the maintenance crew, who record the wear of each seal in "
         "the plant log and replace any seal whose wear exceeds the limit given in the annex.")
KEY_TEXT = "is the distance between the printed line number and the first character of the listing beside it."


class Page:
    """Paragraphs down a page's text column, with notes in the margins beside chosen lines."""

    def __init__(self, doc: pymupdf.Document):
        self.page = doc.new_page(width=595, height=842)
        self.y = 120.0

    def para(self, text: str, notes: dict[int, tuple[float, str]] | None = None, size: float = 10.0) -> None:
        for number, line in enumerate(wrap(text, size, False, RIGHT - LEFT)):
            self.y += size * 1.25
            self.page.insert_text((LEFT, self.y), line, fontsize=size, fontname="helv")
            if number in (notes or {}):
                x, note = notes[number]
                self.page.insert_text((x, self.y), note, fontsize=8 if size == 10.0 else size, fontname="helv")
        self.y += 12

    def alone(self, x: float, text: str) -> None:
        self.y += 30
        self.page.insert_text((x, self.y), text, fontsize=8, fontname="helv")
        self.y += 20


def texts(path) -> list[str]:
    return [block.text for block in parse_file(path).blocks]


def test_notes_join_the_paragraph_beside_them(tmp_path):
    doc = pymupdf.open()
    page = Page(doc)
    page.para(PUMP, {0: (70, "Since 2021")})
    page.para("numbersep=<dimension>", {0: (500, "10pt")})
    page.para(KEY_TEXT)
    page.para(SEALS, {2: (70, "See annex B")})
    page.alone(70, "Loose remark")
    page.para(PUMP.replace("pump", "fan"))
    doc.save(tmp_path / "manual.pdf")
    assert texts(tmp_path / "manual.pdf") == [
        "Since 2021 " + PUMP,  # left of the first line: read before it
        "numbersep=<dimension> 10pt",  # a key's default beside it, not a table row of its own
        KEY_TEXT,
        SEALS + " See annex B",  # beside a later line: after the paragraph, whose sentences stay whole
        "Loose remark",  # beside no line: a block of its own
        PUMP.replace("pump", "fan"),
    ]


def test_notes_in_blocks_of_their_own_join_too(tmp_path):
    """MuPDF makes a block of a note that stands farther off (a reference manual's dates)."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    y = 120.0
    for topic in ("pump", "fan", "valve"):
        for number, line in enumerate(wrap(PUMP.replace("pump", topic), 10, False, RIGHT - LEFT)):
            y += 12.5
            page.insert_text((LEFT, y), line, fontsize=10, fontname="helv")
        y += 12
    page.insert_text((40, 120 + 12.5), "Updated: 2020-12-03", fontsize=7, fontname="helv")
    doc.save(tmp_path / "dated.pdf")
    found = texts(tmp_path / "dated.pdf")
    assert found[0] == "Updated: 2020-12-03 " + PUMP and len(found) == 3


def test_a_table_column_and_line_numbers_are_no_notes(tmp_path):
    """A name beside a biography in the body's size is a table's first column, and numbers in the
    margin are line numbers: neither joins the text."""
    doc = pymupdf.open()
    page = Page(doc)
    page.para(PUMP, {0: (70, "Dana Lee")}, size=10.0 + 0.01)  # the same size as the text
    page.para(SEALS, {0: (120, "12")})
    doc.save(tmp_path / "report.pdf")
    found = texts(tmp_path / "report.pdf")
    assert not any(text.startswith("Dana Lee " + PUMP[:20]) or text.endswith("Dana Lee") for text in found), found
    assert not any(text.endswith(" 12") for text in found), found


def test_two_columns_are_no_margins(tmp_path):
    """On a two-column page the space beside one column is the other column: a small caption in
    the right column, level with a line of the left one, stays where it is."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 100.0
    for line in wrap(" ".join([PUMP, SEALS, KEY_TEXT, PUMP]), 10, False, 240):
        y += 12.5
        page.insert_text((50, y), line, fontsize=10, fontname="helv")
    y = 100.0
    for line in wrap(SEALS, 10, False, 240):
        y += 12.5
        page.insert_text((320, y), line, fontsize=10, fontname="helv")
    page.insert_text((330, 100 + 12.5 * 12), "Figure 2: the valve", fontsize=8, fontname="helv")
    doc.save(tmp_path / "paper.pdf")
    found = texts(tmp_path / "paper.pdf")
    assert "Figure 2: the valve" in found, found
