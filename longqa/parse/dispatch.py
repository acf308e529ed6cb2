"""Pick the parser for a file by its suffix."""

from __future__ import annotations

import re
from pathlib import Path

from longqa.errors import InputError
from longqa.names import as_text
from longqa.parse.blocks import ParsedDocument

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

SUPPORTED_SUFFIXES = {".pdf", ".txt", ".md", ".markdown", ".text"}


def parse_file(path: Path) -> ParsedDocument:
    """Parse one file; raise InputError with a one-line reason when it cannot be read."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        from longqa.parse.pdf import parse_pdf

        doc = parse_pdf(path)
    elif suffix in {".md", ".markdown"}:
        from longqa.parse.markdown import parse_markdown

        doc = parse_markdown(path)
    elif suffix in {".txt", ".text"}:
        from longqa.parse.text import parse_text

        doc = parse_text(path)
    else:
        raise InputError(path, f"unsupported file type '{suffix or path.name}' (use .pdf, .txt or .md)")
    if not any(block.text.strip() for block in doc.blocks):
        raise InputError(path, "no text found (empty document)")
    doc.title = clean_title(doc.title)
    return doc


def clean_title(title: str) -> str:
    """A title fit to store and print: valid Unicode (a file name's undecodable bytes as `\\xNN`),
    control characters as spaces, whitespace collapsed."""
    return " ".join(_CONTROLS.sub(" ", as_text(title)).split()) or "(untitled)"
