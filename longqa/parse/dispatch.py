"""Pick the parser for a file by its suffix."""

from __future__ import annotations

from pathlib import Path

from longqa.errors import InputError
from longqa.parse.blocks import ParsedDocument

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
    return doc
