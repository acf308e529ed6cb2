"""The parsers' common output: ordered blocks of body text, each tied to its pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Block:
    """One paragraph-like run of text as it appears in the source.

    `size` and `bold` describe the dominant font (PDF only; 0/False elsewhere). `heading` is set
    when the source itself marks the block as a heading (a markdown `#` line, an <h2>): 1 is the top level.
    `indent` (PDF only) is how many points the first line starts right of the block's other lines:
    about a font size where a paragraph's first line is indented, about 0 where it is flush left,
    negative for a hanging indent; None where unknown (one line, a table, rotated text, other formats).
    """

    text: str
    page: int = 1
    page_end: int = 0  # 0 means same as `page`
    size: float = 0.0
    bold: bool = False
    heading: int | None = None
    table: bool = False
    indent: float | None = None

    @property
    def last_page(self) -> int:
        return self.page_end or self.page


@dataclass
class OutlineEntry:
    """A bookmark from the PDF's own outline: nesting level (1 = top), title, 1-based page."""

    level: int
    title: str
    page: int


@dataclass
class ParsedDocument:
    path: Path
    title: str
    pages: int
    blocks: list[Block]
    outline: list[OutlineEntry] = field(default_factory=list)
    format: str = "text"  # pdf | markdown | html | text
    warnings: list[str] = field(default_factory=list)  # read, but not cleanly (a repaired PDF)
    ocr_pages: list[int] = field(default_factory=list)  # PDF pages whose text was read by OCR
