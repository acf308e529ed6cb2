"""Headings read from a PDF's page layout (structure/layout.py): font size, bold and numbering.

Every document here is a real PDF written with PyMuPDF (tests/pdfgen.py) and read by the real
parser; `layout_headings` is then asked for its headings: which blocks open sections, and at what
level.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.parse.pdf import parse_pdf
from longqa.structure.layout import MAX_LEVELS, layout_headings
from tests.pdfgen import BODY, H, P, Row, make_pdf, sentence


def headings(tmp_path: Path, pages: list[list], **kwargs) -> list[tuple[int, int, str]]:
    """(page, level, title) of each heading found, in document order."""
    doc = parse_pdf(make_pdf(tmp_path / "doc.pdf", pages, **kwargs))
    found = layout_headings(doc)
    # each heading names the block that opens its section, and they come in the blocks' order
    assert [h.index for h in found] == sorted({h.index for h in found})
    for heading in found:
        assert " ".join(doc.blocks[heading.index].text.split()) == heading.title
    return [(doc.blocks[h.index].page, h.level, h.title) for h in found]


def test_styles_rank_bigger_first_then_bold_into_at_most_three_levels(tmp_path):
    # A field guide without numbers: 16pt bold, 13pt bold, 13pt regular, then an 11.5pt style
    # that would be a fourth level. The title on page 1 is the document's, not a section's.
    pages = [
        [H("Field Service Guide", 20), P(sentence("opening")),
         H("Getting Started", 16), P(sentence("start")),
         H("Unpacking", 13), P(sentence("unpacking")),
         H("Checking the parts", 13, bold=False), P(sentence("parts"))],
        [H("Installation", 16), P(sentence("installation")),
         H("Mounting", 13), P(sentence("mounting")),
         H("Wall anchors", 13, bold=False), P(sentence("anchors")),
         H("Cable lengths", 11.5, bold=False), P(sentence("cables"))],
    ]
    assert MAX_LEVELS == 3
    assert headings(tmp_path, pages, footer="{n}") == [
        (1, 1, "Getting Started"), (1, 2, "Unpacking"), (1, 3, "Checking the parts"),
        (2, 1, "Installation"), (2, 2, "Mounting"), (2, 3, "Wall anchors"),
    ]


def test_a_papers_dotted_numbers_set_the_depth_whatever_the_style(tmp_path):
    # Every heading in one style: only the numbers tell 2.1 under 2; depth stops at three.
    pages = [[H("Pump Test Report", 20),
              H("1 Introduction"), P(sentence("introduction")),
              H("2 Method"), P(sentence("method")),
              H("2.1 Test rig"), P(sentence("rig")),
              H("2.1.1 Flow meter"), P(sentence("meter")),
              H("2.1.1.1 Meter calibration"), P(sentence("calibration")),
              H("3 Results"), P(sentence("results"))]]
    assert [(level, title) for _, level, title in headings(tmp_path, pages)] == [
        (1, "1 Introduction"), (1, "2 Method"), (2, "2.1 Test rig"), (3, "2.1.1 Flow meter"),
        (3, "2.1.1.1 Meter calibration"), (1, "3 Results")]


def test_unnumbered_styles_rank_below_the_larger_numbered_ones(tmp_path):
    # "Limitations" is set smaller than the numbered 1.1 (level 2), so it sits at level 3; a
    # fourth level (10.5pt bold) is dropped; "Acknowledgements" shares the top numbered style.
    pages = [[H("Pump Test Report", 20),
              H("1 Introduction"), P(sentence("introduction")),
              H("1.1 Background", 12), P(sentence("background")),
              H("Limitations", 11), P(sentence("limitations")),
              H("Side note", 10.5), P(sentence("side")),
              H("2 Method"), P(sentence("method")),
              H("3 Results"), P(sentence("results")),
              H("Acknowledgements"), P(sentence("thanks"))]]
    assert [(level, title) for _, level, title in headings(tmp_path, pages)] == [
        (1, "1 Introduction"), (2, "1.1 Background"), (3, "Limitations"), (1, "2 Method"), (1, "3 Results"),
        (1, "Acknowledgements")]


def test_numbers_that_do_not_count_sections_from_one_leave_the_style_to_decide(tmp_path):
    # An excerpt whose headings are 5.1 and 5.2 has no 1, 2, 3 at the top: the numbers are part of
    # the titles, and one style is one level.
    pages = [[H("Pump Limits", 20), H("Overview"), P(sentence("overview")),
              H("5.1 Pressure limits"), P(sentence("pressure")), H("5.2 Flow limits"), P(sentence("flow"))]]
    assert [(level, title) for _, level, title in headings(tmp_path, pages)] == [
        (1, "Overview"), (1, "5.1 Pressure limits"), (1, "5.2 Flow limits")]


def test_sentences_cut_lines_long_lines_small_print_and_table_rows_open_no_section(tmp_path):
    pages = [[H("Pump Test Report", 20), H("Scope"), P(sentence("scope")),
              H("The pump was tested at full load.", 12), P(sentence("load")),  # a sentence
              H("results of the second run", 12), P(sentence("second run")),  # starts in lower case
              H("Pressure readings taken with", 12), P(sentence("readings")),  # cut before its object
              H("Readings from the outlet gauge on the north side of the pump house", 12),  # 13 words
              P(sentence("gauge")),
              H("Figure 3 Pump curve", 8), P(sentence("curve")),  # bold, but smaller than the body
              Row(["Pump", "Flow", "Head"], size=12, bold=True), Row(["P1", "40", "12"]),  # a table's header
              H("Findings", 12), P(sentence("findings"))]]
    assert headings(tmp_path, pages) == [(1, 1, "Scope"), (1, 2, "Findings")]


PARTS = ["Air filter", "Oil filter", "Fuel filter", "Drive belt", "Spark plug", "Fuel hose"]


@pytest.mark.parametrize("padding, named", [(0, False), (36, True)])
def test_a_bold_style_on_many_blocks_is_body_text_not_headings(tmp_path, padding, named):
    # Six bold part names, each over its one-line description: in a short guide they are a third
    # of its blocks (body text); among 36 more paragraphs they are rare enough to be headings.
    parts = [item for i, name in enumerate(PARTS) for item in (H(name, BODY), P(sentence(f"part {i}", 1)))]
    more = [P(sentence(f"ordering note {i}", 1)) for i in range(padding)]
    pages = [[H("Spare Parts Guide", 20), H("Engine parts", 14), *parts, H("Ordering", 14), *more[:12]],
             more[12:]]
    found = [(level, title) for _, level, title in headings(tmp_path, [page for page in pages if page])]
    expected = [(1, "Engine parts"), *([(2, name) for name in PARTS] if named else []), (1, "Ordering")]
    assert found == expected


@pytest.mark.parametrize("cover_alone, kept", [(True, False), (False, True)])
def test_a_style_seen_only_on_the_cover_of_a_longer_document_is_not_a_heading(tmp_path, cover_alone, kept):
    # Cover lines in their own style (14pt regular) name who the report is for; when the cover
    # shares its page with the first section of a two-page report, the same lines may be headings.
    cover = [H("Annual Water Quality Report", 24), H("Prepared for Riverside Council", 14, bold=False),
             H("Laboratory Services Unit", 14, bold=False)]
    sampling = [H("Sampling", 16), P(sentence("sampling", 4))]
    results = [H("Results", 16), P(sentence("results", 4))]
    pages = [cover, sampling, results] if cover_alone else [cover + sampling, results]
    titles = [title for _, _, title in headings(tmp_path, pages)]
    assert "Annual Water Quality Report" not in titles
    assert ("Prepared for Riverside Council" in titles) is kept and ("Laboratory Services Unit" in titles) is kept
    assert titles[-2:] == ["Sampling", "Results"]


@pytest.mark.parametrize("times, kept", [(2, True), (3, False)])
def test_a_label_printed_under_every_topic_is_not_a_heading(tmp_path, times, kept):
    # "Notes" under each part is a label past two repeats; a one-off heading of that style stays.
    topics = ["Filters", "Belts", "Hoses"][:times]
    body = [item for topic in topics for item in (H(topic, 14), P(sentence(topic.lower())), H("Notes", 12),
                                                  P(sentence(f"{topic.lower()} notes")))]
    pages = [[H("Service Manual", 20), *body, H("Warranty", 12), P(sentence("warranty"))]]
    found = [(level, title) for _, level, title in headings(tmp_path, pages)]
    notes = [(2, "Notes")] if kept else []
    assert found == [item for topic in topics for item in ((1, topic), *notes)] + [(2, "Warranty")]


def test_contents_page_entries_open_no_sections_the_headings_where_they_start_do(tmp_path):
    b = BODY
    contents = [H("Contents", 14), H("1 Safety .......... 2", b), H("2 Installation .......... 2", b),
                H("3 Operation .......... 3", b), H("4 Maintenance .......... 3", b)]
    pages = [contents,
             [H("1 Safety"), P(sentence("safety")), H("2 Installation"), P(sentence("installation"))],
             [H("3 Operation"), P(sentence("operation")), H("4 Maintenance"), P(sentence("maintenance"))]]
    assert headings(tmp_path, pages, title="Heater Owner's Manual") == [
        (2, 1, "1 Safety"), (2, 1, "2 Installation"), (3, 1, "3 Operation"), (3, 1, "4 Maintenance")]


def test_a_filings_parts_and_items_rank_above_its_other_headings(tmp_path):
    # PART above Item whatever their style (body-size bold here); "PART II Item 5. ..." set as one
    # line opens both; larger un-numbered headings sit below the items, and bold lines at body
    # size ("Competition") are not headings where larger ones exist.
    b = BODY
    pages = [
        [H("FORM 10-K", 16), P("Annual report of Harbor Tools Inc. for the fiscal year.")],
        [H("PART I", b), H("Item 1. Business", b), P(sentence("business", 4)),
         H("Overview", 12), P(sentence("overview")), H("Competition", b), P(sentence("competition"))],
        [H("PART II Item 5. Market for Registrant's Common Equity", b), P(sentence("market", 4)),
         H("Item 7. Management's Discussion and Analysis", b), P(sentence("discussion", 3))],
    ]
    assert headings(tmp_path, pages, footer="{n}") == [
        (2, 1, "PART I"), (2, 2, "Item 1. Business"), (2, 3, "Overview"),
        (3, 1, "PART II"), (3, 2, "Item 5. Market for Registrant's Common Equity"),
        (3, 2, "Item 7. Management's Discussion and Analysis"),
    ]


def test_a_document_in_one_style_has_no_layout_headings(tmp_path):
    # Nothing larger, bolder or numbered: the caller falls back to another source of structure.
    pages = [[P(sentence("inspection", 4)), P(sentence("repairs", 3))], [P(sentence("costs", 5))]]
    assert headings(tmp_path, pages) == []
