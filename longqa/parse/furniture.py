"""Page furniture: running headers, footers and page numbers, which are not part of the body text.

Works in the same single pass as extraction: each page reports the short blocks at its edges (the
top/bottom band, and the blocks nearest its top and bottom), keyed with digits normalised so "Page 3 of 80" and
"Page 4 of 80" agree. Once all pages are seen, a key found on enough pages is furniture, and so is a
bare page number at a page edge. Nothing is extracted twice.

Running heads that change with the chapter ("2.5. Priorities | 11" over section 2.5's pages, then
"2.6. Targets | 14") repeat on too few pages to count. A page's outermost block that carries a page
number at either end is a running head when the rest of it recurs on pages whose numbers run with
the pages as other heads' numbers do (a heading "Item 7" atop one page and "Item 8" atop another do
not); so is a one-line block in the top or bottom band that is the outermost block of each of
MIN_PAGES pages ("CHAPTER THREE" over every page of chapter three).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from longqa.parse.page_lines import PageBlock

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
# A page number at either end of a running head, set off by space or a rule: "2.5. Priorities | 11".
_FOLIO = re.compile(r"^(?P<a>\d{1,4})\s*[|·•—–-]?\s+(?=\S)|(?<=\S)\s+[|·•—–-]?\s*(?P<b>\d{1,4})$")
_LETTERS = re.compile(r"[^\W\d_]")


def furniture_key(text: str) -> str:
    return " ".join(_DIGITS.sub("#", text.lower()).split())


@dataclass
class Mark:
    """What the first pass learnt about one block: its edge key, if any, and whether it is a page number."""

    key: str | None = None
    page_number: bool = False
    head: str | None = None  # the outermost block's text less its page number, or its one line in a band
    page: int = 0  # the page's place among those seen


class Furniture:
    """Collects edge-block keys page by page; afterwards tells which blocks are furniture."""

    def __init__(self) -> None:
        self.pages = 0
        self.pages_with: Counter[str] = Counter()
        self.heads: Counter[str] = Counter()  # pages whose outermost block is this head
        self.folios: dict[str, Counter[int]] = {}  # printed page number less page index, per head
        self.first_page: dict[str, int] = {}  # where a head without page numbers was first seen

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
            mark = Mark(None if lone else furniture_key(text), page_number, page=self.pages)
            if outermost and not lone and not page_number and not item.block.table:
                mark.head = self._head(text, in_band)
                self.first_page.setdefault(mark.head or "", self.pages)
            marks.append(mark)
        self.pages_with.update({mark.key for mark in marks if mark.key})
        self.heads.update({mark.head for mark in marks if mark.head})
        return marks

    def _head(self, text: str, in_band: bool) -> str | None:
        folio = _FOLIO.search(text)
        if folio:
            head = " ".join((text[: folio.start()] + text[folio.end():]).lower().split())
            number = int(folio.group("a") or folio.group("b"))
            self.folios.setdefault(head, Counter())[number - self.pages] += 1
            return head
        return " ".join(text.lower().split()) if in_band and "\n" not in text else None

    def _folio_scheme(self, offsets: Counter[int]) -> bool:
        """Whether a head's page numbers follow the document's numbering: the same distance from
        the page index on at least two of its pages, a distance that other heads keep too (headings
        "PROPOSAL 2" to "PROPOSAL 4" atop three pages in a row are one head, no numbering)."""
        offset, pages = offsets.most_common(1)[0]
        if pages < 2:
            return False
        sharing = sum(1 for other in self.folios.values() if other.most_common(1)[0] == (offset, other[offset])
                      and other[offset] >= 2)
        return sharing >= 2

    def is_furniture(self, mark: Mark) -> bool:
        if mark.page_number:
            return True
        if mark.head and len(_LETTERS.findall(mark.head)) >= 3:
            offsets = self.folios.get(mark.head)
            if offsets is not None:
                if self._folio_scheme(offsets):
                    return True
            elif self.heads[mark.head] >= MIN_PAGES and mark.page != self.first_page[mark.head]:
                return True  # the chapter's title where it starts stays
        if mark.key is None or len(_LETTERS.findall(mark.key)) < 3:
            return False
        return self.pages_with[mark.key] >= max(MIN_PAGES, MIN_SHARE * self.pages)
