"""Text marked up with HTML tags: `.html` files, and text files that are web pages saved with their
tags (Wikipedia dumps such as "<H2> Plot </H2> <P> ... </P> <Table> <Tr> <Td> ..."), often on one
line. Read as plain text, such a file is one paragraph cut every few hundred tokens, tags and all.

Here the tags give the blocks: <h1>-<h6> become heading blocks (the level their number says, as a
markdown `#`), <p>, <li>, <dd>/<dt>, <blockquote> and <pre> paragraphs, a <table> one table block
with a line per row and its cells joined by " | ". Tags never reach the stored text; entities are
decoded; script, style, head and comments are dropped. A table that lays out a page (it holds
headings, paragraphs or preformatted text, or a cell of thousands of characters) is read as the
blocks inside it, not as rows. A tag name is read up to its first
character that cannot be in one, so the dumps' `<Th_colspan="2">` is a `th`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from longqa.parse.blocks import Block, ParsedDocument
from longqa.parse.decode import read_text
from longqa.parse.doc_title import MAN_REFERENCE, generic_heading, name_line
from longqa.parse.text import paragraphs

# A tag, or a comment, doctype or processing instruction (group 2 is None for those).
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)[^<>]*>|<!--.*?-->|<![A-Za-z][^<>]*>|<\?[^<>]*>", re.S)
_DROPPED = {"script", "style", "head", "noscript", "template", "svg"}  # their content is not text
_PARAGRAPH = {"p", "li", "dt", "dd", "blockquote", "pre", "div", "section", "article", "ul", "ol", "dl",
              "br", "hr", "body", "html", "main", "header", "footer", "nav", "aside", "figure", "figcaption",
              "caption", "form", "center"}
_HEADING = re.compile(r"h([1-6])$")
_CELL = {"td", "th"}
_SPACE = re.compile(r"\s+")
_LAYOUT_SIGNS = {"p", "pre", "div", "blockquote"}
LAYOUT_CELL_CHARS = 2000
# A text file counts as tagged when it holds this many block-level tags (a stray "<p>" in prose
# or a formula's "<" does not make a web page).
MIN_TAGS = 8


def looks_tagged(text: str) -> bool:
    count = 0
    for match in _TAG.finditer(text):
        name = (match.group(2) or "").lower()
        if name in _PARAGRAPH or name in _CELL or name == "tr" or _HEADING.match(name):
            count += 1
            if count >= MIN_TAGS:
                return True
    return False


def tagged_blocks(text: str, page: int = 1) -> list[Block]:
    """The blocks of a tagged text, in reading order."""
    blocks: list[Block] = []
    words: list[str] = []  # the running paragraph, heading or table cell
    heading: int | None = None
    rows: list[list[str]] = []  # the running data table
    cells: list[str] = []
    tables: list[bool] = []  # open tables, innermost last: True for a layout table
    dropped_tag = ""  # inside <script>, <style>, ... until its end tag
    preformatted = False  # inside <pre>
    terms: set[int] = set()  # the blocks that are a definition list's terms
    descriptions: set[int] = set()  # ... and those that describe one (inside a <dd>)
    described = False  # inside a <dd>

    def flush() -> None:
        nonlocal heading
        if preformatted:  # lines kept, paragraphs parted by blank lines (a script, a poem)
            blocks.extend(Block(text=part, page=page) for part in paragraphs(html.unescape("".join(words))))
        else:
            line = _SPACE.sub(" ", html.unescape("".join(words))).strip()
            if line:
                blocks.append(Block(text=line, page=page, heading=heading))
        words.clear()
        heading = None

    def end_cell() -> None:
        cell = _SPACE.sub(" ", html.unescape("".join(words))).strip()
        words.clear()
        if cell:
            cells.append(cell)

    def end_row() -> None:
        end_cell()
        if cells:
            rows.append(list(cells))
        cells.clear()

    def end_table() -> None:
        end_row()
        if rows:
            blocks.append(Block(text="\n".join(" | ".join(row) for row in rows), page=page, table=True))
        rows.clear()

    matches = list(_TAG.finditer(text))
    layout = _layout_tables(matches)
    position = 0
    for index, match in enumerate(matches):
        between = text[position:match.start()]
        position = match.end()
        name = (match.group(2) or "").lower()
        if dropped_tag:
            if name == dropped_tag and match.group(1):
                dropped_tag = ""
            continue
        words.append(between)
        if not name:  # a comment or a declaration
            continue
        closing = bool(match.group(1))
        in_data = bool(tables) and not tables[-1]
        if name in _DROPPED:
            if not closing:
                dropped_tag = name
        elif name == "table":
            if not closing:
                if not in_data:  # a table inside a data table's cell stays in the cell
                    flush()
                tables.append(index in layout and not in_data)
            elif tables:
                was_data = not tables.pop()
                if was_data and (not tables or tables[-1]):
                    end_table()
                elif not was_data:
                    flush()
        elif in_data:
            if name == "tr":
                end_row()
            elif name in _CELL:
                end_cell()
            elif name in _PARAGRAPH or _HEADING.match(name):
                words.append(" ")  # a list or paragraph inside a cell stays in the cell
        elif _HEADING.match(name):
            flush()
            if not closing:
                heading = int(name[1])
        elif name in _PARAGRAPH or name in _CELL or name == "tr":  # a layout table's cells part text
            before = len(blocks)
            flush()
            if name == "pre":
                preformatted = not closing
            if len(blocks) > before and (name == "dt" and closing or described):
                (terms if name == "dt" and closing else descriptions).add(len(blocks) - 1)
            if name == "dd":
                described = not closing
        # any other tag (<a>, <b>, <span>) is inline: dropped, the words either side joined as written
    if not dropped_tag:
        words.append(text[position:])
    if tables and not all(tables):
        end_table()
    flush()
    return with_descriptions(blocks, terms, descriptions)


def with_descriptions(blocks: list[Block], terms: set[int], descriptions: set[int]) -> list[Block]:
    """A definition list's term (<dt>) and the first paragraph of its description as one block,
    term on its own line: a description read without its term ("Continue listing the history of
    a file") no longer says what it describes."""
    out: list[Block] = []
    for index, block in enumerate(blocks):
        if index - 1 in terms and index in descriptions and block.heading is None and not block.table and out:
            out[-1] = Block(text=f"{out[-1].text}\n{block.text}", page=block.page)
        else:
            out.append(block)
    return out


def _layout_tables(matches: list) -> set[int]:
    """The indices (into `matches`) of <table> tags that open a page's layout rather than data: a
    table holding headings, <p>, <pre>, <div> or <blockquote> blocks, or a cell of over
    LAYOUT_CELL_CHARS characters (a film script laid out in one cell of a page-wide table)."""
    layout: set[int] = set()
    opened: list[tuple[int, bool]] = []  # (index of the <table>, whether it is layout so far)
    cell_start = -1
    for index, match in enumerate(matches):
        name = (match.group(2) or "").lower()
        if not name or not opened and name != "table":
            continue
        closing = bool(match.group(1))
        if name == "table" and not closing:
            opened.append((index, False))
        elif name == "table" and opened:
            start, is_layout = opened.pop()
            if is_layout:
                layout.add(start)
        elif name in _LAYOUT_SIGNS or _HEADING.match(name):
            opened[-1] = (opened[-1][0], True)
        elif name in _CELL:
            if not closing:
                cell_start = match.end()
            elif cell_start >= 0:
                if match.start() - cell_start > LAYOUT_CELL_CHARS:
                    opened[-1] = (opened[-1][0], True)
                cell_start = -1
    for start, is_layout in opened:  # never closed
        if is_layout:
            layout.add(start)
    return layout


def parse_tagged(path: Path, text: str | None = None) -> ParsedDocument:
    """A tagged text or `.html` file; its title is the <title>, else the first top-level heading."""
    text = read_text(path) if text is None else text
    title_match = re.search(r"<title[^<>]*>(.*?)</title\s*>", text, re.I | re.S)
    blocks = tagged_blocks(text)
    title = _SPACE.sub(" ", html.unescape(title_match.group(1))).strip() if title_match else ""
    if not title or MAN_REFERENCE.match(title):  # "git-log(1)" says less than its NAME line
        title = name_line(blocks) or title or next(
            (b.text for b in blocks if b.heading == 1 and not generic_heading(b.text)), path.stem)
    return ParsedDocument(path=path, title=title, pages=1, blocks=blocks, format="html")
