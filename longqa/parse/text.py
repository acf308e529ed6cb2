"""Plain text: paragraphs split on blank lines, pages split on form feeds; a text that is a web page
saved with its HTML tags is read by its tags (tagged.py)."""

from __future__ import annotations

import re
from pathlib import Path

from longqa.parse.blocks import Block, ParsedDocument
from longqa.parse.decode import read_text

_BLANK_LINES = re.compile(r"\n[ \t]*\n")


def paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs, whitespace-trimmed, empty ones dropped.

    Text with no blank lines at all (one paragraph per line) is split on single newlines instead.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    parts = _BLANK_LINES.split(text)
    if len(parts) == 1 and text.count("\n") > 3:
        parts = text.split("\n")
    return [part.strip() for part in parts if part.strip()]


def parse_text(path: Path) -> ParsedDocument:
    text = read_text(path)
    from longqa.parse.tagged import looks_tagged, parse_tagged  # tagged.py splits <pre> text with paragraphs()

    if looks_tagged(text):  # a web page saved as text: its tags give the blocks
        return parse_tagged(path, text)
    pages = text.split("\f")
    blocks = [
        Block(text=paragraph, page=page_no)
        for page_no, page_text in enumerate(pages, start=1)
        for paragraph in paragraphs(page_text)
    ]
    return ParsedDocument(path=path, title=path.stem, pages=len(pages), blocks=blocks, format="text")
