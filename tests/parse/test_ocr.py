"""OCR of image-only PDF pages (longqa/parse/ocr.py, parse/pdf.py): real PDFs written with PyMuPDF,
their pages turned into pictures of themselves as a scanner would, read back by the real engine.

Tests that run the engine need the `ocr` extra (`pip install 'longqa[ocr]'`, as .ci/run does) and
are skipped without it; those that check what happens without it, and the measuring and layout
helpers, run everywhere.
"""

from __future__ import annotations

import difflib
import sys

import pymupdf
import pytest

from longqa.config import Limits
from longqa.errors import InputError
from longqa.parse import ocr, parse_file
from longqa.parse.ocr import OcrLine, Styles, measure, page_dict
from longqa.parse.pdf_page import page_blocks
from longqa.store.documents import ocr_label, page_ranges, parse_page_ranges
from tests.pdfgen import H, P, make_pdf, scanned_pdf

needs_engine = pytest.mark.skipif(not ocr.available(), reason="the OCR engine is the `ocr` extra: "
                                                                "pip install 'longqa[ocr]'")

INTAKE = ("Raw water enters through a side-channel intake on the north bank of the river. Coarse bar "
          "screens with 40 mm spacing stop branches, and band screens with 6 mm mesh remove leaves.")
STORAGE = ("From the intake, four low-lift pumps move water to the reservoir, which holds about 1,900 "
           "megalitres, enough for roughly 30 days of supply at average demand.")
POWER = ("The works takes power from two independent feeders. If both fail, two standby diesel generators "
         "start automatically and take the load within 45 seconds.")


def words(text: str) -> list[str]:
    return text.split()


def accuracy(original: str, read: str) -> float:
    a, b = words(original), words(read)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(a)


def handbook(tmp_path):
    """Three pages: a title, numbered headings and a paragraph under each."""
    return make_pdf(tmp_path / "text.pdf", [
        [H("Kestrel Works Handbook", size=20), H("1. Raw Water Intake"), P(INTAKE)],
        [H("2. Raw Water Storage"), P(STORAGE)],
        [H("3. Loss of Mains Power"), P(POWER)],
    ], footer="Kestrel Works Handbook - page {n}")


# --- without the engine ------------------------------------------------------------------------


def test_page_ranges_round_trip():
    assert page_ranges([9, 3, 7, 8]) == "3,7-9"
    assert page_ranges([]) == ""
    assert parse_page_ranges("3,7-9") == {3, 7, 8, 9}
    assert parse_page_ranges("") == set() and parse_page_ranges(None) == set()


def test_ocr_label_says_which_pages_of_a_span_were_read_by_ocr():
    assert ocr_label(12, 12, {12}) == ", OCR"
    assert ocr_label(11, 13, {11, 12, 13}) == ", OCR"
    assert ocr_label(11, 13, {12}) == ", OCR on p. 12"
    assert ocr_label(11, 14, {12, 13}) == ", OCR on pp. 12-13"
    assert ocr_label(11, 13, {20}) == ""


def test_measure_reads_a_font_size_from_the_ink(tmp_path):
    """The size above the baseline of rendered type is its font size, within a tenth, whether the line
    has capitals or only short letters."""
    for size in (10.0, 14.0, 20.0):
        for text in ("Raw water storage", "summer can raise errors"):
            doc = pymupdf.open()
            page = doc.new_page(width=400, height=100)
            page.insert_text((20, 60), text, fontsize=size, fontname="tiro")
            dpi = 200
            gray = ocr.render(page, dpi)
            found = measure(gray < ocr.DARK, text)
            assert found is not None
            share, left, right, top, baseline, measured = found
            points = measured * 72 / dpi
            assert abs(points - size) <= 0.12 * size, (text, size, points)
            assert abs(baseline * 72 / dpi - 60) <= 1.0  # the baseline the text was set on
            assert 0 < share < 0.5
    assert measure(gray[:0] < ocr.DARK, "x") is None


def test_measure_reads_its_own_line_in_a_box_that_reaches_into_rules_and_neighbours(tmp_path):
    """The engine's box is the line widened on every side (by about 0.8 of its height): in a table
    with rules between its rows, or in tight type, it takes in the rules and the lines above and
    below. The size and baseline measured are still the line's own, as on a line alone."""
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=200)
    rows = [("Frito-Lay North America", "15"), ("Quaker Foods North America", "305"), ("Latin America", "21")]
    for n, (label, value) in enumerate(rows):
        baseline = 60 + 14 * n
        page.insert_text((20, baseline), label, fontsize=8, fontname="helv")
        page.insert_text((200, baseline), value, fontsize=8, fontname="helv")
        page.draw_line((15, baseline + 3.5), (260, baseline + 3.5), width=0.8)  # a rule under each row
    for n, text in enumerate(["Percentage gain, by region, geography", "Exchange Translation, Africa"]):
        page.insert_text((20, 130 + 9 * n), text, fontsize=8, fontname="helv")  # 8 pt type set 9 pt apart
    dpi, scale = 200, 200 / 72
    gray = ocr.render(page, dpi)
    cases = [(20, 60 + 14 * n, label) for n, (label, _) in enumerate(rows)]
    cases += [(200, 60 + 14 * n, value) for n, (_, value) in enumerate(rows)]
    cases += [(20, 130, "Percentage gain, by region, geography"), (20, 139, "Exchange Translation, Africa")]
    for x, baseline, text in cases:
        width = pymupdf.get_text_length(text, fontname="helv", fontsize=8)
        top, bottom = baseline - 6, baseline + 1.7  # the type's core, widened as the engine's box is
        grow = 0.8 * (bottom - top)
        box = gray[int((top - grow) * scale):int((bottom + grow) * scale) + 1,
                   int((x - grow) * scale):int((x + width + grow) * scale) + 1]
        found = measure(box < ocr.DARK, text)
        assert found is not None
        share, left, right, top_px, baseline_px, measured = found
        y0 = int((top - grow) * scale)
        assert abs(measured / scale - 8) <= 0.12 * 8, (text, measured / scale)
        assert abs((y0 + baseline_px) / scale - baseline) <= 1.0, (text, (y0 + baseline_px) / scale)


def _line(text, x0, baseline, measure_, ink=0.12):
    return OcrLine(text, x0, x0 + 6 * len(text), baseline - 0.7 * measure_, baseline, measure_, ink)


def test_body_lines_get_one_size_and_headings_their_own():
    body = [_line(f"body line number {i} of the paragraph text here", 72, 100 + 14 * i, 11.0 + (i % 3) * 0.3)
            for i in range(12)]
    heading = _line("2. Raw Water Storage", 72, 300, 14.6, ink=0.25)
    subheading = _line("2.1 Intake", 72, 330, 12.7, ink=0.24)
    styles = Styles.of(body + [heading, subheading])
    assert {styles.size(line) for line in body} == {11.5}  # their median, to the half point
    assert styles.size(heading) == 14.5 and styles.size(subheading) == 12.5
    assert styles.bold(heading) and not any(styles.bold(line) for line in body)


def test_page_dict_makes_paragraphs_of_close_lines_and_rows_of_cells():
    lines = [
        _line("2. Raw Water Storage", 72, 100, 14.5, ink=0.25),
        _line("From the intake four low-lift pumps move water to the reservoir which", 72, 130, 11.0),
        _line("holds about 1,900 megalitres at average demand.", 72, 144, 11.0),
        _line("A second paragraph starts after a blank line.", 72, 180, 11.0),
        _line("Parameter", 72, 220, 11.0), _line("Limit", 300, 220, 11.0),
        _line("Turbidity", 72, 234, 11.0), _line("0.3 NTU", 300, 234, 11.0),
    ]
    styles = Styles.of(lines)
    blocks = [item.block for item in page_blocks(page_dict(lines, styles, 612, 792), 4)]
    texts = [block.text for block in blocks]
    assert texts[0] == "2. Raw Water Storage" and blocks[0].bold and blocks[0].size > blocks[1].size
    assert texts[1] == ("From the intake four low-lift pumps move water to the reservoir which holds about "
                        "1,900 megalitres at average demand.")
    assert texts[2] == "A second paragraph starts after a blank line."
    assert texts[3] == "Parameter | Limit\nTurbidity | 0.3 NTU" and blocks[3].table
    assert {block.page for block in blocks} == {4}


@pytest.fixture
def no_engine(monkeypatch):
    """As if the `ocr` extra were not installed."""
    monkeypatch.setattr(ocr, "_engine", None)
    monkeypatch.setitem(sys.modules, "rapidocr", None)  # import rapidocr raises ImportError


def test_a_scan_without_the_engine_fails_in_one_line_naming_the_extra(tmp_path, no_engine):
    scan = scanned_pdf(handbook(tmp_path), tmp_path / "scan.pdf")
    with pytest.raises(InputError) as caught:
        parse_file(scan)
    assert caught.value.reason == ("no text layer (scanned or image-only PDF); reading it needs OCR: "
                                   "pip install 'longqa[ocr]'")
    assert "\n" not in str(caught.value)


def test_a_scanned_page_without_the_engine_is_named_and_the_rest_stored(tmp_path, no_engine):
    mixed = scanned_pdf(handbook(tmp_path), tmp_path / "mixed.pdf", pages={2})
    parsed = parse_file(mixed)
    text = "\n".join(block.text for block in parsed.blocks)
    assert "Coarse bar screens" in text and "standby diesel generators" in text and "low-lift" not in text
    assert parsed.ocr_pages == []
    assert parsed.warnings == ["page 2: no text layer (scanned or image-only), left out (reading it needs OCR: "
                               "pip install 'longqa[ocr]')"]


def test_ocr_never_names_the_scanned_pages_it_leaves_out(tmp_path, monkeypatch):
    monkeypatch.setattr("longqa.parse.pdf.read_image", lambda *a: pytest.fail("OCR ran under --ocr never"))
    mixed = scanned_pdf(handbook(tmp_path), tmp_path / "mixed.pdf", pages={2, 3})
    parsed = parse_file(mixed, Limits(ocr="never"))
    assert parsed.warnings == ["pages 2 and 3: no text layer (scanned or image-only), left out (--ocr never)"]
    with pytest.raises(InputError, match=r"no text layer \(scanned or image-only PDF; --ocr never leaves it unread\)"):
        parse_file(scanned_pdf(handbook(tmp_path), tmp_path / "scan.pdf"), Limits(ocr="never"))


def test_a_blank_scanned_page_is_named_not_dropped_silently(tmp_path):
    """A white page is known blank without the engine; a scan of nothing but blank pages fails."""
    source = make_pdf(tmp_path / "text.pdf", [[H("1. Intake"), P(INTAKE)], []])
    page_two = scanned_pdf(source, tmp_path / "scan.pdf", pages={2})
    parsed = parse_file(page_two)
    assert parsed.warnings == ["page 2: OCR found no text (a blank page, or an image it cannot read); left out"]
    assert parsed.ocr_pages == [] and parsed.pages == 2
    blank = scanned_pdf(make_pdf(tmp_path / "blank.pdf", [[], []]), tmp_path / "blank-scan.pdf")
    with pytest.raises(InputError) as caught:
        parse_file(blank)
    assert caught.value.reason == "no text layer (scanned or image-only PDF), and OCR found no text on its 2 pages with images"


def test_a_damaged_image_fails_in_one_line_unless_allowed(tmp_path, monkeypatch):
    scan = scanned_pdf(handbook(tmp_path), tmp_path / "scan.pdf")
    with pymupdf.open(scan) as doc:
        xref = doc[1].get_images()[0][0]
        doc.update_stream(xref, b"\x00broken" * 40, compress=False)
        doc.save(tmp_path / "damaged.pdf")
    read = []
    monkeypatch.setattr("longqa.parse.pdf.read_image", lambda gray, rect: read.append(rect) or
                        [OcrLine("A line of text read from the page.", 72, 300, 100, 110, 11.0)])
    with pytest.raises(InputError) as caught:
        parse_file(tmp_path / "damaged.pdf")
    assert caught.value.reason.startswith("damaged PDF (page 2: its image is damaged, MuPDF: ")
    assert caught.value.reason.endswith("; --allow-damaged stores what can be read)")
    assert len(read) == 1  # it stops at the damaged page: no time spent reading the rest
    parsed = parse_file(tmp_path / "damaged.pdf", Limits(allow_damaged=True))
    assert parsed.ocr_pages == [1, 2, 3]
    assert [w.split(" (MuPDF")[0] for w in parsed.warnings] == ["damaged PDF: page 2's image is damaged"]


# --- with the engine ---------------------------------------------------------------------------


@needs_engine
def test_a_scan_reads_as_its_text_layer_did(tmp_path):
    """Headings by size and weight, paragraphs whole, the running footer left out, pages kept."""
    text = parse_file(handbook(tmp_path))
    scan = parse_file(scanned_pdf(handbook(tmp_path), tmp_path / "scan.pdf", dpi=150))
    assert scan.ocr_pages == [1, 2, 3] and scan.pages == 3 and scan.warnings == []
    assert scan.title == text.title == "Kestrel Works Handbook"
    headings = [(b.page, b.text) for b in scan.blocks if b.bold]
    assert headings == [(1, "Kestrel Works Handbook"), (1, "1. Raw Water Intake"), (2, "2. Raw Water Storage"),
                        (3, "3. Loss of Mains Power")]
    body = [b for b in scan.blocks if not b.bold]
    assert [b.page for b in body] == [1, 2, 3]
    for block, original in zip(body, (INTAKE, STORAGE, POWER)):
        assert accuracy(original, block.text) >= 0.95, block.text
    assert len({b.size for b in body}) == 1 and all(b.size < h.size for h in scan.blocks if h.bold for b in body)
    assert not any("Kestrel Works Handbook - page" in b.text for b in scan.blocks)


@needs_engine
def test_a_scanned_page_among_text_pages_keeps_its_number(tmp_path):
    text = parse_file(handbook(tmp_path))
    mixed = parse_file(scanned_pdf(handbook(tmp_path), tmp_path / "mixed.pdf", pages={2}))
    assert mixed.ocr_pages == [2] and mixed.warnings == []
    assert [b.text for b in mixed.blocks if b.page != 2] == [b.text for b in text.blocks if b.page != 2]
    page_two = " ".join(b.text for b in mixed.blocks if b.page == 2)
    assert accuracy("2. Raw Water Storage " + STORAGE, page_two) >= 0.95, page_two


@needs_engine
def test_ocr_always_reads_text_pages_too(tmp_path):
    parsed = parse_file(handbook(tmp_path), Limits(ocr="always"))
    assert parsed.ocr_pages == [1, 2, 3]
    assert accuracy(POWER, " ".join(b.text for b in parsed.blocks if b.page == 3)) >= 0.95


@needs_engine
def test_engine_loads_quietly(capfd):
    ocr.engine()
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_a_title_and_the_headings_under_it_keep_sizes_of_their_own():
    """Sizes between them (a long title line measured a little small) do not chain them into one."""
    body = [_line(f"body line number {i} of the paragraph text here", 72, 100 + 14 * i, 11.0) for i in range(12)]
    heads = [_line(f"{n}. Heading {n}", 72, 300 + 30 * n, m, ink=0.25) for n, m in enumerate((14.9, 15.4, 15.1), 1)]
    title = [_line("Kestrel Valley Water Treatment Works:", 72, 60, 18.0, ink=0.25),
             _line("Operations Handbook", 72, 84, 19.8, ink=0.25), _line("Edition 4", 72, 30, 16.6, ink=0.25)]
    styles = Styles.of(body + heads + title)
    assert len({styles.size(line) for line in heads}) == 1
    assert styles.size(title[1]) > styles.size(heads[0])
