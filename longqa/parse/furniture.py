"""Page furniture: running headers, footers and page numbers, which are not part of the body text.

Works in the same single pass as extraction: each page reports the short blocks at its edges (the
top/bottom band, and the blocks nearest its top and bottom), keyed with digits normalised so "Page 3 of 80" and
"Page 4 of 80" agree. Once all pages are seen, a key found on enough pages is furniture, and so is a
bare page number at a page edge. Nothing is extracted twice.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from longqa.parse.pdf_page import PageBlock

BAND = 0.08  # top and bottom share of the page height where headers and footers live
EDGE_BLOCKS = 2  # also this many blocks nearest the top and the bottom of each page
MIN_SHARE = 0.3  # a key repeated on this share of pages is furniture ...
MIN_PAGES = 3  # ... provided it is on at least this many pages
MAX_CHARS = 200

# "12", "- 12 -", "Page 12", "12 of 80", "12/80", "(12)", "iv", "F-3"
PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?[-–—(\[]?\s*(?:\d{1,4}|[ivxlc]{1,7}|[A-Z]-\d{1,3})\s*[-–—)\]]?"
    r"(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[^\W\d_]")


def furniture_key(text: str) -> str:
    return " ".join(_DIGITS.sub("#", text.lower()).split())


@dataclass
class Mark:
    """What the first pass learnt about one block: its edge key, if any, and whether it is a page number."""

    key: str | None = None
    page_number: bool = False


class Furniture:
    """Collects edge-block keys page by page; afterwards tells which blocks are furniture."""

    def __init__(self) -> None:
        self.pages = 0
        self.pages_with: Counter[str] = Counter()

    def observe(self, blocks: list[PageBlock], page_height: float) -> list[Mark]:
        """One Mark per block of this page; each edge key is counted once per page."""
        self.pages += 1
        marks: list[Mark] = []
        # A header or footer sits beside body text: a page's only block is its body (a ledger
        # of one line per page is not 3,000 running headers), unless it is a bare page number.
        lone = len(blocks) == 1
        # Position on the page, not order in the content stream: footers are often written first.
        from_top = sorted(range(len(blocks)), key=lambda i: blocks[i].y0)
        from_bottom = sorted(range(len(blocks)), key=lambda i: -blocks[i].y1)
        edges = set(from_top[:EDGE_BLOCKS]) | set(from_bottom[:EDGE_BLOCKS])
        outer = set(from_top[:1]) | set(from_bottom[:1])
        for index, item in enumerate(blocks):
            in_band = item.y1 <= page_height * BAND or item.y0 >= page_height * (1 - BAND)
            text = item.block.text.strip()
            if not (in_band or index in edges) or len(text) > MAX_CHARS:
                marks.append(Mark())
                continue
            outermost = in_band or index in outer
            page_number = outermost and bool(PAGE_NUMBER.match(text))
            marks.append(Mark(None if lone else furniture_key(text), page_number))
        self.pages_with.update({mark.key for mark in marks if mark.key})
        return marks

    def is_furniture(self, mark: Mark) -> bool:
        if mark.page_number:
            return True
        if mark.key is None or len(_LETTERS.findall(mark.key)) < 3:
            return False
        return self.pages_with[mark.key] >= max(MIN_PAGES, MIN_SHARE * self.pages)
