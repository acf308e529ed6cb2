"""A thousand files ingested with embeddings, killed three times and resumed.

    python bench/many_files.py [--files 1000] [--kills 3] [--seed 0] [--keep DIR] [--json]

Writes FILES generated documents into a temporary folder (markdown with headings, plain text
with form-feed pages, and one in forty a small PDF made with PyMuPDF; seeded, so every run
writes the same bytes), then runs the real `python -m longqa ingest FOLDER --quiet` into a fresh
store with the default embedder. Each of `--kills` runs is SIGKILLed at a random point: once a
random number of further documents is stored, after a random extra delay, so the kill lands in
parsing, storing or between a document's vector chunks. A last run then goes to the end with
--json. Printed, each with the 1-minute load average when it was taken:

- per run: wall seconds, pages and files this run stored, where it was killed;
- overall: pages/s and files/s over the sum of the runs' wall time (restarts included);
- consistency: `inspect docs` count against the files written, distinct paths, FTS rows against
  nodes (and FTS5's integrity-check), vectors against leaves, leaves without vectors; and for
  the last run, documents parsed again (must be 0) and leaves embedded against those missing
  before it (must be equal: nothing embedded twice).

The machine may be shared: the load average says how quiet it was. Exit 1 when a count disagrees.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

WORDS = ("pump valve reactor coolant pressure sensor filter manual inspection schedule operator "
         "alarm circuit breaker generator fuel tank storage cabinet solvent ventilation exhaust "
         "gasket bearing torque calibration interval warranty invoice supplier contract clause "
         "revenue margin quarter forecast liability audit compliance policy retention backup "
         "server network firewall certificate password rotation incident response escalation").split()


def load() -> float:
    return os.getloadavg()[0]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 22))]
    number = f" {rng.randint(2, 950)} {rng.choice(('hours', 'kPa', 'days', 'litres', 'units'))}"
    return (" ".join(words) + number).capitalize() + "."


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(2, 6)))


def markdown(rng: random.Random, i: int) -> str:
    parts = [f"# Handbook {i}: {rng.choice(WORDS)} and {rng.choice(WORDS)}"]
    for s in range(rng.randint(2, 6)):
        parts.append(f"## {s + 1}. {rng.choice(WORDS).capitalize()} {rng.choice(WORDS)}")
        parts += [paragraph(rng) for _ in range(rng.randint(1, 5))]
    return "\n\n".join(parts) + "\n"


def plain_text(rng: random.Random, i: int) -> str:
    """Pages separated by form feeds, as a text export of a printed document is."""
    pages = []
    for _ in range(rng.randint(1, 4)):
        pages.append("\n\n".join(paragraph(rng) for _ in range(rng.randint(3, 8))))
    return f"Notes {i}\n\n" + "\n\f\n".join(pages) + "\n"


def pdf(rng: random.Random, i: int, path: Path) -> None:
    """A few pages, each a bold section heading over body text, with bookmarks naming the
    sections (as exported reports have), so its structure comes from the file, not the model."""
    import pymupdf

    document, toc = pymupdf.open(), [[1, f"Report {i}", 1]]
    for p in range(rng.randint(2, 5)):
        page = document.new_page(width=612, height=792)
        title = f"{p + 1}. {rng.choice(WORDS).capitalize()} {rng.choice(WORDS)}"
        if p == 0:
            page.insert_text((72, 70), f"Report {i}", fontsize=18, fontname="hebo")
        page.insert_text((72, 100), title, fontsize=14, fontname="hebo")
        toc.append([2, title, p + 1])
        body = "\n\n".join(paragraph(rng) for _ in range(rng.randint(2, 4)))
        page.insert_textbox(pymupdf.Rect(72, 115, 540, 720), body, fontsize=10, fontname="helv")
    document.set_toc(toc)
    document.set_metadata({"title": f"Report {i}"})
    document.save(path)
    document.close()


def write_library(folder: Path, n: int, seed: int) -> dict[str, int]:
    """N files in subfolders of 100; returns how many of each kind."""
    rng = random.Random(seed)
    kinds = {"md": 0, "txt": 0, "pdf": 0}
    for i in range(n):
        sub = folder / f"part{i // 100:02}"
        sub.mkdir(parents=True, exist_ok=True)
        roll = rng.random()
        if i % 40 == 7:  # every fortieth: a few PDFs even in a small run
            pdf(rng, i, sub / f"report{i:04}.pdf")
            kinds["pdf"] += 1
        elif roll < 0.55:
            (sub / f"handbook{i:04}.md").write_text(markdown(rng, i))
            kinds["md"] += 1
        else:
            (sub / f"notes{i:04}.txt").write_text(plain_text(rng, i))
            kinds["txt"] += 1
    return kinds


def store_state(db_path: Path) -> dict:
    """Counts from the store itself (a fresh read-only connection)."""
    if not db_path.exists():
        return {"documents": 0, "pages": 0, "nodes": 0, "leaves": 0, "vectors": 0, "fts_rows": 0,
                "paths": 0, "fts_ok": True}
    with sqlite3.connect(db_path, timeout=30) as conn:
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        try:
            conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES('integrity-check')")
            fts_ok = True
        except sqlite3.DatabaseError:
            fts_ok = False
        return {
            "documents": one("SELECT count(*) FROM documents"),
            "paths": one("SELECT count(DISTINCT path) FROM documents"),
            "pages": one("SELECT COALESCE(sum(pages), 0) FROM documents"),
            "nodes": one("SELECT count(*) FROM nodes"),
            "leaves": one("SELECT count(*) FROM nodes WHERE kind = 'paragraph'"),
            "vectors": one("SELECT count(*) FROM embeddings"),
            "fts_rows": one("SELECT count(*) FROM nodes_fts_docsize"),
            "whole": one("SELECT count(*) FROM documents d WHERE nodes = "
                         "(SELECT count(*) FROM nodes n WHERE n.doc_id = d.id)"),
            "fts_ok": fts_ok,
        }


def stored_now(db_path: Path) -> int:
    try:
        with sqlite3.connect(db_path, timeout=0.2) as conn:
            return conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    except sqlite3.Error:
        return 0


def killed_run(argv: list[str], env: dict, db_path: Path, total: int, rng: random.Random) -> dict:
    """One ingest, SIGKILLed once a random number of further documents is stored plus a random
    delay (0-2 s); or let finish if it gets there first."""
    before = stored_now(db_path)
    target = rng.randint(before + 1, max(before + 1, total - 1))
    delay = rng.uniform(0, 2.0)
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while process.poll() is None and stored_now(db_path) < target:
        time.sleep(0.05)
    if process.poll() is None:
        time.sleep(delay)
    killed = process.poll() is None
    if killed:
        os.kill(process.pid, signal.SIGKILL)
    _, stderr = process.communicate()
    return {"wall": time.perf_counter() - started, "killed": killed, "target": target,
            "delay": round(delay, 2), "exit": process.returncode, "stderr": stderr.decode(errors="replace")[-500:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the files and store here, and keep them")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="longqa-many-"))
    folder, db_path = work / "library", work / "store.db"
    shutil.rmtree(folder, ignore_errors=True)
    for leftover in (db_path, *(db_path.with_name(db_path.name + s) for s in ("-wal", "-shm"))):
        leftover.unlink(missing_ok=True)
    written_at = time.perf_counter()
    kinds = write_library(folder, args.files, args.seed)
    print(f"{args.files} files written in {time.perf_counter() - written_at:.1f} s "
          f"({kinds['md']} markdown, {kinds['txt']} text, {kinds['pdf']} PDF) in {folder}", flush=True)

    env = {k: v for k, v in os.environ.items() if k not in ("LONGQA_DB", "LONGQA_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    argv = [sys.executable, "-m", "longqa", "ingest", str(folder), "-d", str(db_path), "--quiet"]
    rng = random.Random(args.seed + 1)
    runs, failures = [], []
    for k in range(args.kills):
        pages_before, docs_before = store_state(db_path)["pages"], stored_now(db_path)
        run = killed_run(argv, env, db_path, args.files, rng)
        state = store_state(db_path)
        run.update(pages=state["pages"] - pages_before, files=state["documents"] - docs_before, load=load())
        runs.append(run)
        what = "killed" if run["killed"] else f"finished before the kill (exit {run['exit']})"
        print(f"run {k + 1}: {what} at >= {run['target']} documents + {run['delay']} s: {run['wall']:.1f} s wall, "
              f"{run['files']} files and {run['pages']} pages stored; {state['vectors']}/{state['leaves']} leaves "
              f"embedded; load {run['load']:.2f}", flush=True)
        if state["whole"] != state["documents"] or state["fts_rows"] != state["nodes"] or not state["fts_ok"]:
            failures.append(f"after kill {k + 1}: a document is not whole or not indexed: {state}")

    missing_before = store_state(db_path)
    last_started = time.perf_counter()
    done = subprocess.run([*argv[:-1], "--json"], env=env, capture_output=True, text=True)
    last_wall = time.perf_counter() - last_started
    final = store_state(db_path)
    runs.append({"wall": last_wall, "killed": False, "exit": done.returncode, "load": load(),
                 "pages": final["pages"] - missing_before["pages"],
                 "files": final["documents"] - missing_before["documents"]})
    print(f"last run: to the end (exit {done.returncode}): {last_wall:.1f} s wall, {runs[-1]['files']} files and "
          f"{runs[-1]['pages']} pages stored; load {runs[-1]['load']:.2f}", flush=True)
    if done.returncode != 0:
        failures.append(f"the last run exited {done.returncode}: {done.stderr[-800:]}")
    report = json.loads(done.stdout) if done.stdout.strip() else {"documents": []}
    entries = report["documents"]
    parsed_again = sum(1 for e in entries if e["status"] in ("added", "updated")) - (
        final["documents"] - missing_before["documents"])
    embedded_last = sum(e.get("embedded", 0) for e in entries)
    missing_vectors = missing_before["leaves"] - missing_before["vectors"]
    new_leaves = final["leaves"] - missing_before["leaves"]

    wall = sum(r["wall"] for r in runs)
    pages = final["pages"]
    listing = subprocess.run([sys.executable, "-m", "longqa", "inspect", "docs", "--json", "-d", str(db_path)],
                             env=env, capture_output=True, text=True)
    docs = json.loads(listing.stdout) if listing.returncode == 0 else []
    without_vectors = sum(d.get("leaves_without_vectors", 0) for d in docs)
    now = load()
    print(f"overall: {pages} pages, {final['documents']} files in {wall:.1f} s over {len(runs)} runs: "
          f"{pages / wall:.1f} pages/s, {final['documents'] / wall:.1f} files/s; load {now:.2f}")
    print(f"consistency: inspect docs {len(docs)} of {args.files} files ({final['paths']} distinct paths); "
          f"FTS rows {final['fts_rows']} = nodes {final['nodes']} (integrity-check "
          f"{'ok' if final['fts_ok'] else 'FAILED'}); vectors {final['vectors']} = leaves {final['leaves']}; "
          f"leaves without vectors {without_vectors}; load {now:.2f}")
    print(f"last run: {parsed_again} stored documents parsed again; {embedded_last} leaves embedded = "
          f"{missing_vectors} missing before + {new_leaves} of new documents; load {now:.2f}")
    checks = {
        "inspect docs count = files": len(docs) == args.files,
        "documents = distinct paths": final["documents"] == final["paths"] == args.files,
        "FTS rows = nodes": final["fts_rows"] == final["nodes"] and final["fts_ok"],
        "vectors = leaves": final["vectors"] == final["leaves"] and without_vectors == 0,
        "every document whole": final["whole"] == final["documents"],
        "nothing parsed again": parsed_again == 0,
        "nothing embedded twice": embedded_last == missing_vectors + new_leaves,
    }
    failures += [name for name, ok in checks.items() if not ok]
    print("checks: " + ", ".join(f"{name}: {'ok' if ok else 'FAILED'}" for name, ok in checks.items()))
    if args.json:
        print(json.dumps({"files": args.files, "kinds": kinds, "runs": runs, "wall_s": round(wall, 2),
                          "pages": pages, "pages_per_s": round(pages / wall, 2), "load": now,
                          "final": final, "inspect_docs": len(docs), "checks": checks}))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
