"""PDF → ParsedDocument with PyMuPDF, one page at a time.

Only one page's text dict is alive at any moment; what is kept per page is the finished blocks.
Running headers, footers and page numbers are dropped (see furniture.py), paragraphs broken by a
page turn are rejoined, and the PDF's own bookmarks are kept for the outline structure source.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Callable

import pymupdf

from longqa.config import Limits
from longqa.errors import InputError
from longqa.parse.blocks import Block, OutlineEntry, ParsedDocument
from longqa.parse.decode import looks_binary
from longqa.parse.doc_title import MAN_REFERENCE, generic_heading, name_line
from longqa.parse.furniture import Furniture, Mark
from longqa.parse.ocr import EXTRA, MODES as OCR_MODES, OcrLine, OcrMissing, Styles, page_dict, read_image, render
from longqa.parse.pdf_page import PageBlock, join_lines, page_blocks

# MuPDF reports recoverable damage on stderr; our own errors say what matters, once.
pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)

# Text only: no image blocks; ligatures expanded so that "ﬁnance" is searchable as "finance".
TEXT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES & ~pymupdf.TEXT_PRESERVE_LIGATURES

# MuPDF's notices that mean the file itself is broken (seen on PDFs with one flipped byte).
_DAMAGE = re.compile(
    r"zlib error|syntax error|cannot load object|read error|invalid character in hex string|"
    r"invalid indirect reference|expected (?:string|object|'?obj'?|'endobj')|repair|xref|object out of range|"
    r"unknown keyword|cannot draw text|broken table|premature end",
    re.IGNORECASE,
)
# What MuPDF says while rendering a page whose image is broken ("padding truncated image").
_IMAGE_DAMAGE = re.compile(r"image|jpeg|jpx|jbig2|png|tiff|decod|truncat|zlib|flate|premature|read error", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:;)\]\"”’]$")
# Metadata titles that name a file, a filing number or a tool rather than the document.
_BAD_TITLE = re.compile(
    r"^(?:untitled|microsoft word\b|document\d*$|\d[\d\-]{6,}$)|[\\/]|\.(?:docx?|pdf|indd|xlsx?)\b",
    re.IGNORECASE,
)


def parse_pdf(path: Path, limits: Limits | None = None,
              on_page: Callable[[bool], None] | None = None) -> ParsedDocument:
    """The PDF's text, page by page: a page's text layer, or under `limits.ocr` (auto: pages without
    a text layer that hold an image; always: every page; never: none) its text read by OCR
    (longqa/parse/ocr.py). `on_page` is told of each page as it is read, and whether by OCR."""
    path = Path(path)
    limits = limits or Limits()
    pymupdf.TOOLS.reset_mupdf_warnings()  # what MuPDF reports from here on is about this file
    doc = open_pdf(path)
    try:
        if limits.max_pages and doc.page_count > limits.max_pages:
            raise InputError(
                path, f"{doc.page_count:,} pages, over the {limits.max_pages:,}-page limit (--max-pages lifts it)"
            )
        reading = _Reading(path, limits, on_page)
        read: list[tuple[int, float, list[PageBlock] | list[OcrLine], bool]] = []  # number, height, what, by OCR
        unreadable: list[int] = []
        for number in range(doc.page_count):
            try:
                page = doc.load_page(number)
                height = page.rect.height
                if reading.mode == "always":
                    read.append((number + 1, height, reading.ocr(page, number + 1), True))
                    continue
                items = page_blocks(page.get_text("dict", flags=TEXT_FLAGS), number + 1)
                if not items and reading.mode == "auto" and _has_image(page):
                    read.append((number + 1, height, reading.ocr(page, number + 1), True))
                    continue
                if not items and reading.mode == "never" and _has_image(page):
                    reading.left_out.append(number + 1)
            except InputError:
                raise
            except Exception as exc:  # MuPDF raises plain RuntimeErrors for broken content streams
                detail = (str(exc).splitlines() or [type(exc).__name__])[0]
                if not limits.allow_damaged:
                    raise InputError(path, f"damaged PDF (page {number + 1} cannot be read: {detail}; "
                                           "--allow-damaged stores the other pages)") from None
                unreadable.append(number + 1)
                reading.page_done(False)
                continue
            read.append((number + 1, height, items, False))
            reading.page_done(False)
        text_blocks = [item.block for _, _, items, by_ocr in read if not by_ocr for item in items]
        styles = Styles.of([line for _, _, lines, by_ocr in read if by_ocr for line in lines], text_sizes(text_blocks))
        furniture = Furniture()
        kept: list[tuple[Block, Mark]] = []
        for number, height, found, by_ocr in read:
            if by_ocr:
                width = reading.widths[number]
                found = page_blocks(page_dict(found, styles, width, height), number)
            marks = furniture.observe(found, height)
            kept.extend((item.block, mark) for item, mark in zip(found, marks))
        warnings = [f"damaged PDF: page {n} could not be read and is left out" for n in unreadable]
        warnings.extend(reading.warnings())
        damage = damage_report(doc)
        if damage:
            if not limits.allow_damaged:
                raise InputError(path, f"damaged PDF ({damage}); its text may be wrong or missing "
                                       "(--allow-damaged stores what can be read)")
            warnings.append(f"damaged PDF, stored as read ({damage})")
        blocks = rejoin_pages([block for block, mark in kept if not furniture.is_furniture(mark)])
        if not any(block.text.strip() for block in blocks):  # all of it "furniture": it is the text
            blocks = rejoin_pages([block for block, mark in kept if not mark.page_number])
        if not any(block.text.strip() for block in blocks):
            raise InputError(path, reading.why_no_text(doc))
        outline = read_outline(doc)
        title = choose_title(doc.metadata or {}, blocks, path)
        return ParsedDocument(path=path, title=title, pages=doc.page_count, blocks=blocks,
                              outline=outline, format="pdf", warnings=warnings, ocr_pages=reading.pages)
    finally:
        doc.close()
        pymupdf.TOOLS.reset_mupdf_warnings()


def open_pdf(path: Path) -> pymupdf.Document:
    """Open and unlock a PDF, or raise InputError saying why it cannot be read."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
            handle.seek(max(0, path.stat().st_size - 2048))
            tail = handle.read()
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None
    if not head:
        raise InputError(path, "not a valid PDF (the file is empty)")
    if b"%PDF-" not in head:
        kind = "binary data" if looks_binary(head) else "plain text"
        raise InputError(path, f"not a valid PDF (no PDF header; the content looks like {kind})")
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception:
        raise InputError(path, "damaged PDF (truncated or corrupt; it cannot be opened or repaired)") from None
    if doc.is_repaired and b"%%EOF" not in tail:
        # MuPDF rebuilds what it can of a cut-off file; a partial document is worse than an error.
        doc.close()
        raise InputError(path, "damaged PDF (truncated: the file ends before its end-of-file marker)")
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise InputError(path, "encrypted PDF (password required)")
    if doc.page_count == 0:
        doc.close()
        raise InputError(path, "PDF has no pages")
    return doc


def damage_report(doc: pymupdf.Document) -> str | None:
    """What MuPDF had to repair while reading `doc`, in a few words, or None for a clean read.

    A flipped byte in a compressed stream does not stop MuPDF: it reports the damage, carries on,
    and the text it returns may be junk. Benign notices that healthy files produce too (odd font
    metrics, ActualText spans) are not counted."""
    found = [line.strip() for line in pymupdf.TOOLS.mupdf_warnings().splitlines() if _DAMAGE.search(line)]
    if doc.is_repaired:
        found.insert(0, "its cross-reference table was rebuilt")
    if not found:
        return None
    first = found[0][:120]
    more = len(found) - 1
    return f"MuPDF: {first}" + (f"; {more} more problem{'s' if more > 1 else ''}" if more else "")


def text_sizes(blocks: list[Block]) -> list[float]:
    """The font sizes of `blocks`, the one most of their text is set in first."""
    sizes: Counter[float] = Counter()
    for block in blocks:
        if block.size > 0 and not block.table:
            sizes[block.size] += len(block.text)
    return [size for size, _ in sizes.most_common()]


def _has_image(page: pymupdf.Page) -> bool:
    """Whether the page shows an image (a scan, a photo), where text without a text layer can be."""
    try:
        return bool(page.get_images(full=False)) or bool(page.get_image_info())
    except Exception:  # a broken resource dictionary: let OCR look at what renders
        return True


class _Reading:
    """Which pages a PDF's parse reads by OCR, what came of it, and the warnings that name pages
    left without text."""

    def __init__(self, path: Path, limits: Limits, on_page: Callable[[bool], None] | None) -> None:
        if limits.ocr not in OCR_MODES:
            raise ValueError(f"OCR mode {limits.ocr!r}: choose from {', '.join(OCR_MODES)}")
        self.path, self.mode, self.allow_damaged = path, limits.ocr, limits.allow_damaged
        self.damaged: list[tuple[int, str]] = []  # pages whose damaged image was read as it rendered
        self.on_page = on_page
        self.pages: list[int] = []  # pages whose text came from OCR
        self.empty: list[int] = []  # OCR'd pages where it found nothing (blank, or an image it cannot read)
        self.failed: list[tuple[int, str]] = []  # pages whose image could not be rendered
        self.left_out: list[int] = []  # image pages without a text layer, unread (never, or no engine)
        self.missing: str | None = None  # why OCR could not run (the extra is not installed)
        self.widths: dict[int, float] = {}

    def page_done(self, by_ocr: bool) -> None:
        if self.on_page is not None:
            self.on_page(by_ocr)

    def ocr(self, page: pymupdf.Page, number: int) -> list[OcrLine]:
        """The page's lines as OCR reads them ([] where it cannot, recorded for the warnings). An
        image that MuPDF reports damaged while rendering it fails the document, as any damage
        does, unless --allow-damaged: then what renders of it is read, with a warning."""
        self.widths[number] = page.rect.width
        if self.missing is None:
            try:
                before = len(pymupdf.TOOLS.mupdf_warnings())
                image = render(page)
                damage = [line.strip() for line in pymupdf.TOOLS.mupdf_warnings()[before:].splitlines()
                          if _IMAGE_DAMAGE.search(line)]
                if damage:
                    if not self.allow_damaged:
                        raise InputError(self.path, f"damaged PDF (page {number}: its image is damaged, MuPDF: "
                                                    f"{damage[0][:120]}; --allow-damaged stores what can be read)")
                    self.damaged.append((number, damage[0][:120]))
                lines = read_image(image, page.rect)
            except OcrMissing as exc:
                self.missing = str(exc)
            except InputError:
                raise
            except Exception as exc:  # an image that cannot be rendered at all: this page is named
                detail = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
                self.failed.append((number, detail))
                self.page_done(True)
                return []
            else:
                (self.pages if lines else self.empty).append(number)
                self.page_done(True)
                return lines
        self.left_out.append(number)
        self.page_done(False)
        return []

    def warnings(self) -> list[str]:
        out = [f"page {n}: its image could not be read ({detail}); left out" for n, detail in self.failed]
        out.extend(f"damaged PDF: page {n}'s image is damaged (MuPDF: {detail}); read as it renders"
                   for n, detail in self.damaged)
        if self.empty:
            out.append(f"{_page_list(self.empty)}: OCR found no text (a blank page, or an image it "
                       "cannot read); left out")
        if self.left_out:
            why = f"reading {'it' if len(self.left_out) == 1 else 'them'} needs OCR: {EXTRA}" if self.missing \
                else "--ocr never"
            out.append(f"{_page_list(self.left_out)}: no text layer (scanned or image-only), left out ({why})")
        return out

    def why_no_text(self, doc: pymupdf.Document) -> str:
        """The one line for a PDF where no page gave any text."""
        scanned = "no text layer (scanned or image-only PDF"
        if self.missing:
            return f"{scanned}); reading it needs OCR: {EXTRA}"
        if self.pages or self.empty or self.failed:
            tried = len(self.empty) + len(self.failed)
            return f"{scanned}), and OCR found no text on its {tried:,} page{'s' if tried != 1 else ''} with images"
        for number in range(min(doc.page_count, 20)):
            page = doc.load_page(number)
            if page.get_images() or page.get_drawings():
                return f"{scanned}; --ocr never leaves it unread)"
        return f"no text found (all {doc.page_count} pages are blank)"


def _page_list(pages: list[int]) -> str:
    """"page 4", "pages 2, 5 and 9", "pages 3-7 and 12" (runs of three or more as ranges)."""
    runs: list[str] = []
    start = prev = None
    for n in sorted(pages) + [None]:
        if start is not None and (n is None or n != prev + 1):
            runs.append(str(start) if prev == start else f"{start}, {prev}" if prev == start + 1 else f"{start}-{prev}")
            start = None
        if n is not None and start is None:
            start = n
        prev = n
    label = "page" if len(pages) == 1 else "pages"
    text = ", ".join(runs)
    if ", " in text:
        head, _, last = text.rpartition(", ")
        text = f"{head} and {last}"
    return f"{label} {text}"


def rejoin_pages(blocks: list[Block]) -> list[Block]:
    """Join a paragraph that a page turn cut in two: same style, no sentence end, lower-case start."""
    out: list[Block] = []
    for block in blocks:
        prev = out[-1] if out else None
        if (
            prev is not None
            and block.page == prev.last_page + 1
            and not (prev.table or block.table)
            and (prev.size, prev.bold) == (block.size, block.bold)
            and not _SENTENCE_END.search(prev.text[-1:])  # the last character: prev.text grows
            and block.text[:1].islower()
        ):
            prev.text = join_lines([prev.text, block.text])
            prev.page_end = block.page
        else:
            out.append(block)
    return out


def read_outline(doc: pymupdf.Document) -> list[OutlineEntry]:
    """The bookmarks that point at a page of this document, titles with whitespace normalised."""
    try:
        toc = doc.get_toc(simple=True)
    except Exception:  # a broken outline is no reason to lose the document
        return []
    entries = []
    for level, title, page in toc:
        title = " ".join(str(title).split())
        if title and 1 <= page <= doc.page_count:
            entries.append(OutlineEntry(level=int(level), title=title, page=int(page)))
    return entries


def choose_title(metadata: dict, blocks: list[Block], path: Path) -> str:
    """Metadata title when it looks like one, else a manual page's NAME line, else the largest text
    on page 1, less the generic section names among it ("Introduction" beside the title), else the
    file name."""
    meta = " ".join((metadata.get("title") or "").split())
    if len(re.findall(r"[A-Za-z]", meta)) >= 3 and not _BAD_TITLE.search(meta) and not MAN_REFERENCE.match(meta):
        return meta
    named = name_line(blocks)
    if named:
        return named
    first_page = [b for b in blocks if b.page == 1 and b.size > 0 and not b.table]
    sizes = Counter()
    for block in first_page:
        sizes[block.size] += len(block.text)
    short = [b for b in first_page if len(b.text) <= 200]
    if short and max(b.size for b in short) > sizes.most_common(1)[0][0]:  # larger than page 1's body text
        largest = max(b.size for b in short)
        parts = [b.text for b in short if b.size == largest]
        parts = ([part for part in parts if not generic_heading(part)] or parts)[:3]
        title = re.sub(r"\s+([.,])(?=\s|$)", r"\1", " ".join(" ".join(parts).split()))  # "Inc ." → "Inc."
        if len(re.findall(r"[A-Za-z]", title)) >= 3 and len(title) <= 200:
            return title
    return path.stem
