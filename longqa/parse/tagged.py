"""Text marked up with HTML tags: `.html` files, and text files that are web pages saved with their
tags (Wikipedia dumps such as "<H2> Plot </H2> <P> ... </P> <Table> <Tr> <Td> ..."), often on one
line. Read as plain text, such a file is one paragraph cut every few hundred tokens, tags and all.

Here the tags give the blocks: <h1>-<h6> become heading blocks (the level their number says, as a
markdown `#`), <p>, <li>, <dd>/<dt>, <blockquote> and <pre> paragraphs, a <table> one table block
with a line per row and its cells joined by " | ". Tags never reach the stored text; entities are
decoded; script, style, head and comments are dropped. A tag name is read up to its first
character that cannot be in one, so the dumps' `<Th_colspan="2">` is a `th`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from longqa.parse.blocks import Block, ParsedDocument
from longqa.parse.decode import read_text

# A tag, or a comment, doctype or processing instruction (group 2 is None for those).
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)[^<>]*>|<!--.*?-->|<![A-Za-z][^<>]*>|<\?[^<>]*>", re.S)
_DROPPED = {"script", "style", "head", "noscript", "template", "svg"}  # their content is not text
_PARAGRAPH = {"p", "li", "dt", "dd", "blockquote", "pre", "div", "section", "article", "ul", "ol", "dl",
              "br", "hr", "body", "html", "main", "header", "footer", "nav", "aside", "figure", "figcaption",
              "caption", "form", "center"}
_HEADING = re.compile(r"h([1-6])$")
_CELL = {"td", "th"}
_SPACE = re.compile(r"\s+")
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
    words: list[str] = []  # the running paragraph or heading
    heading: int | None = None
    rows: list[list[str]] = []  # the running table
    cells: list[str] = []
    depth = {"table": 0, "dropped": 0}
    dropped_tag = ""

    def flush() -> None:
        nonlocal heading
        line = _SPACE.sub(" ", html.unescape("".join(words))).strip()
        words.clear()
        if line:
            blocks.append(Block(text=line, page=page, heading=heading))
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

    position = 0
    for match in _TAG.finditer(text):
        between = text[position:match.start()]
        position = match.end()
        if depth["dropped"]:
            if match.group(2) and match.group(2).lower() == dropped_tag and match.group(1):
                depth["dropped"] = 0
            continue
        words.append(between)
        if match.group(2) is None:  # a comment or a declaration
            continue
        closing, name = bool(match.group(1)), match.group(2).lower()
        if name in _DROPPED:
            if not closing:
                depth["dropped"], dropped_tag = 1, name
            continue
        if name == "table":
            if not closing:
                if depth["table"] == 0:
                    flush()
                depth["table"] += 1
            elif depth["table"]:
                depth["table"] -= 1
                if depth["table"] == 0:
                    end_row()
                    if rows:
                        blocks.append(Block(text="\n".join(" | ".join(row) for row in rows), page=page, table=True))
                    rows.clear()
            continue
        if depth["table"]:
            if name == "tr":
                end_row()
            elif name in _CELL:
                end_cell()
            elif name in _PARAGRAPH or _HEADING.match(name):
                words.append(" ")  # a list or paragraph inside a cell stays in the cell
            continue
        level = _HEADING.match(name)
        if level:
            flush()
            if not closing:
                heading = int(level.group(1))
        elif name in _PARAGRAPH:
            flush()
        # any other tag (<a>, <b>, <span>) is inline: dropped, the words either side joined as written
    if not depth["dropped"]:
        words.append(text[position:])
    if depth["table"]:
        end_row()
        if rows:
            blocks.append(Block(text="\n".join(" | ".join(row) for row in rows), page=page, table=True))
    flush()
    return blocks


def parse_tagged(path: Path, text: str | None = None) -> ParsedDocument:
    """A tagged text or `.html` file; its title is the <title>, else the first top-level heading."""
    text = read_text(path) if text is None else text
    title_match = re.search(r"<title[^<>]*>(.*?)</title\s*>", text, re.I | re.S)
    blocks = tagged_blocks(text)
    title = _SPACE.sub(" ", html.unescape(title_match.group(1))).strip() if title_match else ""
    if not title:
        title = next((b.text for b in blocks if b.heading == 1), path.stem)
    return ParsedDocument(path=path, title=title, pages=1, blocks=blocks, format="html")
