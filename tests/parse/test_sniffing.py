"""Files are read by their content, whatever their name: a licence without a suffix, a PDF named
`manual`, a web page saved as `index`, UTF-16 text without a byte-order mark; binary data is
refused in one line that names the file and what it looks like."""

from __future__ import annotations

import pytest

from longqa.errors import InputError
from longqa.parse import parse_file
from tests.pdfgen import H, P, make_pdf, sentence

LICENCE = ("Permission is hereby granted, free of charge, to any person obtaining a copy of this software "
           "and associated documentation files, to deal in the Software without restriction.\n\n"
           "The above copyright notice and this permission notice shall be included in all copies.\n")


def test_text_without_a_suffix_is_read_and_named_in_full(tmp_path):
    path = tmp_path / "LICENSE-2.1"
    path.write_text(LICENCE)
    doc = parse_file(path)
    assert doc.format == "text" and doc.title == "LICENSE-2.1"
    assert doc.blocks[1].text.startswith("The above copyright notice")


def test_pdf_without_its_suffix(tmp_path):
    source = make_pdf(tmp_path / "source.pdf", [[H("Maintenance"), P(sentence("pump", 3))]])
    path = tmp_path / "manual"
    path.write_bytes(source.read_bytes())
    doc = parse_file(path)
    assert doc.format == "pdf"
    assert any("pump" in block.text for block in doc.blocks)


def test_web_page_and_markdown_without_suffixes(tmp_path):
    page = tmp_path / "index"
    page.write_text("<!DOCTYPE html>\n<html><head><title>Pump Manual</title></head><body>"
                    "<h1>Pump Manual</h1><p>Check the seals monthly.</p></body></html>")
    doc = parse_file(page)
    assert doc.format == "html" and doc.title == "Pump Manual"
    assert [block.text for block in doc.blocks] == ["Pump Manual", "Check the seals monthly."]
    readme = tmp_path / "README"
    readme.write_text("# Pump Manual\n\nRead this first.\n\n## Seals\n\nCheck the seals monthly.\n")
    doc = parse_file(readme)
    assert doc.format == "markdown"
    assert [(block.text, block.heading) for block in doc.blocks][:2] == [("Pump Manual", 1), ("Read this first.", None)]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32", "utf-16"])
def test_wide_encodings_with_or_without_a_byte_order_mark(tmp_path, encoding):
    """UTF-16 without a mark is recognised by its NUL bytes; UTF-32 and UTF-16 with one by the mark
    (their NUL bytes must not read as binary data)."""
    path = tmp_path / "notes.txt"
    path.write_bytes("Café notes on the pump.\n\nSeals are checked monthly.".encode(encoding))
    doc = parse_file(path)
    assert [block.text for block in doc.blocks] == ["Café notes on the pump.", "Seals are checked monthly."]


@pytest.mark.parametrize("name, data, reason", [
    ("report.docx", b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00" * 40, "not a text document: a ZIP archive"),
    ("tool", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "not a text document: an executable program"),
    ("photo", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200), "not a text document: a PNG image"),
    ("blob", bytes(range(256)) * 8, "not a text document (binary data)"),
])
def test_binary_content_is_refused_in_one_line(tmp_path, name, data, reason):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        parse_file(path)
    message = str(caught.value)
    assert reason in message and name in message and "\n" not in message
