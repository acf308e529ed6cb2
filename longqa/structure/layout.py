"""Headings from the page layout of a PDF: font size, bold and numbering.

A candidate is a short block, not a sentence, set larger than the body text, or bold, or numbered.
Each document ranks its own heading styles (bigger first, bold above regular at equal size) into
at most three levels. Numbering overrides style: in a filing PART is above Item and un-numbered
headings sit below both; a financial statement's "Note 3 - ..." opens a section whatever its
style; in a paper "3.2" sits under "3". Table-of-contents pages open no sections.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from longqa.parse.blocks import Block, ParsedDocument
from longqa.structure.numbering import PART_THEN_ITEM, Numbering, numbering, toc_pages
from longqa.structure.tree import Heading

MAX_WORDS, MAX_CHARS = 12, 100
KEYWORD_MAX_WORDS, KEYWORD_MAX_CHARS = 30, 250  # "Item 5. Market for Registrant's Common Equity, ..."
MAX_STYLE_SHARE = 0.15  # a style on more blocks than this is body text, not headings
MAX_LEVELS = 3
# Points: a size within this of the body text's is the body's size, not larger or smaller (fonts are
# set in half-point steps, and a PDF's sizes carry rounding noise); set by hand.
SIZE_SLACK = 0.25
# A line ending in one of these words was cut from a sentence, not set as a heading.
_DANGLING = {"a", "an", "the", "and", "or", "of", "to", "in", "for", "with", "by", "on", "at", "was", "is", "are"}
ROW_LABEL_WORDS = 6  # "Current liabilities:" between a row-group label and its rows
MAX_REPEATS = 2  # un-numbered text printed more often than this is a label (table header), not a heading

Style = tuple[float, bool]


@dataclass
class Candidate:
    index: int
    text: str
    style: Style
    number: Numbering | None

    @property
    def keyword(self) -> bool:
        return self.number is not None and self.number.kind == "keyword"

    @property
    def note(self) -> bool:
        return self.number is not None and self.number.kind == "note"


def style_order(style: Style) -> tuple[float, int]:
    """Sort key: bigger first; bold before regular at the same size."""
    return (-style[0], 0 if style[1] else 1)


def body_size(blocks: list[Block]) -> float:
    sizes: Counter[float] = Counter()
    for block in blocks:
        if block.size > 0:
            sizes[block.size] += len(block.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def split_part_item(doc: ParsedDocument) -> None:
    """"PART II Item 5. Market ..." in one block becomes two blocks, so each can open its section."""
    out: list[Block] = []
    for block in doc.blocks:
        match = PART_THEN_ITEM.match(block.text) if len(block.text) <= KEYWORD_MAX_CHARS and not block.table else None
        if match:
            for text in (match.group("part"), match.group("item")):
                out.append(Block(text=text.strip(), page=block.page, page_end=block.page_end,
                                 size=block.size, bold=block.bold))
        else:
            out.append(block)
    doc.blocks = out


def candidate(index: int, block: Block, body: float, title: str) -> Candidate | None:
    text = " ".join(block.text.split())
    if block.table or block.size <= 0 or len(text) < 2 or (block.page == 1 and text == title):
        return None
    number = numbering(text)
    keyword = number is not None and number.kind == "keyword"
    long_allowed = number is not None and number.kind in ("keyword", "note")  # "Note 3. Restructuring Charges and ..."
    words = len(text.split())
    if words > (KEYWORD_MAX_WORDS if long_allowed else MAX_WORDS) or len(text) > (KEYWORD_MAX_CHARS if long_allowed else MAX_CHARS):
        return None
    if not keyword and (text.endswith((".", ",", ";", ":", "!", "?")) or not (text[0].isupper() or text[0].isdigit())):
        return None
    if sum(ch.isalpha() for ch in text) < 2 or text.split()[-1].lower() in _DANGLING:
        return None
    larger = block.size > body + SIZE_SLACK
    bold = block.bold and block.size >= body - SIZE_SLACK
    if not (larger or bold or keyword) or (block.size < body - SIZE_SLACK and not keyword):
        return None
    return Candidate(index, text, (block.size, block.bold), number)


def drop_toc_entries(cands: list[Candidate], doc: ParsedDocument) -> list[Candidate]:
    """On contents pages keep only numbered headings that do not come again later: an item that
    starts on a page listing the statements that follow it is a real heading, its entry is not."""
    pages = toc_pages(doc.blocks)
    if not pages:
        return cands
    kept = []
    for position, cand in enumerate(cands):
        if doc.blocks[cand.index].page in pages:
            label = cand.number.label if cand.keyword else None
            if label is None or any(o.keyword and o.number.label == label for o in cands[position + 1 :]):
                continue
        kept.append(cand)
    return kept


def drop_rare_and_common_styles(cands: list[Candidate], doc: ParsedDocument) -> list[Candidate]:
    """Un-numbered styles used too often (body text) or only on page 1 (title page) are not headings."""
    per_style: dict[Style, list[Candidate]] = {}
    for cand in cands:
        if cand.number is None:
            per_style.setdefault(cand.style, []).append(cand)
    bad = set()
    for style, members in per_style.items():
        too_common = len(members) >= 5 and len(members) > MAX_STYLE_SHARE * len(doc.blocks)
        title_page = doc.pages > 2 and all(doc.blocks[c.index].page == 1 for c in members)
        if too_common or title_page:
            bad.add(style)
    return [c for c in cands if c.number is not None or c.style not in bad]


def drop_cell_labels(cands: list[Candidate], doc: ParsedDocument, body: float) -> list[Candidate]:
    """Bold names at body size inside a table label its rows; they do not open sections. In a
    justices' table whose cells wrap over several lines, each row starts with a bold name right
    after the previous row's smaller cells; read as headings, the names left the leaves' text.
    When at least half of an un-numbered body-size style's candidates come right after a table row
    or text set smaller than the body, those candidates are dropped; the style's others (a bold
    heading after a paragraph) stay."""
    per_style: dict[Style, list[Candidate]] = {}
    for cand in cands:
        if _unnumbered_body_size(cand, body):
            per_style.setdefault(cand.style, []).append(cand)
    dropped: set[int] = set()
    for members in per_style.values():
        in_table = [c for c in members if c.index > 0 and _cell_or_small(doc.blocks[c.index - 1], body)]
        if len(members) >= 3 and 2 * len(in_table) >= len(members):
            dropped.update(c.index for c in in_table)
    return [c for c in cands if c.index not in dropped]


def drop_row_group_labels(cands: list[Candidate], doc: ParsedDocument, body: float) -> list[Candidate]:
    """A bold line at body size between rows of one table labels a group of its rows ("Assets",
    "Liabilities and Stockholders' Equity" in a balance sheet; "North America" in a segment
    table); it does not open a section. Read as a heading, it split the statement into sibling
    sections, and the statement's own title no longer covered its rows. The line counts as inside
    the table when the block before it is a table row and the block after it is one too, or is a
    short 'Current liabilities:' line followed by one, all on the same page."""
    blocks = doc.blocks

    def row(i: int, page: int) -> bool:
        return 0 <= i < len(blocks) and blocks[i].table and blocks[i].page == page

    dropped = set()
    for cand in cands:
        i, page = cand.index, blocks[cand.index].page
        if not _unnumbered_body_size(cand, body) or not row(i - 1, page):
            continue
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        label_line = (after is not None and after.page == page and len(after.text.split()) <= ROW_LABEL_WORDS
                      and after.text.rstrip().endswith(":"))
        if row(i + 1, page) or (label_line and row(i + 2, page)):
            dropped.add(i)
    return [c for c in cands if c.index not in dropped]


def _unnumbered_body_size(cand: Candidate, body: float) -> bool:
    """A candidate only its bold face makes one: no numbering, not set larger than the body."""
    return cand.number is None and cand.style[0] <= body + SIZE_SLACK


def _cell_or_small(block: Block, body: float) -> bool:
    return block.table or 0 < block.size < body - SIZE_SLACK


def layout_headings(doc: ParsedDocument) -> list[Heading]:
    split_part_item(doc)
    body = body_size(doc.blocks)
    cands = [c for i, b in enumerate(doc.blocks) if (c := candidate(i, b, body, doc.title))]
    cands = drop_toc_entries(cands, doc)
    repeats = Counter(c.text.lower() for c in cands if not c.keyword)
    cands = [c for c in cands if c.keyword or repeats[c.text.lower()] <= MAX_REPEATS]
    if not numbered_sequence(cands):
        cands = [c if c.keyword or c.note else Candidate(c.index, c.text, c.style, None) for c in cands]
    cands = drop_rare_and_common_styles(cands, doc)
    cands = drop_cell_labels(cands, doc, body)
    cands = drop_row_group_labels(cands, doc, body)
    labels = {c.number.label for c in cands if c.keyword}
    if len(labels) >= 2:
        levelled = filing_levels(cands, body)
    else:
        levelled = paper_levels(cands)
    return [Heading(c.index, level, c.text) for c, level in levelled]


def numbered_sequence(cands: list[Candidate]) -> bool:
    """Dotted numbers set levels only when they count sections: at least "1", "2" and "3" at the top."""
    tops = {c.number.label for c in cands if c.number is not None and c.number.kind == "dotted" and c.number.rank == 1}
    return {"1", "2", "3"} <= {label.rstrip(".") for label in tops}


def filing_levels(cands: list[Candidate], body: float) -> list[tuple[Candidate, int]]:
    """PART / Item levels from the keywords; other headings one level below, larger fonts preferred.

    Bold text at body size only counts when the filing has no larger un-numbered headings; notes
    ("Note 3 - Restructuring") always count."""
    ranks = sorted({c.number.rank for c in cands if c.keyword})
    keyword_level = {rank: level for level, rank in enumerate(ranks, start=1)}
    below = min(len(ranks) + 1, MAX_LEVELS)
    others = [c for c in cands if not c.keyword]
    if any(c.style[0] > body + SIZE_SLACK for c in others):
        others = [c for c in others if c.style[0] > body + SIZE_SLACK or c.note]
    chosen = {id(c) for c in others}
    out = []
    for cand in cands:
        if cand.keyword:
            out.append((cand, keyword_level[cand.number.rank]))
        elif id(cand) in chosen and below > len(ranks):
            out.append((cand, below))
    return out


def paper_levels(cands: list[Candidate]) -> list[tuple[Candidate, int]]:
    """Numbered headings take their depth; other styles rank by font, below larger numbered ones."""
    depth_by_style: dict[Style, Counter[int]] = {}
    for cand in cands:
        if cand.number is not None:
            depth_by_style.setdefault(cand.style, Counter())[min(cand.number.rank, MAX_LEVELS)] += 1
    styles = sorted({c.style for c in cands}, key=style_order)
    level_of: dict[Style, int] = {}
    for position, style in enumerate(styles):
        if style in depth_by_style:
            level_of[style] = depth_by_style[style].most_common(1)[0][0]
            continue
        above = [level_of[s] for s in styles[:position] if s in level_of]
        level_of[style] = max(above) + 1 if above else 1
    out = []
    for cand in cands:
        if cand.number is not None and not cand.number.weak and cand.number.kind == "dotted":
            level = min(cand.number.rank, MAX_LEVELS)
        else:
            level = level_of[cand.style]
        if level <= MAX_LEVELS:
            out.append((cand, level))
    return out
