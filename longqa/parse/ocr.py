"""Text of image-only PDF pages by OCR: each page rendered with PyMuPDF, read by RapidOCR (PP-OCR
models run by onnxruntime, shipped inside the package: nothing is downloaded), its lines turned
into a page dict of the shape PyMuPDF's `get_text("dict")` gives, so that they go through the same
structure path as a text page (pdf_page.page_blocks: paragraphs, tables, headings by size).

An OCR engine gives each line's text and box, not its font; the box's height follows the line's
length more than its type. So a line's size is measured on its ink: the height of its capitals and
ascenders above its baseline (measure()). The sizes of a document's lines are then grouped, so
that its body text has one size (each change of size cuts a paragraph), while what stands clearly
above the body (titles, headings) keeps a size of its own; bold is told by ink too: a line whose
strokes cover clearly more of its box than the body's do.

The engine is an extra (`pip install 'longqa[ocr]'`); `available()` says whether it is installed.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from statistics import median

MODES = ("auto", "always", "never")
EXTRA = "pip install 'longqa[ocr]'"
# Pages are rendered at this resolution for the engine. PP-OCR's detector works on at most 2,000
# pixels a side (RapidOCR's max_side_len), which an A4 page reaches at about 170 dpi; more costs
# rendering time and gains nothing (bench/RESULTS.md, "OCR of image-only pages").
DPI = 200
MIN_SCORE = 0.5  # lines the recogniser is less sure of are noise (specks, stamps, smudges)
BODY_SPREAD = 0.08  # a line whose measured size is within this share of the body's is body text
SIZE_GAP = 0.1  # other sizes closer than this share apart are one size
BOLD_INK = 1.3  # a line whose ink share is this many times the body's is bold
DARK = 128  # grey levels below this are ink
RULE = 0.8  # a row of a line's box dark over this share of its width is a rule, not type
# Capitals, digits and ascenders stand this share of the font size above the baseline (Times 0.66-
# 0.68, Helvetica 0.72); short letters ("x") about half of it.
ASCENT, X_HEIGHT = 0.7, 0.48
_TALL = set("bdfhklt()[]{}|/\\!?'\"#$%&@")
# The box a text layer gives a line, above and below its baseline, in font sizes (as MuPDF's for
# Helvetica and Times), and the gap between lines (in font sizes) over which a new block starts:
# a paragraph's lines sit about 0.2 apart, paragraphs a blank line.
LINE_ASCENT, LINE_DESCENT = 0.95, 0.25
BLOCK_GAP = 0.6
FONT = "OCR"
# A heading's number read without the space after it ("2.Storage", "3.1Filtration"): the space is
# put back, so that the number is found as one.
_NUMBER_GLUED = re.compile(r"^(\d{1,2}(?:\.\d{1,2})*\.?)(?=[A-Z][a-z])")
# RapidOCR's settings (bench/RESULTS.md, "OCR of image-only pages"): text is found on the page
# scaled to at most 960 pixels a side (its default, at least 736 on the short side, costs about
# four times as long for the same words), read upright without the angle classifier, on one
# thread: on 2 cores a second thread gained little and an `ask` meanwhile needs a core.
ENGINE_PARAMS = {
    "Global.log_level": "error",
    "Global.use_cls": False,
    "Det.limit_type": "max",
    "Det.limit_side_len": 960,
    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
}


@dataclass
class OcrLine:
    """One line as the engine read it, measured on the page image (page points): the left and right
    edges of its ink, the top of its tallest letters and its baseline, its font size as those give
    it (`measure`), and its share of dark pixels (`ink`)."""

    text: str
    x0: float
    x1: float
    top: float
    baseline: float
    measure: float
    ink: float = 0.0
    score: float = 1.0


class OcrMissing(RuntimeError):
    """The OCR engine is not installed."""


_lock = threading.Lock()
_engine = None


def available() -> bool:
    try:
        import rapidocr  # noqa: F401
    except ImportError:
        return False
    return True


def engine():
    """The RapidOCR engine, loaded once per process (about a second); OcrMissing without the extra."""
    global _engine
    with _lock:
        if _engine is None:
            try:
                from rapidocr import RapidOCR
            except ImportError:
                raise OcrMissing(f"OCR needs the `ocr` extra: {EXTRA}") from None
            _engine = RapidOCR(params=ENGINE_PARAMS)
        return _engine


def read_page(page, dpi: int = DPI) -> list[OcrLine]:
    """The lines of one PDF page (a pymupdf.Page), read from its rendering; boxes in page points,
    in the page's own coordinates (those `get_text` uses)."""
    return read_image(render(page, dpi), page.rect)


def render(page, dpi: int = DPI):
    """The page as a grey image (a uint8 array, rows by columns), as OCR reads it."""
    import numpy as np
    import pymupdf

    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    return np.frombuffer(pixmap.samples, np.uint8).reshape(pixmap.h, pixmap.w)


def read_image(gray, rect) -> list[OcrLine]:
    """The lines OCR reads in a page's grey image, measured in the points of the page `rect`
    (a pymupdf.Rect) it was rendered from."""
    import numpy as np

    if gray.size == 0 or int(gray.min()) > 200:  # nothing dark enough to be print: a blank page
        return []
    result = engine()(np.repeat(gray[:, :, None], 3, axis=2))
    if result is None or getattr(result, "boxes", None) is None:
        return []
    height, width = gray.shape
    sx, sy = rect.width / width, rect.height / height
    lines = []
    for box, text, score in zip(result.boxes, result.txts, result.scores):
        text = _NUMBER_GLUED.sub(r"\1 ", " ".join(str(text).split()))
        if not text or float(score) < MIN_SCORE:
            continue
        xs, ys = [float(p[0]) for p in box], [float(p[1]) for p in box]
        px0, py0 = max(0, int(min(xs))), max(0, int(min(ys)))
        px1, py1 = min(width, int(max(xs)) + 1), min(height, int(max(ys)) + 1)
        found = measure(gray[py0:py1, px0:px1] < DARK, text)
        if found is None:
            continue
        ink, left, right, top, baseline, size = found
        lines.append(OcrLine(text, rect.x0 + (px0 + left) * sx, rect.x0 + (px0 + right) * sx,
                             rect.y0 + (py0 + top) * sy, rect.y0 + (py0 + baseline) * sy,
                             size * sy, ink, float(score)))
    return lines


def measure(dark, text: str) -> tuple[float, int, int, int, int, float] | None:
    """A line's ink measured in its box (`dark`: a boolean pixel array): its share of dark pixels,
    its left and right ink columns, the top of its ink, its baseline (the bottom of the band where
    most rows are dark: descenders below it are sparse) and its font size in pixels, from the
    height above the baseline: capitals, digits and ascenders reach about 0.7 of the size, a line
    of only short letters ("summer") its x-height, about half. None for a box without ink.

    The engine's box is its text's core widened on every side (by about 0.8 of the line's height),
    so in a table or tight type it reaches into the lines and rules above and below. Only the line's
    own band is measured (`own_band`): the rows of ink around the box's middle, up to the blank rows
    that part it from its neighbours, rules (rows dark nearly all across) counted blank."""
    import numpy as np

    if dark.size == 0 or not dark.any():
        return None
    band = own_band(dark)
    if band is None:
        return None
    first, last = band
    dark = dark[first:last]
    rows, columns = dark.sum(axis=1), np.nonzero(dark.any(axis=0))[0]
    left, right = int(columns[0]), int(columns[-1]) + 1
    peak = int(rows.max())
    baseline = int(np.nonzero(rows >= 0.35 * peak)[0].max()) + 1
    top = int(np.nonzero(rows >= max(2, 0.04 * peak))[0].min()) if peak >= 2 else int(np.nonzero(rows)[0].min())
    tall = any(ch.isupper() or ch.isdigit() or ch in _TALL for ch in text)
    size = (baseline - top) / (ASCENT if tall else X_HEIGHT)
    return (float(dark[:, left:right].mean()), left, right, first + top, first + baseline, size)


def own_band(dark) -> tuple[int, int] | None:
    """The rows (first, last + 1) of the line a box was found for. Rows of ink parted by blank
    rows are runs; a row dark over RULE of the box's width is a rule (a table's line, an underline)
    and counts as blank. The line is the run holding the heavy row (a row of the x-height, at
    least half as dark as the darkest of the box's middle half) nearest the box's middle: the
    neighbours reach only into its edges. Where tight type joins that run to a neighbour's (a
    descender touching the capitals below), it is cut at the thinnest row between the two lines'
    heavy rows. The small, light runs just above or below it (the dots of i and j, accents) are
    the line's; a run the box's edge cuts is a neighbour's. None where only rules are inked."""
    import numpy as np

    rows = dark.sum(axis=1)
    weight = np.where((rows > 1) & (rows < RULE * dark.shape[1]), rows, 0)
    if not weight.any():
        return None
    height = len(weight)
    middle = height // 2
    reference = weight[height // 4: height - height // 4].max() or weight.max()
    heavy = np.nonzero(weight >= 0.5 * reference)[0]
    peak = int(heavy[np.abs(heavy - middle).argmin()]) if len(heavy) else int(weight.argmax())
    runs, start = [], None
    for n, w in enumerate(list(weight) + [0]):
        if w and start is None:
            start = n
        elif not w and start is not None:
            runs.append([start, n])
            start = None
    index = next(i for i, (a, b) in enumerate(runs) if a <= peak < b)
    first, last = runs[index]
    part = weight[first:last]
    top_ink = part.max()
    strong = np.nonzero(part >= 0.5 * top_ink)[0] + first
    for a, b in zip(strong[:-1], strong[1:]):  # two lines' heavy rows with a thin row between
        if b - a > 1:
            cut = a + 1 + int(weight[a + 1:b].argmin())
            if weight[cut] < 0.15 * top_ink:
                if cut < peak:
                    first = cut + 1
                else:
                    last = cut
                    break
    size = last - first

    def small(a: int, b: int, gap: int) -> bool:  # a dot or an accent, not a neighbour cut by the box
        return gap <= 0.2 * size and b - a <= 0.4 * size and a > 0 and b < height and \
            weight[a:b].max() < 0.5 * top_ink

    for a, b in reversed(runs[:index]):
        if not small(a, b, first - b):
            break
        first = a
    for a, b in runs[index + 1:]:
        if not small(a, b, a - last):
            break
        last = b
    return first, last


@dataclass
class Styles:
    """The sizes and weights a document's OCR'd lines are given (see the module's docstring)."""

    body: float  # the body text's size
    sizes: list[tuple[float, float, float]]  # (lowest, highest, size) of each other group of measures
    body_ink: float
    scale: float = 1.0

    @classmethod
    def of(cls, lines: list[OcrLine], text_sizes: list[float] | None = None) -> Styles:
        """The styles of `lines`. Where the document has text pages too (`text_sizes`: their sizes,
        the body's first) and the scans' body measures close to theirs (within a fifth), it is taken
        to be the same type: every measure is scaled to match, and a size within a tenth of one the
        text pages use becomes that size, so a scanned page among text pages has their styles."""
        text_sizes = text_sizes or []
        text_body = text_sizes[0] if text_sizes else 0.0
        if not lines:
            return cls(0.0, [], 0.0)
        # The body is where most of the text is: the median size, each line counted by its length.
        weighted = sorted((line.measure, len(line.text)) for line in lines)
        half, seen, body = sum(n for _, n in weighted) / 2, 0, weighted[-1][0]
        for measure_, n in weighted:
            seen += n
            if seen >= half:
                body = measure_
                break
        near = [line for line in lines if abs(line.measure - body) <= BODY_SPREAD * body]
        body = median(line.measure for line in near)
        inks = [line.ink for line in near if len(line.text) >= 20] or [line.ink for line in near]
        body_ink = median(inks)
        others = sorted(line.measure for line in lines if abs(line.measure - body) > BODY_SPREAD * body)
        groups: list[list[float]] = []
        for measure_ in others:  # within SIZE_GAP of the last, and of twice that of the group's least
            if groups and measure_ - groups[-1][-1] <= SIZE_GAP * measure_ and \
                    measure_ <= (1 + 2 * SIZE_GAP) * groups[-1][0]:
                groups[-1].append(measure_)
            else:
                groups.append([measure_])
        scale = text_body / body if text_body > 0 and body > 0 and abs(text_body / body - 1) <= 0.2 else 1.0
        sizes = [(group[0], group[-1], _nearest(_points(scale * median(group)), text_sizes)) for group in groups]
        return cls(body, sizes, body_ink, scale)

    def size(self, line: OcrLine) -> float:
        if abs(line.measure - self.body) <= BODY_SPREAD * self.body:
            return _points(self.scale * self.body)
        for low, high, size in self.sizes:
            if low <= line.measure <= high:
                return size
        return _points(self.scale * line.measure)

    def bold(self, line: OcrLine) -> bool:
        return self.body_ink > 0 and line.ink >= BOLD_INK * self.body_ink


def _nearest(size: float, known: list[float]) -> float:
    """The size among `known` within a tenth of `size`, the closest; else `size`."""
    near = [k for k in known if abs(k - size) <= 0.1 * size]
    return min(near, key=lambda k: abs(k - size)) if near else size


def _points(size: float) -> float:
    return round(size * 2) / 2  # half points, as pdf_page rounds a style


def page_dict(lines: list[OcrLine], styles: Styles, width: float, height: float) -> dict:
    """OCR'd lines as a `get_text("dict")` page. Each line gets the box a text layer would give it
    (its size's ascent above the baseline, descent below); lines that share a row (overlap by more
    than half their height) and lines less than a line's gap apart form a block, as MuPDF groups a
    text page's lines, and a wider gap opens the next block."""
    boxed = []
    for line in lines:
        size = styles.size(line)
        boxed.append((line, size, line.baseline - LINE_ASCENT * size, line.baseline + LINE_DESCENT * size))
    rows: list[list[tuple[OcrLine, float, float, float]]] = []
    for item in sorted(boxed, key=lambda item: (item[2] + item[3]) / 2):
        row = rows[-1] if rows else None
        if row:
            top, bottom = max(item[2], row[0][2]), min(item[3], row[0][3])
            if bottom - top > 0.5 * min(item[3] - item[2], row[0][3] - row[0][2]):
                row.append(item)
                continue
        rows.append([item])
    blocks: list[list[list[tuple[OcrLine, float, float, float]]]] = []
    for row in rows:
        row.sort(key=lambda item: item[0].x0)
        if blocks:
            last = blocks[-1][-1]
            gap = min(item[2] for item in row) - max(item[3] for item in last)
            if gap <= BLOCK_GAP * min(item[1] for item in last + row):
                blocks[-1].append(row)
                continue
        blocks.append([row])
    out = []
    for block in blocks:
        items = [item for row in block for item in row]
        raw_lines = [{
            "spans": [{"text": line.text, "size": size, "flags": 16 if styles.bold(line) else 0, "font": FONT}],
            "dir": (1.0, 0.0),
            "bbox": (line.x0, y0, line.x1, y1),
        } for line, size, y0, y1 in items]
        out.append({"type": 0, "lines": raw_lines,
                    "bbox": (min(i[0].x0 for i in items), min(i[2] for i in items),
                             max(i[0].x1 for i in items), max(i[3] for i in items))})
    return {"width": width, "height": height, "blocks": out}
