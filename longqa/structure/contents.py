"""Contents and index pages: read for structure, kept out of the leaves.

A contents line ("2.5 Priorities . . . . . 11", "Risk Factors | 6" on a contents page, a web
page's link to its section "2.1.1. Package configuration") and an index line ("Pressure relief
valve, 12, 48-51" on an index page, or anything under an index's title at the back) point at text
elsewhere; as a passage it crowds out the text it names. Once the headings are found (numbering.toc_pages already keeps a
contents page from opening sections), such lines are removed from the blocks, and a block left
empty is dropped, unless it is a heading.
"""

from __future__ import annotations

import re
from collections import Counter

from longqa.parse.blocks import ParsedDocument
from longqa.structure.numbering import toc_pages, toc_row_page
from longqa.structure.tree import Heading

# Dot leaders then a page number (arabic or roman): "Priorities . . . . 11", "Scope.........iv".
LEADER_END = re.compile(r"(?:(?:\.\s?){4,}|…{2,})\s*(?P<page>\d{1,4}|[ivxlc]{1,7})\s*$", re.IGNORECASE)
MIN_CONTENTS_LINES = 4
# An index entry: a term (a command's name too), then page numbers and ranges, after dot leaders
# or not ("valves, 12, 48-51", "Priorities 11, 23", "\\seq_new:N . . . . 39, 40").
INDEX_LINE = re.compile(
    r"^(?:[^\W\d_]|\\[^\W\d_])[^|]{0,80}?[, ]\s*\d{1,4}(?:[-–]\d{1,4})?(?:,\s*\d{1,4}(?:[-–]\d{1,4})?)*\s*$")
# The PDF parser marks a wide gap inside a line as a cell break; in an index the gap is the one
# between a term, its leaders and its pages ("lstlisting ....... | 4, 55").
_CELL_BREAK = re.compile(r"\s*\|\s*")
_LEADERS = re.compile(r"(?:\.\s?){3}")
# One of several entries an index set in columns may run into one line: a term, dot leaders, pages.
_LED_ENTRY = re.compile(
    r"\s*\\?[^\W\d_][^\n]{0,80}?(?:\s?\.){3,}\s*\d{1,4}(?:[-–]\d{1,4})?(?:,\s*\d{1,4}(?:[-–]\d{1,4})?)*(?=\s|$)")
MIN_INDEX_LINES = 12  # an index page holds many entries ...
INDEX_SHARE = 0.6  # ... and they are most of its lines
# Under its title, an index set in two columns, with entries broken over lines and letters and
# groups between them ("C", "cs commands:"), holds fewer whole entries a line.
TITLED_INDEX_SHARE = 0.3
# "Index", "Concept Index", "Function and Data Index"; a filing's "Exhibit Index" lists documents.
_INDEX_TITLE = re.compile(r"^(?!exhibits?\b)(?:[^\W\d_]+ ){0,3}index$", re.IGNORECASE)


def index_entry(line: str) -> bool:
    """Whether `line` reads as an index entry, or as several run together, cell breaks aside."""
    return index_entries(line) > 0


def index_entries(line: str) -> int:
    """How many index entries `line` holds (0: it is no index line). Cell breaks are read as gaps
    only on a line with dot leaders: a table's row ("Net property and equipment | 2,352 | 2,250",
    "Italy | 5") is no index entry."""
    line = line.strip()
    if not _LEADERS.search(line):
        return int(bool(INDEX_LINE.match(line)))
    line = _CELL_BREAK.sub(" ", line)
    at = count = 0
    while at < len(line):
        entry = _LED_ENTRY.match(line, at)
        if entry is None:
            break
        at, count = entry.end(), count + 1
        if not line[at:].strip():
            return count
    return int(bool(INDEX_LINE.match(line)))


def drop_contents(doc: ParsedDocument, headings: list[Heading]) -> list[Heading]:
    """Remove contents and index lines from `doc`'s blocks; `headings` with their indices moved to
    the blocks that remain (a heading block is kept whatever it holds)."""
    contents = toc_pages(doc.blocks) if doc.format == "pdf" else set()
    index_pages = _index_pages(doc) if doc.format == "pdf" else set()
    index_start = _titled_index(doc) if doc.format == "pdf" else len(doc.blocks)
    leaders = _leader_runs(doc) | _listed_headings(doc, headings)
    by_index = {heading.index: heading for heading in headings}
    kept, moved = [], []
    for number, block in enumerate(doc.blocks):
        if number in by_index:
            moved.append(Heading(len(kept), by_index[number].level, by_index[number].title))
            kept.append(block)
            continue
        if number >= index_start:
            continue  # the index's entries, letters, groups and the lines its entries broke onto
        lines = block.text.split("\n")
        rest = [line for row, line in enumerate(lines) if not (
            (number, row) in leaders
            or block.page in contents and toc_row_page(line) is not None
            or block.page in index_pages and index_entry(line))]
        if len(rest) == len(lines):
            kept.append(block)
        elif any(line.strip() for line in rest):
            block.text = "\n".join(rest).strip("\n")
            kept.append(block)
    doc.blocks = kept
    return moved


def _leader_runs(doc: ParsedDocument) -> set[tuple[int, int]]:
    """(block, line) of each contents line with dot leaders, where MIN_CONTENTS_LINES or more of
    them make a contents list: on one PDF page, or one after another in other formats; their page
    numbers never go down (a statement's "Net gain . . . . 41" rows go up and down)."""
    groups: dict[object, list[tuple[int, int, int]]] = {}
    run = 0
    for number, block in enumerate(doc.blocks):
        for row, line in enumerate(block.text.split("\n")):
            match = LEADER_END.search(line.strip()) if any(ch.isalpha() for ch in line) else None
            if match is None:
                run += 1 if line.strip() and doc.format != "pdf" else 0
                continue
            page = match.group("page")
            key = block.page if doc.format == "pdf" else run
            groups.setdefault(key, []).append((number, row, int(page) if page.isdigit() else -1))
    found: set[tuple[int, int]] = set()
    for rows in groups.values():
        known = [page for _, _, page in rows if page >= 0]
        if len(rows) >= MIN_CONTENTS_LINES and known == sorted(known):
            found.update((number, row) for number, row, _ in rows)
    return found


def _index_pages(doc: ParsedDocument) -> set[int]:
    lines: Counter[int] = Counter()
    entries: Counter[int] = Counter()
    for block in doc.blocks:
        for line in block.text.split("\n"):
            if line.strip():
                lines[block.page] += 1
                entries[block.page] += index_entry(line)
    return {page for page, count in entries.items() if count >= MIN_INDEX_LINES and count >= INDEX_SHARE * lines[page]}


def _titled_index(doc: ParsedDocument) -> int:
    """The block that opens an index at the back of a PDF: a line "Index" ("Concept Index") on its
    own in the second half of the pages, over MIN_INDEX_LINES entries or more (several may run
    into one line), on TITLED_INDEX_SHARE of the lines to the end or more; len(blocks) where there
    is none."""
    for number, block in enumerate(doc.blocks):
        if not _INDEX_TITLE.match(block.text.strip()) or block.page <= doc.pages / 2:
            continue
        lines = [line for later in doc.blocks[number + 1:] for line in later.text.split("\n") if line.strip()]
        counts = [index_entries(line) for line in lines]
        if sum(counts) >= MIN_INDEX_LINES and sum(map(bool, counts)) >= TITLED_INDEX_SHARE * len(lines):
            return number + 1
    return len(doc.blocks)


# What a contents line adds to the title it names: leaders, a cell break, a page number.
_LISTED_PAGE = re.compile(r"(?:[\s.|…]*(?:\d{1,4}|[ivxlc]{1,7}))?[\s.|…]*$", re.IGNORECASE)
_CONTENTS_TITLE = re.compile(r"^(?:table of )?contents$", re.IGNORECASE)


def _title_key(text: str) -> str:
    line = " ".join(text.split())
    return _LISTED_PAGE.sub("", line).lower() if any(ch.isalpha() for ch in line) else ""


def _listed_headings(doc: ParsedDocument, headings: list[Heading]) -> set[tuple[int, int]]:
    """(block, line) of each line of a contents list that names the document's own headings: a run
    of MIN_CONTENTS_LINES or more entries, each the title of a heading further on, on one line or
    broken over two, with or without leaders and a page number (a web page's list of links to its
    sections, a manual's contents page), and the "Contents" line over it."""
    later = {_title_key(heading.title): heading.index for heading in headings}
    heading_blocks = {heading.index for heading in headings}
    lines = [(number, row, line) for number, block in enumerate(doc.blocks) if number not in heading_blocks
             for row, line in enumerate(block.text.split("\n")) if line.strip()]
    found: set[tuple[int, int]] = set()
    run: list[tuple[int, int]] = []
    entries = 0

    def names(at: int, text: str) -> bool:
        target = later.get(_title_key(text))
        return target is not None and target > lines[at][0]

    def close() -> None:
        nonlocal entries
        if entries >= MIN_CONTENTS_LINES:
            found.update(run)
            number, row = run[0]
            if row == 0 and number > 0 and _CONTENTS_TITLE.match(doc.blocks[number - 1].text.strip()):
                found.add((number - 1, 0))
        run.clear()
        entries = 0

    at = 0
    while at < len(lines):
        number, row, line = lines[at]
        if run and number - run[-1][0] > 1:
            close()  # a run is lines in a row, with no heading or other block between
        if names(at, line):
            run.append((number, row))
        elif at + 1 < len(lines) and lines[at + 1][0] - number <= 1 and names(  # a title broken over two lines
                at, line.rstrip("-") + ("" if line.rstrip().endswith("-") else " ") + lines[at + 1][2].strip()):
            run += [(number, row), lines[at + 1][:2]]
            at += 1
        else:
            close()
            at += 1
            continue
        entries += 1
        at += 1
    close()
    return found
