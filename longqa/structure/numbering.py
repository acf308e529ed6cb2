"""Heading numbering in PDFs: "PART II", "Item 7.", "Item 1—Business", "Note 3 - Restructuring",
"3.2 Model", and tables of contents.

A filing lists every "Item N." twice: in its table of contents and where the item starts. Pages
that read like a table of contents (several rows ending in page numbers that only go up) must not
open sections; `toc_pages` finds them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa.parse.blocks import Block

KEYWORD = re.compile(
    r"^(?P<word>part|item|chapter|section|article|appendix|schedule)\s+"
    r"(?P<label>\d{1,2}(?:\.\d{1,2})?[A-Z]?|[IVXLC]{1,6}|[A-Z])(?![\w'’])\s*[.:\-–—]?\s*(?=[A-Z0-9(\[“\"]|$)",
    re.IGNORECASE,
)
# "Note 3 - Restructuring", "NOTE 1 — ORGANIZATION", "Note 2. Acquisitions": a financial
# statement's notes, each a section, whatever the style of the lines around them.
NOTE = re.compile(r"^note\s+(?P<label>\d{1,2})(?![\w'’,]|\.\d)\s*[.:\-–—]?\s*(?=[A-Z(“\"])", re.IGNORECASE)
KEYWORD_RANK = {"part": 1, "chapter": 1, "article": 1, "appendix": 1, "item": 2, "section": 2, "schedule": 2}
# "3 Methods", "3.2 Model", "A.1 Proofs"; a single number needs no dot so "1. We did" lists stay out.
DOTTED = re.compile(r"^(?P<num>(?:\d{1,2}|[A-H])(?:\.\d{1,2}){0,3})(?P<dot>\.?)\s+(?P<rest>[A-Z(].*)$")
# "PART II Item 5. Market ..." or "Part I - Financial Information Item 1. Financial Statements".
PART_THEN_ITEM = re.compile(r"^(?P<part>part\s+[IVX]{1,4}\b.*?)\s+(?P<item>item\s+\d{1,2}[A-Z]?\b.*)$",
                            re.IGNORECASE | re.DOTALL)
# A contents row ends in a page number after a cell break or dot leaders: "Risk Factors | 6".
_TOC_PAGE = re.compile(r"(?:\|\s*|\.{3,}\s*)(\d{1,3}|N/A)$", re.IGNORECASE)
MIN_TOC_ROWS = 4


@dataclass
class Numbering:
    kind: str  # "keyword" | "note" | "dotted"
    rank: int  # keyword rank (part 1, item 2) or dotted depth ("3.2" → 2)
    label: str  # normalised, e.g. "item 7a", "3.2"
    weak: bool = False  # "1. Results" reads like a list item too: a heading only if its font says so


def numbering(text: str) -> Numbering | None:
    keyword = KEYWORD.match(text)
    if keyword:
        word = keyword.group("word").lower()
        return Numbering("keyword", KEYWORD_RANK[word], f"{word} {keyword.group('label').lower()}")
    note = NOTE.match(text)
    if note:
        return Numbering("note", 1, f"note {note.group('label')}")
    dotted = DOTTED.match(text)
    if not dotted:
        return None
    num = dotted.group("num")
    if num.isalpha():
        return None  # "A Study of ..." is a sentence, not appendix A
    weak = "." not in num and bool(dotted.group("dot"))
    return Numbering("dotted", num.count(".") + 1, num, weak)


def toc_pages(blocks: list[Block]) -> set[int]:
    """Pages with at least MIN_TOC_ROWS rows that end in page numbers, those numbers never going down."""
    rows_by_page: dict[int, list[int]] = {}
    for block in blocks:
        for row in block.text.split("\n"):
            page = toc_row_page(row)
            if page is not None:
                rows_by_page.setdefault(block.page, []).append(int(page) if page.isdigit() else -1)
    pages = set()
    for page, numbers in rows_by_page.items():
        known = [n for n in numbers if n >= 0]
        if len(numbers) >= MIN_TOC_ROWS and known == sorted(known) and len(set(known)) >= 2:
            pages.add(page)
    return pages


def toc_row_page(row: str) -> str | None:
    """The page a contents row ends in ("Risk Factors | 6" gives "6"), or None for other rows."""
    row = row.strip()
    match = _TOC_PAGE.search(row[-12:])
    entry = row[: len(row) - len(match.group(0))] if match else ""
    return match.group(1) if match and sum(ch.isalpha() for ch in entry) >= 4 else None
