"""Margin notes in a PDF: text printed in a page margin beside a body line joins that line's
paragraph, so a reference manual's default printed beside its key ("10pt" beside
`numbersep=<dimension>`) or a command's date beside its description ("Updated: 2020-12-03")
stays with the text it annotates instead of becoming a paragraph of its own.

The text column is found from the page's long lines, on pages that are mostly running text; a
margin holds notes only when no line crosses from it into the column. A block is a note when all
of it lies outside the column, in a margin narrower than half the column (wider space beside the
column holds another column); when it is narrow, short, no table and no number (line numbers,
folios); and when it is set smaller than the text beside it, as margin notes are and the first
column of a table (a name beside a biography, an exhibit number beside its title) is not. A note
left of a paragraph's first line reads before it and is put first; any other note follows the
paragraph's text, whose sentences stay whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa.parse.page_lines import Line, PageBlock, visual_rows

GAP = 3.0  # points between the column's edge and a note
MARGIN_SHARE = 0.5  # a margin is at most this share of the column's width
MIN_CHARS = 200  # a page with less running text has no column to speak of
MIN_LONG_LINES = 4
RUNNING_SHARE = 0.5  # share of the page's characters in long lines: running text, not tables
SMALLER = 0.4  # points: a note is set smaller than the text beside it (a table's cells are not)
NOTE_SHARE = 0.4  # a note's lines are at most this share of the column's width
_NUMBER = re.compile(r"[\d\s.,:;()–-]+|[ivxlcdm]+\.?", re.IGNORECASE)


@dataclass
class Margins:
    left: float  # the text column's edges
    right: float
    page_width: float
    notes_left: bool = True  # whether each margin may hold notes
    notes_right: bool = True

    @classmethod
    def of(cls, lines: list[Line], page_width: float) -> Margins | None:
        """The page's text column, or None when the page has too little running text to tell:
        the column runs from the leftmost start to the rightmost end of its long lines (three
        fifths of the widest line or more), which notes and labels never are."""
        flat = [line for line in lines if line.horizontal]
        widest = max((line.x1 - line.x0 for line in flat), default=0.0)
        long = [line for line in flat if line.x1 - line.x0 >= 0.6 * widest]
        chars = sum(len(line.text) for line in long)
        every = sum(len(line.text) for line in flat)
        if len(long) < MIN_LONG_LINES or chars < MIN_CHARS or chars < RUNNING_SHARE * every:
            return None  # a page of tables, figures or short lines
        left, right = min(line.x0 for line in long), max(line.x1 for line in long)
        # A margin is clean: a line that starts in it ends in it (a table's cells cross the edge).
        clean_left = all(line.x1 <= left - GAP for line in flat if line.x0 < left - GAP)
        clean_right = all(line.x0 >= right + GAP for line in flat if line.x1 > right + GAP)
        return cls(left, right, page_width, clean_left, clean_right)

    def side(self, x0: float, x1: float, text: str) -> str | None:
        """"left" or "right" for text from x0 to x1 that lies in a margin, else None."""
        width = self.right - self.left
        if _NUMBER.fullmatch(text) or x1 - x0 > NOTE_SHARE * width:
            return None
        if self.notes_left and x1 <= self.left - GAP and self.left <= MARGIN_SHARE * width:
            return "left"
        room = self.page_width - self.right
        if self.notes_right and x0 >= self.right + GAP and 0 < room <= MARGIN_SHARE * width:
            return "right"
        return None

    def is_note(self, item: PageBlock) -> bool:
        return (item.block.size > 0 and not item.block.table and item.block.text.count(" ") < 40
                and self.side(item.x0, item.x1, item.block.text) is not None)

    def split_notes(self, lines: list[Line]) -> tuple[list[list[list[Line]]], list[Line]]:
        """A PyMuPDF block's margin lines level with a larger body line of the block, as runs of
        rows (one line each) for blocks of their own, and its other lines. Only running text
        gives up its margin lines: in a table (two cells or more left in a row) a cell past the
        column's edge is the table's."""
        sides = [self.side(line.x0, line.x1, line.text) if line.horizontal else None for line in lines]
        if not any(sides):
            return [], lines
        body = [line for line, side in zip(lines, sides) if side is None]
        sides = [side if side and any(_level(line, other) and line.size < other.size - SMALLER for other in body)
                 else None for line, side in zip(lines, sides)]
        if not any(sides):
            return [], lines
        for row in visual_rows([line for line, side in zip(lines, sides) if side is None]):
            if len(row) > 1:
                return [], lines
        runs: list[list[list[Line]]] = []
        last: tuple[Line, str] | None = None
        for line, side in zip(lines, sides):
            if side is None:
                continue
            near = last is not None and last[1] == side and line.y0 - last[0].y1 < 0.8 * (line.y1 - line.y0)
            if near:
                runs[-1].append([line])
            else:
                runs.append([[line]])
            last = (line, side)
        return runs, [line for line, side in zip(lines, sides) if side is None]

    def beside(self, note: PageBlock, items: list[PageBlock]) -> PageBlock | None:
        """The body block with a line at the height of the note's first line, the nearest one
        across when there are several."""
        middle = (note.y0 + note.first_y1) / 2
        found = [item for item in items
                 if item.block.size > note.block.size + SMALLER and item.y0 - 1 <= middle <= item.y1 + 1
                 and item.x1 > self.left and item.x0 < self.right and not self.is_note(item)]
        if note.x1 <= self.left:
            return min(found, key=lambda item: item.x0 - note.x1, default=None)
        return min(found, key=lambda item: note.x0 - item.x1, default=None)

    def notes_beside_text(self, items: list[PageBlock]) -> list[PageBlock]:
        """The notes that have a body line beside them (others stay blocks of their own)."""
        return [item for item in items if self.is_note(item) and self.beside(item, items) is not None]

    def attach(self, notes: list[PageBlock], items: list[PageBlock]) -> list[PageBlock]:
        """Each note's text joined to the paragraph beside it in `items`; returns `items`."""
        for note in sorted(notes, key=lambda n: n.y0):
            target = self.beside(note, items)
            if target is None:  # cannot happen for a note found beside the unmerged blocks
                items.append(note)
                continue
            first_line = (note.y0 + note.first_y1) / 2 <= target.first_y1
            if note.x1 <= self.left and first_line:
                target.block.text = f"{note.block.text} {target.block.text}"
            else:
                target.block.text = f"{target.block.text} {note.block.text}"
        return items


def _level(note: Line, line: Line) -> bool:
    """Whether the middle of `note` is at the height of `line`."""
    return line.y0 <= (note.y0 + note.y1) / 2 <= line.y1
