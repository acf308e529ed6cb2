"""Pick the parser for a file by its content: PDF by its magic bytes, web pages by their tags,
markdown by its `#` headings (or its suffix), any other text as plain text; binary data is refused
with one line saying what it looks like. A file's name decides nothing but the markdown and HTML
readings of a text that could be either."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from longqa.config import Limits
from longqa.errors import InputError
from longqa.names import as_text
from longqa.parse.blocks import ParsedDocument

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

# The suffixes a directory is searched for; a file named on its own is read whatever its name.
SUPPORTED_SUFFIXES = {".pdf", ".txt", ".md", ".markdown", ".text", ".html", ".htm"}
_MARKDOWN_SUFFIXES = {".md", ".markdown"}
_HTML_SUFFIXES = {".html", ".htm"}
_SNIFF_BYTES = 8192
# A text that opens as a web page does ("<!DOCTYPE html", "<html", "<?xml ... <html").
_HTML_START = re.compile(r"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)\b", re.I | re.S)
# Markdown without its suffix: ATX headings ("## Usage") on at least two lines, or a fenced block.
_ATX_LINE = re.compile(r"^#{1,6} \S", re.M)
_FENCE_LINE = re.compile(r"^(?:```|~~~)", re.M)
# Binary formats a user may hand over by mistake, named in the refusal.
_BINARY_KINDS = [
    (b"PK\x03\x04", "a ZIP archive (a .docx, .odt or .epub is one: save it as PDF or text)"),
    (b"\x7fELF", "an executable program"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "gzip-compressed data (uncompress it first)"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office file (save it as PDF or text)"),
    (b"SQLite format 3", "an SQLite database"),
]


def parse_file(path: Path, limits: Limits | None = None,
               on_page: Callable[[bool], None] | None = None) -> ParsedDocument:
    """Parse one file; raise InputError with a one-line reason when it cannot be read or is over
    one of `limits` (the defaults of config.Limits when not given). A PDF tells `on_page` of each
    page as it is read, and whether OCR read it."""
    limits = limits or Limits()
    suffix = path.suffix.lower()
    _check_size(path, limits)
    head = _head(path)
    if b"%PDF-" in head[:1024] or suffix == ".pdf":  # a .pdf without the magic gets the PDF reader's reason
        from longqa.parse.pdf import parse_pdf

        doc = parse_pdf(path, limits, on_page)
    else:
        doc = _parse_text_file(path, suffix, head)
    if not any(block.text.strip() for block in doc.blocks):
        raise InputError(path, "no text found (empty document)")
    if doc.format != "pdf":
        _check_lines(path, doc, limits)
    if suffix not in SUPPORTED_SUFFIXES and doc.title == path.stem:
        doc.title = path.name  # "LGPL-2.1", "README.first": the suffix is part of the name
    doc.title = clean_title(doc.title)
    return doc


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(_SNIFF_BYTES)
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None


def _parse_text_file(path: Path, suffix: str, head: bytes) -> ParsedDocument:
    from longqa.parse.decode import looks_binary, read_text, wide_encoding

    if looks_binary(head) and not wide_encoding(head):
        kind = next((name for magic, name in _BINARY_KINDS if head.startswith(magic)), "")
        raise InputError(path, f"not a text document: {kind}" if kind else "not a text document (binary data)")
    from longqa.parse.tagged import looks_tagged, parse_tagged

    text = read_text(path)
    if suffix in _HTML_SUFFIXES or _HTML_START.match(text[:4096]):
        return parse_tagged(path, text)
    if suffix in _MARKDOWN_SUFFIXES or suffix not in SUPPORTED_SUFFIXES and _looks_markdown(text):
        from longqa.parse.markdown import parse_markdown

        return parse_markdown(path, text)
    if looks_tagged(text):  # a web page saved as text: its tags give the blocks
        return parse_tagged(path, text)
    from longqa.parse.text import text_document

    return text_document(path, text)


def _looks_markdown(text: str) -> bool:
    return len(_ATX_LINE.findall(text, 0, 200_000)) >= 2 or bool(_FENCE_LINE.search(text, 0, 200_000))


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
