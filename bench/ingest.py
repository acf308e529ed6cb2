"""Ingest speed and memory without embeddings: parse + structure + store (FTS included).

    python bench/ingest.py [PATH ...] [--structure auto] [--no-memory] [--json]

PATH defaults to ../shared/evaldata/docs/financebench (files or folders; .pdf/.txt/.md). Every
document goes into a fresh temporary store exactly as `longqa ingest` does it, minus the embedder
and the model-made titles. Printed: per document and in total, pages, seconds and pages/s, split
into parsing, structure and storing; PyMuPDF's bare `get_text("dict")` speed on the same pages for
comparison; the share of parsing spent on page furniture; and peak memory of a fresh process
ingesting the smallest document, the largest one, and all of them concatenated into one PDF, to
show that memory follows the text kept, not the page count. Target: >= 100 pages/s on 2 cores.
Figures depend on machine load: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))


def ingest_one(db, path: Path, structure: str) -> dict:
    """The ingest steps of longqa.ingest.Ingestor, timed one by one."""
    from longqa.ingest import file_digest
    from longqa.parse import parse_file
    from longqa.store.documents import DocumentRecord, save_document
    from longqa.structure.tree_source import structure_document
    from longqa.structure.tree import walk

    started, cpu_started = time.perf_counter(), time.process_time()
    digest, size = file_digest(path)
    parsed = parse_file(path)
    parsed_at = time.perf_counter()
    root, source = structure_document(parsed, structure, None)
    structured_at = time.perf_counter()
    record = DocumentRecord(path=str(path.resolve()), sha256=digest, title=parsed.title, format=parsed.format,
                            pages=parsed.pages, structure=source, bytes=size)
    save_document(db, record, root)
    done = time.perf_counter()
    return {"file": path.name, "pages": parsed.pages, "nodes": sum(1 for _ in walk(root)), "source": source,
            "parse": parsed_at - started, "structure": structured_at - parsed_at, "store": done - structured_at,
            "cpu": time.process_time() - cpu_started}


def pymupdf_alone(paths: list[Path]) -> tuple[int, float]:
    import pymupdf

    from longqa.parse.pdf import TEXT_FLAGS

    pages, started, cpu_started = 0, time.perf_counter(), time.process_time()
    for path in paths:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text("dict", flags=TEXT_FLAGS)
                pages += 1
    return pages, time.perf_counter() - started, time.process_time() - cpu_started


def furniture_share(paths: list[Path]) -> tuple[float, float]:
    """Seconds spent in the furniture bookkeeping versus in the whole PDF parse."""
    from longqa.parse import furniture, pdf

    spent = 0.0
    observe = furniture.Furniture.observe

    def timed(self, *args):
        nonlocal spent
        t = time.perf_counter()
        try:
            return observe(self, *args)
        finally:
            spent += time.perf_counter() - t

    furniture.Furniture.observe = timed
    try:
        started = time.perf_counter()
        for path in paths:
            pdf.parse_pdf(path)
        total = time.perf_counter() - started
    finally:
        furniture.Furniture.observe = observe
    return spent, total


def memory_probe(path: Path, structure: str) -> dict:
    """Run in a fresh process: peak RSS before and after ingesting one file, and the Python heap peak."""
    from longqa import tokens
    from longqa.store import open_db

    tokens.count("warm up")  # load the encoding before the baseline, as any ingest does
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as tmp:
        row = ingest_one(open_db(Path(tmp) / "rss.db"), path, structure)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        # Again with tracemalloc (which costs memory itself, so not during the RSS measurement).
        tracemalloc.start()
        ingest_one(open_db(Path(tmp) / "heap.db"), path, structure)
        heap_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {"file": path.name, "pages": row["pages"], "baseline_mb": baseline / 1024, "peak_mb": peak / 1024,
            "heap_peak_mb": heap_peak / 2**20}


def concatenated(paths: list[Path], out: Path) -> Path:
    import pymupdf

    with pymupdf.open() as merged:
        for path in paths:
            with pymupdf.open(path) as part:
                merged.insert_pdf(part)
        merged.save(out, garbage=1)
    return out


def probe_in_subprocess(path: Path, structure: str) -> dict:
    argv = [sys.executable, __file__, "--probe", str(path), "--structure", structure]
    result = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def collect(inputs: list[str]) -> list[Path]:
    files: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix.lower() in {".pdf", ".txt", ".md"})
        else:
            files.append(path)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(EVALDATA / "docs" / "financebench")])
    parser.add_argument("--structure", default="auto")
    parser.add_argument("--no-memory", action="store_true", help="skip the fresh-process memory probes")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(memory_probe(Path(args.probe), args.structure)))
        return

    from longqa import tokens
    from longqa.store import open_db

    files = collect(args.paths)
    if not files:
        sys.exit(f"no documents under {args.paths}")
    tokens.count("warm up")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "bench.db")
        for path in files:
            rows.append(ingest_one(db, path, args.structure))
    pdfs = [p for p in files if p.suffix.lower() == ".pdf"]
    report = {"documents": rows, "load_average": os.getloadavg(), "cpus": os.cpu_count()}
    if pdfs:
        report["pymupdf_alone"] = dict(zip(("pages", "seconds", "cpu_seconds"), pymupdf_alone(pdfs)))
        report["furniture"] = dict(zip(("seconds", "parse_seconds"), furniture_share(pdfs)))
    if pdfs and not args.no_memory:
        by_pages = sorted(pdfs, key=lambda p: next(r["pages"] for r in rows if r["file"] == p.name))
        with tempfile.TemporaryDirectory() as tmp:
            merged = concatenated(pdfs, Path(tmp) / "all-concatenated.pdf")
            report["memory"] = [probe_in_subprocess(p, args.structure) for p in (by_pages[0], by_pages[-1], merged)]
    print(json.dumps(report, indent=2) if args.json else render(report))


def render(report: dict) -> str:
    rows = report["documents"]
    lines = [f"{'document':42} {'pages':>5} {'parse':>7} {'struct':>7} {'store':>7} {'pages/s':>8}  source"]
    for r in rows:
        total = r["parse"] + r["structure"] + r["store"]
        lines.append(f"{r['file'][:42]:42} {r['pages']:5d} {r['parse']:7.3f} {r['structure']:7.3f} {r['store']:7.3f} "
                     f"{r['pages'] / total:8.0f}  {r['source']}")
    pages = sum(r["pages"] for r in rows)
    stages = {s: sum(r[s] for r in rows) for s in ("parse", "structure", "store")}
    total = sum(stages.values())
    cpu = sum(r["cpu"] for r in rows)
    split = ", ".join(f"{s} {t:.2f} s ({100 * t / total:.0f}%)" for s, t in stages.items())
    lines += ["", f"TOTAL {len(rows)} documents, {pages} pages in {total:.2f} s = {pages / total:.0f} pages/s "
                  f"(parse + structure + store with FTS, no embedder)",
              f"  CPU time {cpu:.2f} s = {pages / cpu:.0f} pages per CPU-second (what one uncontended core does)",
              f"  split: {split}"]
    if "pymupdf_alone" in report:
        alone = report["pymupdf_alone"]
        lines.append(f"  PyMuPDF get_text('dict') alone: {alone['pages']} pages in {alone['seconds']:.2f} s = "
                     f"{alone['pages'] / alone['seconds']:.0f} pages/s ({alone['pages'] / alone['cpu_seconds']:.0f} "
                     f"pages per CPU-second)")
        fur = report["furniture"]
        lines.append(f"  furniture bookkeeping: {fur['seconds'] * 1000:.0f} ms of {fur['parse_seconds']:.2f} s parsing "
                     f"({100 * fur['seconds'] / fur['parse_seconds']:.1f}%)")
    for probe in report.get("memory", []):
        lines.append(f"  memory, fresh process, {probe['file'][:34]:34} {probe['pages']:5d} pages: peak RSS "
                     f"{probe['peak_mb']:.0f} MB (baseline {probe['baseline_mb']:.0f} MB after imports), "
                     f"Python heap peak {probe['heap_peak_mb']:.1f} MB")
    load = ", ".join(f"{x:.2f}" for x in report["load_average"])
    lines.append(f"  machine: {report['cpus']} CPUs, load average {load} (shared machine: figures vary with load)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
