"""PDF parsing on PDFs written by PyMuPDF: blocks and fonts, furniture, tables, titles, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.errors import InputError
from longqa.parse import parse_file
from longqa.parse.pdf import parse_pdf
from tests.pdfgen import H, P, Row, image_only_pdf, make_pdf, sentence, zero_page_pdf

HEADER = "ACME Corp Annual Report 2023"
REMINDER = "This reminder sentence is printed in the middle of several pages."


def five_pages(tmp_path: Path, **kwargs) -> Path:
    pages = [
        [H("Widget Safety Report", 20), P(sentence("opening")), H("1 Introduction"), P(sentence("introduction"))],
        [H("2 Methods"), P(sentence("methods")), H("2.1 Sampling", 11), P(sentence("sampling"))],
        [P(sentence("measurement")), P(REMINDER), P(sentence("measurement notes"))],
        [P(sentence("results")), P(REMINDER), P(sentence("result notes"))],
        [H("3 Conclusion"), P(sentence("conclusion")), P(REMINDER), P(sentence("closing notes"))],
    ]
    return make_pdf(tmp_path / "report.pdf", pages, **kwargs)


def test_blocks_keep_font_size_bold_and_page(tmp_path):
    doc = parse_pdf(five_pages(tmp_path))
    assert doc.format == "pdf" and doc.pages == 5
    by_text = {b.text: b for b in doc.blocks}
    assert by_text["1 Introduction"].size == 14 and by_text["1 Introduction"].bold
    assert by_text["2.1 Sampling"].size == 11 and by_text["2.1 Sampling"].page == 2
    body = next(b for b in doc.blocks if b.text.startswith("The methods study"))
    assert body.size == 10 and not body.bold and body.page == 2
    # Wrapped lines of one paragraph are one block, joined by spaces.
    assert "\n" not in body.text and "observation number 3" in body.text


def test_title_from_largest_font_then_metadata(tmp_path):
    assert parse_pdf(five_pages(tmp_path)).title == "Widget Safety Report"
    titled = five_pages(tmp_path, title="Widgets: a Field Guide")
    assert parse_pdf(titled).title == "Widgets: a Field Guide"
    # A filing number or a file name in the metadata is not a title.
    filed = five_pages(tmp_path, title="0000320187-18-000142")
    assert parse_pdf(filed).title == "Widget Safety Report"


def test_title_falls_back_to_file_stem(tmp_path):
    pages = [[P("Short note"), P(sentence("only body"))], [P(sentence("more body"))]]
    path = make_pdf(tmp_path / "plain-notes.pdf", pages)
    assert parse_pdf(path).title == "plain-notes"


def test_running_header_footer_and_page_numbers_are_dropped(tmp_path):
    doc = parse_pdf(five_pages(tmp_path, header=HEADER, footer="Page {n} of {total}"))
    texts = [b.text for b in doc.blocks]
    assert not any(HEADER in t for t in texts)
    assert not any(t.startswith("Page ") for t in texts)
    # Text repeated mid-page is body text, not furniture.
    assert texts.count(REMINDER) == 3
    assert texts[0] == "Widget Safety Report"


@pytest.mark.parametrize("footer", ["{n}", "- {n} -", "{n} of {total}"])
def test_bare_page_numbers_are_dropped(tmp_path, footer):
    doc = parse_pdf(five_pages(tmp_path, footer=footer))
    assert all(any(ch.isalpha() for ch in b.text) for b in doc.blocks)


def test_header_on_too_few_pages_is_kept(tmp_path):
    pages = [[P(sentence("alpha"))], [P(sentence("beta"))]]
    doc = parse_pdf(make_pdf(tmp_path / "short.pdf", pages, header="Draft for review"))
    assert sum(b.text == "Draft for review" for b in doc.blocks) == 2


def test_table_rows_hyphenation_and_page_turns(tmp_path):
    long_paragraph = sentence("carryover", 30) + " and then the sentence continues"
    pages = [
        [
            P("We give an explana-\ntion that spans two lines."),
            Row(["Widget", "Mass", "Speed"]),
            Row(["Alpha", "12 kg", "3 m/s"]),
            P(long_paragraph),
        ],
        [P("on the next page until it ends."), P(sentence("closing"))],
    ]
    doc = parse_pdf(make_pdf(tmp_path / "table.pdf", pages))
    texts = [b.text for b in doc.blocks]
    assert "We give an explanation that spans two lines." in texts
    table = next(b for b in doc.blocks if b.table)
    assert table.text == "Widget | Mass | Speed\nAlpha | 12 kg | 3 m/s"
    joined = next(b for b in doc.blocks if "carryover" in b.text)
    assert joined.text.endswith("continues on the next page until it ends.")
    assert (joined.page, joined.last_page) == (1, 2)


def test_bookmarks_are_kept(tmp_path):
    toc = [[1, "1 Introduction", 1], [1, "2 Methods", 2], [2, "2.1 Sampling", 2], [1, "Nowhere", 99]]
    doc = parse_pdf(five_pages(tmp_path, toc=toc[:3]))
    assert [(e.level, e.title, e.page) for e in doc.outline] == [
        (1, "1 Introduction", 1), (1, "2 Methods", 2), (2, "2.1 Sampling", 2)]


def test_password_free_encryption_opens(tmp_path):
    """A PDF with only an owner password opens with the empty user password."""
    path = five_pages(tmp_path)
    import pymupdf

    with pymupdf.open(path) as doc:
        doc.save(tmp_path / "owner.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner")
    assert parse_pdf(tmp_path / "owner.pdf").title == "Widget Safety Report"


def _encrypted(tmp_path):
    return five_pages(tmp_path, user_password="secret")


def _truncated(tmp_path):
    data = five_pages(tmp_path).read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(data[: len(data) // 3])
    return path


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.95])
def test_truncated_pdfs_are_damaged_whatever_the_cut(tmp_path, keep):
    """MuPDF can rebuild a cut-off file into a partial document; that must not pass for the whole."""
    data = five_pages(tmp_path).read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(InputError) as caught:
        parse_pdf(path)
    assert caught.value.reason.startswith("damaged PDF")


def _text(tmp_path):
    path = tmp_path / "notes.pdf"
    path.write_text("These are notes saved with the wrong extension.\n")
    return path


def _empty(tmp_path):
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    return path


def _blank(tmp_path):
    return make_pdf(tmp_path / "blank.pdf", [[], []])


@pytest.mark.parametrize(
    "make, reason",
    [
        (_encrypted, "encrypted PDF (password required)"),
        (_truncated, "damaged PDF"),
        (_text, "not a valid PDF (no PDF header; the content looks like plain text)"),
        (_empty, "not a valid PDF (the file is empty)"),
        (lambda tmp: image_only_pdf(tmp / "scan.pdf"), "no text layer (scanned or image-only PDF"),
        (_blank, "no text found (all 2 pages are blank)"),
        (lambda tmp: zero_page_pdf(tmp / "zero.pdf"), "PDF has no pages"),
    ],
)
def test_bad_pdfs_raise_input_error_with_reason(tmp_path, capfd, make, reason):
    path = make(tmp_path)
    capfd.readouterr()
    with pytest.raises(InputError) as caught:
        parse_file(path)
    assert caught.value.reason.startswith(reason)
    assert str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)
    # MuPDF's own complaints about the damage stay silent.
    assert capfd.readouterr().err == ""
