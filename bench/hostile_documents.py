"""Time the documents that once took minutes, at full size, through `longqa ingest`.

    python bench/hostile_documents.py [--embed] [--limits default|lifted|both] [--keep DIR] [--json]

Generated here (nothing downloaded), each at the size a user reported:
- headings.md: 500 KB of markdown with 20,000 `##` headings (took 10 minutes: a quadratic step);
- oneline.md: 5 MB of markdown on one line (over 11 minutes);
- hashes.md: one 4 MB line of `# a # # … b` (the heading pattern backtracked quadratically);
- ledger.pdf: 3,000 pages of one line each (was "all pages are blank");
- damaged.pdf: an arXiv paper from ../shared/evaldata with 1 KB overwritten mid-file, when present
  (took 431 s through model structuring; it is now refused unless --allow-damaged).

Each runs twice in a fresh process and a fresh store: with the default limits (the documents over
a limit are refused, and the time says how soon), and with every limit lifted. Without --embed
the embedder is left out (parse + structure + store, as bench/ingest.py measures), because
embedding costs the same per token for any document (see bench/RESULTS.md); --embed runs the
real `longqa ingest` with the default embedder too. Printed per run: wall and CPU seconds, exit
code, the stderr line, and the load average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))
LIFTED = ["--max-headings", "0", "--max-line-chars", "0", "--max-pages", "0", "--max-mb", "0", "--allow-damaged"]
WORDS = "river stone light paper water green market report annual revenue cost margin tax board share".split()

# Runs one document through the ingest steps without an embedder, in a fresh process.
NO_EMBED = """
import sys
from pathlib import Path
from longqa.config import Limits
from longqa.errors import InputError
from longqa.ingest import Ingestor
from longqa.store import open_db
lifted = sys.argv[3] == "lifted"
limits = Limits(max_mb=0, max_pages=0, max_line_chars=0, max_headings=0, allow_damaged=True) if lifted else Limits()
result = Ingestor(db=open_db(sys.argv[2]), structure="auto", limits=limits).ingest(Path(sys.argv[1]))
print(f"{result.status} {result.structure} nodes={result.nodes} {result.error or ''}", file=sys.stderr)
sys.exit(0 if result.status != "failed" else 1)
"""


def make_documents(folder: Path) -> list[Path]:
    rng = random.Random(12)
    headings = folder / "headings.md"
    headings.write_text("# Register\n\n" + "\n".join(
        f"## Heading {i}\n\n{' '.join(rng.choice(WORDS) for _ in range(3))}\n" for i in range(20_000)))
    oneline = folder / "oneline.md"
    oneline.write_text(" ".join(rng.choice(WORDS) for _ in range(900_000))[:5_000_000])
    hashes = folder / "hashes.md"
    hashes.write_text("# a" + " #" * 2_000_000 + " b\n")
    paths = [headings, oneline, hashes, make_ledger(folder / "ledger.pdf", 3_000)]
    source = EVALDATA / "docs" / "uda" / "1705.07830.pdf"
    if source.is_file():
        data = bytearray(source.read_bytes())
        middle = len(data) // 2
        data[middle : middle + 1024] = bytes(rng.randrange(256) for _ in range(1024))
        damaged = folder / "damaged.pdf"
        damaged.write_bytes(bytes(data))
        paths.append(damaged)
    return paths


def make_ledger(path: Path, pages: int) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for n in range(1, pages + 1):
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 90), f"Entry {n}: the ledger line recorded for this page.", fontsize=10, fontname="helv")
    doc.save(path)
    doc.close()
    return path


def run_one(path: Path, lifted: bool, embed: bool, folder: Path) -> dict:
    store = folder / f"store-{path.stem}-{'lifted' if lifted else 'default'}-{time.monotonic_ns()}.db"
    if embed:
        argv = [sys.executable, "-m", "longqa", "ingest", str(path), "-d", str(store), "--quiet"]
        argv += LIFTED if lifted else []
    else:
        argv = [sys.executable, "-c", NO_EMBED, str(path), str(store), "lifted" if lifted else "default"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "LONGQA_THREADS": os.environ.get("LONGQA_THREADS", "1")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return {
        "document": path.name, "mb": round(path.stat().st_size / 1e6, 2), "limits": "lifted" if lifted else "default",
        "exit": done.returncode, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "load": [round(x, 2) for x in os.getloadavg()], "said": lines[-1][:160] if lines else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embed", action="store_true", help="Run the real `longqa ingest`, embeddings included.")
    parser.add_argument("--limits", choices=["default", "lifted", "both"], default="both",
                        help="Run with the default limits, with every limit lifted, or both (default).")
    parser.add_argument("--keep", type=Path, help="Write the documents and stores here and keep them.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="longqa-hostile-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for path in make_documents(folder):
        for lifted in {"default": (False,), "lifted": (True,), "both": (False, True)}[args.limits]:
            row = run_one(path, lifted, args.embed, folder)
            rows.append(row)
            if not args.json:
                print(f"{row['document']:<13} {row['mb']:>5} MB  limits {row['limits']:<7}  exit {row['exit']}  "
                      f"wall {row['wall_s']:>6.1f} s  cpu {row['cpu_s']:>6.1f} s  load {row['load'][0]:.1f}  "
                      f"{row['said']}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    slowest = max(rows, key=lambda r: r["wall_s"])
    print(f"slowest: {slowest['document']} ({slowest['limits']} limits) {slowest['wall_s']} s wall", file=sys.stderr)


if __name__ == "__main__":
    main()
