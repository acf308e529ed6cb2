"""Build examples/kestrel_valley_handbook.pdf, the README quick-start document.

The handbook is fictional (no such plant exists) and was written for this project. Run:

    python examples/make_sample.py

A small layout routine puts the text of sample_text.py on A4 pages with the PDF base fonts (no
embedded fonts, so the file stays small and its text extracts without ligatures): headings in
larger bold type, wrapped justified-left paragraphs, ruled tables, a footer with the page number
and a bookmark outline. It prints the page where each section starts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf

from sample_text import HANDBOOK_HTML

OUT = Path(__file__).with_name("kestrel_valley_handbook.pdf")
PAGE = pymupdf.paper_rect("a4")
MARGIN = 78
WIDTH = PAGE.width - 2 * MARGIN
STYLES = {  # block kind: (font, size, leading, space before, space after)
    "h1": ("hebo", 19, 24, 0, 12),
    "h2": ("hebo", 14.5, 19, 14, 4),
    "h3": ("hebo", 12, 16, 8, 3),
    "p": ("tiro", 11.5, 15.5, 0, 7),
    "cell": ("tiro", 10, 12.5, 0, 0),
    "head": ("tibo", 10, 12.5, 0, 0),
}


def blocks(html: str) -> list[tuple[str, object]]:
    """(kind, text) for headings and paragraphs, ("table", rows) for tables, in order."""
    found = []
    for kind, body in re.findall(r"<(h1|h2|h3|p|table)>(.*?)</\1>", html, re.S):
        if kind == "table":
            rows = [[_plain(c) for c in re.findall(r"<t[hd]>(.*?)</t[hd]>", r, re.S)]
                    for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
            found.append(("table", rows))
        else:
            found.append((kind, _plain(body)))
    return found


def _plain(text: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", text).replace("&amp;", "&").split())


def wrap(text: str, font: str, size: float, width: float) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if line and pymupdf.get_text_length(trial, fontname=font, fontsize=size) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    return lines + ([line] if line else [])


class Writer:
    def __init__(self):
        self.doc = pymupdf.open()
        self.page = None
        self.y = PAGE.height
        self.toc: list[list] = []

    def room(self, height: float) -> None:
        if self.page is None or self.y + height > PAGE.height - MARGIN:
            self.page = self.doc.new_page(width=PAGE.width, height=PAGE.height)
            self.y = MARGIN

    def text(self, kind: str, text: str) -> None:
        font, size, leading, before, after = STYLES[kind]
        lines = wrap(text, font, size, WIDTH)
        keep = len(lines) * leading if kind != "p" else 2 * leading  # a heading stays with its text
        self.room(before + keep + (3 * STYLES["p"][2] if kind != "p" else 0))
        self.y += before if self.y > MARGIN else 0
        if kind in ("h2", "h3"):
            self.toc.append([2 if kind == "h2" else 3, text, self.doc.page_count])
        for line in lines:
            self.room(leading)
            self.page.insert_text((MARGIN, self.y + size), line, fontname=font, fontsize=size)
            self.y += leading
        self.y += after

    def table(self, rows: list[list[str]]) -> None:
        columns = len(rows[0])
        width = WIDTH / columns
        for index, row in enumerate(rows):
            kind = "head" if index == 0 else "cell"
            font, size, leading, _, _ = STYLES[kind]
            cells = [wrap(cell, font, size, width - 8) for cell in row]
            height = max(len(c) for c in cells) * leading + 6
            self.room(height)
            for column, lines in enumerate(cells):
                x = MARGIN + column * width
                self.page.draw_rect(pymupdf.Rect(x, self.y, x + width, self.y + height), width=0.5)
                for n, line in enumerate(lines):
                    self.page.insert_text((x + 4, self.y + 3 + size + n * leading), line, fontname=font, fontsize=size)
            self.y += height
        self.y += 8

    def finish(self, path: Path) -> None:
        for number, page in enumerate(self.doc, start=1):
            page.insert_text((MARGIN, PAGE.height - 40),
                             f"Kestrel Valley Water Treatment Works - Operations Handbook - page {number}",
                             fontname="helv", fontsize=8)
        self.doc.set_toc([[level - 1, title, page] for level, title, page in self.toc])
        self.doc.set_metadata({"title": "Kestrel Valley Water Treatment Works: Operations Handbook",
                               "author": "longqa example (a fictional document)"})
        self.doc.save(str(path), garbage=4, deflate=True)


def main() -> None:
    writer = Writer()
    for kind, content in blocks(HANDBOOK_HTML):
        if kind == "table":
            writer.table(content)
        else:
            writer.text(kind, content)
    writer.finish(OUT)
    for level, title, page in writer.toc:
        if level == 2:
            print(f"p. {page}  {title}")
    print(f"wrote {OUT.name}: {writer.doc.page_count} pages, {OUT.stat().st_size / 1024:.0f} KB")


if __name__ == "__main__":
    main()
