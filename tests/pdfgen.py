"""Write real PDFs with PyMuPDF for the tests: styled lines and paragraphs, headers, footers, bookmarks.

A page is a list of items laid out top to bottom. `P(text)` is a body paragraph wrapped to the
text width (`indent` moves its first line right); `H(text, size, bold)` is a one-line heading;
`Row(cells)` puts cells side by side on one baseline (a table row). Paragraphs are separated by a
blank line's worth of space.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

WIDTH, HEIGHT = 612, 792
LEFT, RIGHT, TOP, BOTTOM = 72, 540, 90, 700
BODY = 10.0


@dataclass
class P:
    text: str
    size: float = BODY
    bold: bool = False
    indent: float = 0.0  # the first line starts this many points right of the others


@dataclass
class H:
    text: str
    size: float = 14.0
    bold: bool = True


@dataclass
class Row:
    cells: list[str]
    size: float = BODY
    bold: bool = False
    xs: list[float] = field(default_factory=lambda: [LEFT, 330, 440])


def font(bold: bool) -> str:
    return "hebo" if bold else "helv"


def wrap(text: str, size: float, bold: bool, width: float = RIGHT - LEFT) -> list[str]:
    """Greedy word wrap; a word too long for the line stays whole. A trailing '-' is kept as typed."""
    lines, current = [], ""
    for word in text.split():
        trial = f"{current} {word}" if current else word
        if current and pymupdf.get_text_length(trial, fontname=font(bold), fontsize=size) > width:
            lines.append(current)
            current = word
        else:
            current = trial
    if current:
        lines.append(current)
    return lines


def draw_page(page: pymupdf.Page, items: list) -> None:
    y = TOP
    for item in items:
        if isinstance(item, Row):
            y += item.size * 1.4
            for x, cell in zip(item.xs, item.cells):
                page.insert_text((x, y), cell, fontsize=item.size, fontname=font(item.bold))
            continue
        lines = [item.text] if isinstance(item, H) else item.text.split("\n") if "\n" in item.text else wrap(
            item.text, item.size, item.bold)
        y += item.size * 1.2  # space before the block
        for number, line in enumerate(lines):
            y += item.size * 1.25
            x = LEFT + (item.indent if isinstance(item, P) and number == 0 else 0.0)
            page.insert_text((x, y), line, fontsize=item.size, fontname=font(item.bold))
        y += item.size * 0.3


def make_pdf(
    path: Path,
    pages: list[list],
    *,
    header: str | None = None,
    footer: str | None = None,
    toc: list[list] | None = None,
    title: str | None = None,
    user_password: str | None = None,
) -> Path:
    """Write `pages` to `path`. `footer` may contain {n} and {total}; empty pages get no furniture."""
    doc = pymupdf.open()
    for number, items in enumerate(pages, start=1):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        if not items:
            continue
        if header:
            page.insert_text((LEFT, 36), header, fontsize=8, fontname="helv")
        if footer:
            page.insert_text((LEFT + 200, 760), footer.format(n=number, total=len(pages)), fontsize=8, fontname="helv")
        draw_page(page, items)
    if toc:
        doc.set_toc(toc)
    if title is not None:
        doc.set_metadata({"title": title})
    if user_password:
        doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw=user_password, owner_pw=user_password + "-owner")
    else:
        doc.save(path)
    doc.close()
    return path


def image_only_pdf(path: Path) -> Path:
    """One page holding a picture and no text at all, like a scan without OCR."""
    doc = pymupdf.open()
    page = doc.new_page(width=WIDTH, height=HEIGHT)
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 80), False)
    pixmap.set_rect(pixmap.irect, (230, 230, 220))
    page.insert_image(pymupdf.Rect(72, 72, 540, 700), pixmap=pixmap)
    doc.save(path)
    doc.close()
    return path


def scanned_pdf(source: Path, path: Path, *, dpi: int = 200, pages: set[int] | None = None,
                metadata: bool = False) -> Path:
    """`source` with its pages (1-based `pages`, every page when None) replaced by pictures of
    themselves, rendered in grey at `dpi` as a scanner would: pages with no text layer. The other
    pages are copied as they are; `metadata` keeps the source's (a title), which a scan lacks."""
    with pymupdf.open(source) as src, pymupdf.open() as doc:
        for number, page in enumerate(src, start=1):
            if pages is not None and number not in pages:
                doc.insert_pdf(src, from_page=number - 1, to_page=number - 1)
                continue
            picture = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            new = doc.new_page(width=page.rect.width, height=page.rect.height)
            new.insert_image(new.rect, stream=picture.tobytes("png"))
        if metadata:
            doc.set_metadata(src.metadata or {})
        doc.save(path, deflate=True)
    return path


def zero_page_pdf(path: Path) -> Path:
    """A syntactically valid PDF whose page tree is empty (PyMuPDF refuses to save one itself)."""
    path.write_bytes(
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
        b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
        b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"
    )
    return path


def sentence(topic: str, n: int = 3) -> str:
    """Plain filler prose about `topic`, n sentences, each different so leaves can be told apart."""
    parts = [
        f"The {topic} study recorded observation number {i} with careful notes on the conditions of the day."
        for i in range(1, n + 1)
    ]
    return " ".join(parts)
