"""One PDF page's text dict (PyMuPDF `get_text("dict")`) → paragraph blocks with their dominant font.

A PyMuPDF block is split where the line style (size, bold) changes, so that a heading printed in
the same block as its body text becomes a block of its own. Lines that sit side by side on one
baseline are table cells: such rows are kept one per line with cells separated by " | ", and a
cell's text wrapped onto further lines under its column is joined back into its row, so each row
stays one line (one sentence) whole.
"""

from __future__ import annotations

import re
from longqa.parse.blocks import Block
from longqa.parse.margins import Margins
from longqa.parse.page_lines import Line, PageBlock, visual_rows

# A numbering label or bullet printed as its own cell left of the text it belongs to.
_LABEL_CELL = re.compile(
    r"^(?:[•●▪◦‣∙·\-–—*]|\(?[0-9]{1,2}[.)]?|\(?[a-zA-Z][.)]|\d{1,2}(?:\.\d{1,2})+\.?|"
    r"(?:part|item|chapter|section|article|note)\s+[0-9IVXLC]{1,4}[A-Z]?\.?)$",
    re.IGNORECASE,
)
_CURRENCY = {"$", "€", "£", "¥", "(", "$("}
_HYPHEN_END = re.compile(r"[A-Za-z]-$")
_ENDS_SENTENCE = re.compile(r"[.!?:;,][\"'”’)\]]*$")


def is_bold(span: dict) -> bool:
    return bool(span["flags"] & 16) or "bold" in span["font"].lower()


def make_line(raw: dict) -> Line | None:
    weights: dict[tuple[float, bool], int] = {}
    parts = []
    for span in raw["spans"]:
        text = span["text"]
        parts.append(text)
        n = len(text.strip())
        if n:
            key = (span["size"], is_bold(span))
            weights[key] = weights.get(key, 0) + n
    text = " ".join("".join(parts).split())
    if not text:
        return None
    size, bold = max(weights, key=weights.__getitem__)
    dx, dy = raw["dir"]
    x0, y0, x1, y1 = raw["bbox"]
    return Line(text, size, bold, x0, x1, y0, y1, abs(dy) < 0.05 and dx > 0)


def merge_cells(row: list[Line]) -> list[Line]:
    """Re-attach bullets and numbering labels (first cell only), currency signs and trailing "%"."""
    cells: list[Line] = []
    for cell in row:
        prev = cells[-1] if cells else None
        if prev and prev.text in _CURRENCY:
            cells[-1] = _joined(prev, cell, "")
        elif prev and len(cells) == 1 and _LABEL_CELL.match(prev.text) and _has_letters(cell.text):
            cells[-1] = _joined(prev, cell, " ")
        elif prev and cell.text in ("%", ")", "%)"):
            cells[-1] = _joined(prev, cell, "")
        else:
            cells.append(cell)
    return cells


def join_wrapped_cells(rows: list[list[Line]]) -> list[list[Line]]:
    """Rows with the lines of a wrapped cell joined back into the row they continue (wraps_cells)."""
    out: list[list[Line]] = []
    for row in rows:
        owners = wraps_cells(out[-1], row) if out else None
        if owners is None:
            out.append(row)
            continue
        cells = list(out[-1])
        for line, index in zip(row, owners):
            cell = cells[index]
            cells[index] = Line(join_lines([cell.text, line.text]), cell.size, cell.bold, cell.x0,
                                max(cell.x1, line.x1), cell.y0, max(cell.y1, line.y1), cell.horizontal)
        out[-1] = cells
    return out


def wraps_cells(previous: list[Line], row: list[Line]) -> list[int] | None:
    """For a row that goes on with cells of the table row above it, the index of the cell each of
    its lines continues; None when it is a row (or text) of its own.

    A description too long for its column wraps onto the next line under the column: that line has
    nothing in the first column (where each row names its item), sits a line's gap below, and each
    of its lines starts at the left edge of a cell of words above it. A line of figures under
    figures is a row of its own (a total without a label)."""
    if len(previous) < 2 or not all(cell.horizontal for cell in previous + row):
        return None
    slack = _hanging_slack(previous[0])
    if row[0].x0 < previous[1].x0 - slack:  # something in the first column: a row of its own
        return None
    bottom = max(cell.y1 for cell in previous)
    if not -2.0 <= row[0].y0 - bottom < 0.8 * previous[0].size:
        return None
    owners: list[int] = []
    for line in row:
        index = next((i for i, cell in enumerate(previous) if abs(cell.x0 - line.x0) <= slack), None)
        if index is None or index in owners:
            return None
        if not (_has_letters(line.text) and _has_letters(previous[index].text)):
            return None
        owners.append(index)
    return owners


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def _joined(left: Line, right: Line, joiner: str) -> Line:
    main = right if len(right.text) >= len(left.text) else left
    return Line(left.text + joiner + right.text, main.size, main.bold, left.x0, max(left.x1, right.x1),
                min(left.y0, right.y0), max(left.y1, right.y1), left.horizontal and right.horizontal)


def join_lines(texts: list[str]) -> str:
    """Wrapped lines of one paragraph → one string; a word hyphenated at a line end is rejoined."""
    out = ""
    for text in texts:
        if out and _HYPHEN_END.search(out[-2:]) and text[:1].islower():  # the end only: `out` grows
            out = out[:-1] + text
        else:
            out = f"{out} {text}" if out else text
    return out


def _segment_block(rows: list[list[Line]], page: int, left: float | None = None, opens: bool = False) -> PageBlock:
    """One block from consecutive rows; `left` is the left edge of the other lines of the PDF's
    own block (None: it has no other line), `opens` whether the first row starts a line of text."""
    lines = [cell for row in rows for cell in row]
    weights: dict[tuple[float, bool], int] = {}
    for line in lines:
        weights[line.style] = weights.get(line.style, 0) + len(line.text)
    size, bold = max(weights, key=weights.__getitem__)
    table = any(len(row) > 1 for row in rows)
    if table:
        text = "\n".join(" | ".join(cell.text for cell in row) for row in rows)
    elif _term_line(rows):  # a term on a line of its own over its description: kept apart from it
        text = rows[0][0].text + "\n" + join_lines([row[0].text for row in rows[1:]])
    else:
        text = join_lines([row[0].text for row in rows])
    if not any(line.horizontal for line in lines):
        size = 0.0  # rotated or vertical text (margin stamps) is never a heading or the title
    block = Block(text=text, page=page, size=size, bold=bold, table=table)
    last = rows[-1]
    item = PageBlock(block, min(l.y0 for l in lines), max(l.y1 for l in lines), last[-1].x1 - last[0].x0,
                     rows[0][0].x0, left, opens, min(l.x0 for l in lines), max(l.x1 for l in lines),
                     max(l.y1 for l in rows[0]))
    item.set_indent()
    return item


def page_blocks(page_dict: dict, page: int) -> list[PageBlock]:
    """All text blocks of one page in reading order, split at style and table/text changes; text
    in a page margin beside a body line joins that line's paragraph (margins.py)."""
    raw_lines = [[line for line in map(make_line, raw["lines"]) if line is not None]
                 for raw in page_dict["blocks"] if raw.get("type", 0) == 0]
    page_lines = [line for lines in raw_lines for line in lines]
    if not page_lines:
        return []
    text_width = max(line.x1 for line in page_lines) - min(line.x0 for line in page_lines)
    margins = Margins.of(page_lines, page_dict.get("width", 0.0))
    out: list[PageBlock] = []
    for lines in raw_lines:
        if margins is not None:
            # MuPDF may put a note in the block of the line beside it: a row of two cells
            # that would cut the paragraph; the note becomes a block of its own.
            notes, lines = margins.split_notes(lines)
            out.extend(_segment_block(run, page) for run in notes)
        out.extend(_raw_block_items(lines, page))
    if margins is None:
        return merge_wrapped(out, text_width)
    notes = margins.notes_beside_text(out)
    taken = {id(note) for note in notes}
    return margins.attach(notes, merge_wrapped([item for item in out if id(item) not in taken], text_width))


def _raw_block_items(lines: list[Line], page: int) -> list[PageBlock]:
    """One PyMuPDF block's lines as blocks, split where the style or the table/text kind changes,
    and between the items of a list set with a hanging indent (next_item)."""
    out: list[PageBlock] = []
    rows = join_wrapped_cells([merge_cells(row) for row in visual_rows(lines)])
    items = {i for i in range(1, len(rows)) if next_item(rows[:i], rows[i], rows[i + 1] if i + 1 < len(rows) else None)}
    segment: list[list[Line]] = []
    edge: float | None = None
    opens = True

    def close() -> None:
        # A list item's other lines are its own; otherwise the other lines of the PDF's block.
        own = min((r[0].x0 for r in segment[1:]), default=None) if items else edge
        out.append(_segment_block(segment, page, own, opens))

    for i, row in enumerate(rows):
        if segment and (_breaks(segment[-1], row) or i in items):
            close()
            segment = []
        if not segment:
            # A segment opens a line of its own at the block's start or after a change of
            # style (a heading); after a switch between table rows and text it may go on with
            # a line that a wide gap between words cut into cells.
            opens = i == 0 or (len(rows[i - 1]) == 1 and len(row) == 1)
            edge = min((r[0].x0 for j, r in enumerate(rows) if j != i), default=None)
        segment.append(row)
    if segment:
        close()
    return out


_BULLET_START = re.compile(r"^(?:[•●▪◦‣∙·*]|\(?[0-9a-z]{1,2}\))\s")


def merge_wrapped(items: list[PageBlock], text_width: float) -> list[PageBlock]:
    """Rejoin a paragraph that the PDF wrote one line per block: same style, a line's gap apart,
    and the earlier line running at least half the text width (a short line ends its paragraph)."""
    out: list[PageBlock] = []
    for item in items:
        prev = out[-1] if out else None
        if prev is not None and _describes(prev, item):  # a term on its own line, then its description
            prev.block.text = f"{prev.block.text}\n{item.block.text}"
            prev.y1, prev.last_width = item.y1, item.last_width
            prev.x0, prev.x1 = min(prev.x0, item.x0), max(prev.x1, item.x1)
            prev.rest_x0 = item.first_x0
            prev.set_indent()
        elif prev is not None and _continues(prev, item, text_width):
            prev.block.text = join_lines([prev.block.text, item.block.text])
            prev.y1, prev.last_width = item.y1, item.last_width
            prev.x0, prev.x1 = min(prev.x0, item.x0), max(prev.x1, item.x1)
            if prev.rest_x0 is None:  # a paragraph written one line per block: the next line's edge
                prev.rest_x0 = item.first_x0
                prev.set_indent()
        else:
            out.append(item)
    return out


def _describes(prev: PageBlock, item: PageBlock) -> bool:
    """Whether `item` is the description of the term that `prev` is: a short line of the same
    style without a sentence's end, with `item` a line's gap below and wholly indented deeper."""
    a, b = prev.block, item.block
    if a.table or b.table or a.size <= 0 or (a.size, a.bold) != (b.size, b.bold) or prev.rest_x0 is not None:
        return False
    deeper = prev.first_x0 + 0.5 * a.size
    return (term_like(a.text) and "\n" not in a.text and prev.last_width < 0.5 * (item.x1 - item.x0)
            and item.first_x0 > deeper and (item.rest_x0 is None or item.rest_x0 > deeper)
            and -2.0 <= item.y0 - prev.y1 < 0.8 * a.size)


def _term_after(prev: PageBlock, item: PageBlock, text_width: float) -> bool:
    """Whether `item` opens with a term set left of the description `prev` ends: a short line
    without a sentence's end, outdented from `prev`'s lines, alone or over deeper lines."""
    slack = 0.5 * prev.block.size
    left = min(prev.first_x0, prev.rest_x0 if prev.rest_x0 is not None else prev.first_x0)
    first = item.block.text.split("\n")[0]
    # Alone, it ends left of the description above it (a centred line that wraps wider does not).
    alone = item.rest_x0 is None and item.x1 - item.x0 < 0.5 * text_width and item.x1 < prev.x1
    over = item.rest_x0 is not None and item.rest_x0 > item.first_x0 + slack and "\n" in item.block.text
    return item.first_x0 < left - slack and term_like(first) and (alone or over)


def _continues(prev: PageBlock, item: PageBlock, text_width: float) -> bool:
    a, b = prev.block, item.block
    if a.table or b.table or a.size <= 0 or (a.size, a.bold) != (b.size, b.bold):
        return False
    if prev.rest_x0 is not None and prev.rest_x0 > prev.first_x0 + 0.5 * a.size >= abs(item.first_x0 - prev.first_x0):
        return False  # the next item of a list set with a hanging indent (next_item)
    if _term_after(prev, item, text_width):
        return False
    gap = item.y0 - prev.y1
    full = prev.last_width >= 0.5 * text_width
    return full and -2.0 <= gap < 0.8 * a.size and not _BULLET_START.match(b.text)


def _hanging_slack(line: Line) -> float:
    return 0.5 * line.size  # columns closer than half a character are one column


def next_item(segment: list[list[Line]], row: list[Line], following: list[Line] | None = None) -> bool:
    """Whether `row` opens the next item of a list set with a hanging indent (a manual page's
    options or FILES, a reference list): it goes back left from a line indented deeper, to the
    column of an earlier line of `segment` that had deeper lines under it, or as a term, a short
    line without a sentence's end, with nothing or a deeper line (its description) after it. Each
    term stays with its description, never run on into the one before."""
    if len(row) > 1 or not segment or len(segment[-1]) > 1:
        return False
    line, slack = row[0], _hanging_slack(row[0])
    if line.x0 >= segment[-1][0].x0 - slack:
        return False
    if any(abs(upper[0].x0 - line.x0) <= slack and lower[0].x0 > upper[0].x0 + slack and term_like(upper[0].text)
           for upper, lower in zip(segment, segment[1:])):
        return True
    widest = max(cell.x1 for row in segment for cell in row) - min(cell.x0 for row in segment for cell in row)
    # A term ends left of the description line above it; a centred line that wraps wider does not.
    return (term_like(line.text) and line.x1 - line.x0 < 0.5 * widest and line.x1 < segment[-1][0].x1
            and (following is None or len(following) == 1 and following[0].x0 > line.x0 + slack))


def term_like(text: str) -> bool:
    """A line that can be a definition list's term: no sentence ends it."""
    return not _ENDS_SENTENCE.search(text)


def _term_line(rows: list[list[Line]]) -> bool:
    """Whether the first row is a term set on a line of its own over its description: a short line
    with the lines below it indented deeper."""
    if len(rows) < 2 or any(len(row) > 1 for row in rows):
        return False
    first, rest = rows[0][0], [row[0] for row in rows[1:]]
    widest = max(line.x1 - line.x0 for line in rest)
    return min(line.x0 for line in rest) > first.x0 + _hanging_slack(first) and first.x1 - first.x0 < 0.5 * widest


def _breaks(previous: list[Line], row: list[Line]) -> bool:
    """Start a new block when a row changes style or switches between table and running text."""
    if (len(previous) > 1) != (len(row) > 1):
        return True
    return len(row) == 1 and previous[0].style != row[0].style
