"""A PDF page's lines and blocks as they sit on the page: the records pdf_page.py builds from
PyMuPDF's text dict and margins.py reads to find notes beside the text column, and the grouping
of lines into rows that both use."""

from __future__ import annotations

from dataclasses import dataclass

from longqa.parse.blocks import Block


@dataclass
class Line:
    text: str
    size: float  # dominant span size, by characters
    bold: bool
    x0: float
    x1: float
    y0: float
    y1: float
    horizontal: bool

    @property
    def style(self) -> tuple[float, bool]:
        return round(self.size * 2) / 2, self.bold


@dataclass
class PageBlock:
    """A block before furniture filtering: the Block plus where it sat on the page."""

    block: Block
    y0: float
    y1: float
    last_width: float = 0.0  # width of the block's final line: a full line means the paragraph goes on
    first_x0: float = 0.0  # left edge of the block's first line
    rest_x0: float | None = None  # left edge of the other lines of its text (None: no other line)
    opens: bool = False  # the first line is a line of its own, not the rest of one cut into cells
    x0: float = 0.0  # left and right edges of all its lines
    x1: float = 0.0
    first_y1: float = 0.0  # bottom of its first line

    def set_indent(self) -> None:
        """Block.indent from the two edges (rounded to 0.1 pt); None while it cannot be told."""
        if not self.opens or self.rest_x0 is None or self.block.table or self.block.size <= 0:
            self.block.indent = None
        else:
            self.block.indent = round(self.first_x0 - self.rest_x0, 1)


def visual_rows(lines: list[Line]) -> list[list[Line]]:
    """Group lines whose vertical extents overlap by more than half into rows, cells left to right."""
    rows: list[list[Line]] = []
    for line in lines:
        row = rows[-1] if rows else None
        if row and line.horizontal and row[0].horizontal:
            top, bottom = max(line.y0, row[0].y0), min(line.y1, row[0].y1)
            height = min(line.y1 - line.y0, row[0].y1 - row[0].y0) or 1.0
            if bottom - top > 0.5 * height:
                row.append(line)
                continue
        rows.append([line])
    return [sorted(row, key=lambda cell: cell.x0) for row in rows]
