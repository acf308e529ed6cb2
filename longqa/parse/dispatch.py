"""Pick the parser for a file by its suffix."""

from __future__ import annotations

import re
from pathlib import Path

from longqa.config import Limits
from longqa.errors import InputError
from longqa.names import as_text
from longqa.parse.blocks import ParsedDocument

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

SUPPORTED_SUFFIXES = {".pdf", ".txt", ".md", ".markdown", ".text", ".html", ".htm"}


def parse_file(path: Path, limits: Limits | None = None) -> ParsedDocument:
    """Parse one file; raise InputError with a one-line reason when it cannot be read or is over
    one of `limits` (the defaults of config.Limits when not given)."""
    limits = limits or Limits()
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise InputError(path, f"unsupported file type '{suffix or as_text(path.name)}' (use .pdf, .txt, .md or .html)")
    _check_size(path, limits)
    if suffix == ".pdf":
        from longqa.parse.pdf import parse_pdf

        doc = parse_pdf(path, limits)
    elif suffix in {".md", ".markdown"}:
        from longqa.parse.markdown import parse_markdown

        doc = parse_markdown(path)
    elif suffix in {".html", ".htm"}:
        from longqa.parse.tagged import parse_tagged

        doc = parse_tagged(path)
    else:
        from longqa.parse.text import parse_text

        doc = parse_text(path)
    if not any(block.text.strip() for block in doc.blocks):
        raise InputError(path, "no text found (empty document)")
    if doc.format != "pdf":
        _check_lines(path, doc, limits)
    doc.title = clean_title(doc.title)
    return doc


def _check_size(path: Path, limits: Limits) -> None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None
    if limits.max_mb and size > limits.max_mb * 1e6:
        raise InputError(path, f"{size / 1e6:,.1f} MB, over the {limits.max_mb:g} MB limit per document (--max-mb lifts it)")


def _check_lines(path: Path, doc: ParsedDocument, limits: Limits) -> None:
    if not limits.max_line_chars:
        return
    longest = max((len(line) for block in doc.blocks for line in block.text.split("\n")), default=0)
    if longest > limits.max_line_chars:
        raise InputError(
            path,
            f"a line of {longest:,} characters, over the {limits.max_line_chars:,} limit: not running text? "
            "(--max-line-chars lifts it)",
        )


def clean_title(title: str) -> str:
    """A title fit to store and print: valid Unicode (a file name's undecodable bytes as `\\xNN`),
    control characters as spaces, whitespace collapsed."""
    return " ".join(_CONTROLS.sub(" ", as_text(title)).split()) or "(untitled)"
