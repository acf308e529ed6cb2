"""Retrieval in a fresh process on a store of 100,000 leaves or more (model load excluded).

    python bench/bigstore.py [--leaves 100000] [--runs 5] [--recall 50] [--against DIR]

Builds bench/out/big-<leaves>.db once (time printed): synthetic documents of 1,000 leaves each
whose texts are real FinanceBench leaf texts (so FTS5 has real term statistics), each copy after
the first with its numbers changed (so copies are not identical rows), and whose vectors are
random unit vectors stored under the default embedder's identity (dense search costs the same
whatever the vectors hold; nothing is embedded). Then, each in a fresh Python process that has
already loaded the embedder and embedded the question (excluded from the time, not from the peak
memory), it times opening the store and one hybrid retrieval (BM25 + dense + fusion): once reading
the vectors from SQLite with no file possible (how every query ran before the file; skipped above
200,000 leaves, where it holds the whole matrix in memory), once with no matrix file yet (read from
SQLite and the file written, as after any change to the vectors), then `--runs` times with the
file mapped: p50 and p95 of wall time, CPU time (the figure other load distorts least) and the
process's peak resident memory (VmHWM, mapped file pages included; ru_maxrss would keep the
launcher's size across the exec). Above the settings' dense_exact_max the dense side runs through
the candidate cut; `--recall N` then measures in a separate process how much of the exact dense
top k the cut keeps for N random queries (random vectors are its worst case: no structure to
exploit), and how much of BM25's top k over every matching row the BM25 cut (store/fts_cut.py)
keeps for up to N FinanceBench dev questions. `--against DIR` (another checkout, e.g. a worktree of
the commit before) runs its code in every other fresh process, so that both trees' figures share
the host's moods: on a shared virtual machine the same code's p50 moved by a third between
batches minutes apart. Targets: <= 100 ms at 100,000 leaves; p50 <= 300 ms
and peak <= 1.5 GiB at 1,000,000.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# The environment as given, before longqa (imported below) sets its defaults: each fresh process
# gets it, so that a checkout's own defaults (`--against`) are the ones it runs with.
GIVEN_ENV = dict(os.environ)
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))
OUT = REPO / "bench" / "out"
QUESTION = "What was Nike's revenue in fiscal 2018?"
PER_DOC = 1000

FRESH = """
import json, sys, time
from longqa.models.resolve import load_embedder
from longqa.retrieve.hybrid import HybridRetriever
from longqa.store import open_db
embedder = load_embedder()
vector = embedder.embed([sys.argv[2]])[0]
tick, cpu = time.perf_counter(), time.process_time()
db = open_db(sys.argv[1])
opened = time.perf_counter() - tick
result = HybridRetriever(db, embedder).retrieve(sys.argv[2], query_vector=vector)
total, cpu = time.perf_counter() - tick, time.process_time() - cpu
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(json.dumps({"total_s": total, "cpu_s": cpu, "open_s": opened, "parts": result.seconds, "hits": len(result.candidates),
                  "peak_bytes": peak}))
"""

RECALL = """
import json, sys, time
import numpy as np
from longqa.models.defaults import EMBEDDER_NAME
from longqa.retrieve.settings import RETRIEVAL
from longqa.store import open_db
from longqa.store.vectors import load_vectors
vectors = load_vectors(open_db(sys.argv[1]), EMBEDDER_NAME)
rng = np.random.default_rng(11)
kept, cut_s = [], []
for _ in range(int(sys.argv[2])):
    query = rng.normal(size=vectors.dim).astype(np.float32)
    exact = {h.node_id for h in vectors.search(query, RETRIEVAL.k)}
    tick = time.perf_counter()
    cut = {h.node_id for h in vectors.search(query, RETRIEVAL.k, cut=RETRIEVAL.dense_cut())}
    cut_s.append(time.perf_counter() - tick)
    kept.append(len(exact & cut) / len(exact))
from longqa.retrieve.terms import fts_match
from longqa.store.fts_cut import match_rows_cut
db = open_db(sys.argv[1])
questions = [json.loads(line) for line in open(sys.argv[3])]
questions = [q["question"] for q in questions if q["dataset"] == "financebench"][:int(sys.argv[2])]
same, full_s, part_s, cut_count = [], [], [], 0
k = RETRIEVAL.k
for question in questions:
    phrases = fts_match(question).split(" OR ")
    tick = time.perf_counter()
    full = match_rows_cut(db, phrases, RETRIEVAL.column_weights, k, 0)
    full_s.append(time.perf_counter() - tick)
    tick = time.perf_counter()
    part = match_rows_cut(db, phrases, RETRIEVAL.column_weights, k, RETRIEVAL.bm25_common_rows)
    part_s.append(time.perf_counter() - tick)
    same.append(len({r[0] for r in full} & {r[0] for r in part}) / max(1, len(full)))
print(json.dumps({"recall": float(np.mean(kept)), "worst": float(np.min(kept)), "cut_s": float(np.median(cut_s)),
                  "bm25_recall": float(np.mean(same)), "bm25_worst": float(np.min(same)), "bm25_questions": len(same),
                  "bm25_full_s": float(np.median(full_s)), "bm25_cut_s": float(np.median(part_s))}))
"""


def source_texts() -> list[tuple[str, int]]:
    """Real leaf texts (and token counts) from a few FinanceBench filings, ingested without vectors."""
    from longqa.ingest import Ingestor
    from longqa.store import open_db

    db = open_db(OUT / "bigstore-source.db")
    folder = EVALDATA / "docs" / "financebench"
    for path in sorted(folder.glob("*.pdf"))[:6]:
        Ingestor(db=db).ingest(path)
    return db.execute("SELECT text, tokens FROM nodes WHERE kind = 'paragraph'").fetchall()


def build(target: Path, leaves: int) -> None:
    from longqa.models.defaults import EMBEDDER_NAME
    from longqa.store import open_db, transaction

    texts = source_texts()
    tmp = target.with_suffix(".tmp")
    for leftover in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        leftover.unlink(missing_ok=True)
    db = open_db(tmp)
    rng = np.random.default_rng(7)
    next_id, have, number = 1, 0, 0

    def varied(text: str, copy: int) -> str:
        """The copy's own numbers: real words, but no two copies the same row."""
        return text if copy == 0 else re.sub(r"\d+", lambda m: str(int(m.group()) + copy), text)

    while have < leaves:
        number += 1
        with transaction(db) as conn:
            doc = conn.execute(
                "INSERT INTO documents (path, sha256, title, format, pages, tokens, nodes, structure, bytes, added) "
                "VALUES (?, '', ?, 'synthetic', 100, 0, ?, 'synthetic', 0, '')",
                (f"/synthetic/FILING_{number:04d}.pdf", f"Synthetic filing {number}", PER_DOC + 1)).lastrowid
            root = next_id
            conn.execute("INSERT INTO nodes (id, doc_id, parent_id, kind, title, path, ord, depth, page_start, "
                         "page_end, char_start, char_end, tokens) VALUES (?, ?, NULL, 'document', ?, '', 0, 0, "
                         "1, 100, 0, 0, 0)", (root, doc, f"Synthetic filing {number}"))
            nodes = []
            for i in range(PER_DOC):
                text, count = texts[(have + i) % len(texts)]
                text = varied(text, (have + i) // len(texts))
                nodes.append((root + 1 + i, doc, root, "paragraph", text, f"Section {i // 50}", i + 1, 1,
                              1 + i // 10, 1 + i // 10, 0, len(text), count))
            conn.executemany("INSERT INTO nodes (id, doc_id, parent_id, kind, text, path, ord, depth, page_start, "
                             "page_end, char_start, char_end, tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", nodes)
            vectors = rng.normal(size=(PER_DOC, 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            conn.executemany("INSERT INTO embeddings (node_id, model, dim, vector) VALUES (?,?,?,?)",
                             [(n[0], EMBEDDER_NAME, 384, v.tobytes()) for n, v in zip(nodes, vectors)])
            next_id = root + 1 + PER_DOC
            have += PER_DOC
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    tmp.rename(target)


def fresh(target: Path, script: str = FRESH, *arguments: str, code: Path = REPO) -> dict:
    """One fresh process running `script` with the longqa of the checkout `code`."""
    run = subprocess.run([sys.executable, "-c", script, str(target), *(arguments or [QUESTION])],
                         capture_output=True, text=True, cwd=code,  # `-c` puts the working directory first
                         env={**GIVEN_ENV, "PYTHONPATH": os.pathsep.join(
                             filter(None, [str(code), GIVEN_ENV.get("PYTHONPATH")]))})
    if run.returncode != 0:
        raise SystemExit(run.stderr[-2000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--leaves", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--recall", type=int, default=50,
                        help="random queries (dense) and FinanceBench questions (BM25) for the cuts' agreement (0: none)")
    parser.add_argument("--against", type=Path, default=None,
                        help="another checkout of longqa whose code runs in every other fresh process")
    args = parser.parse_args()
    if args.against is not None and not (args.against / "longqa" / "__init__.py").is_file():
        print(f"{args.against}: not a longqa checkout")
        return 2
    if not (EVALDATA / "docs" / "financebench").is_dir():
        print(f"evaluation data not found at {EVALDATA}; nothing to measure")
        return 0
    sys.path.insert(0, str(REPO))
    from longqa.store import vector_file

    OUT.mkdir(parents=True, exist_ok=True)
    from longqa.models.defaults import EMBEDDER_NAME
    from longqa.store import open_db
    from longqa.store.vectors import vector_models

    target = OUT / f"big-{args.leaves}.db"
    if target.exists() and EMBEDDER_NAME not in vector_models(open_db(target)):
        target.unlink()  # built under an earlier default embedder: dense search would be off
    if not target.exists():
        started = time.perf_counter()
        build(target, args.leaves)
        print(f"built {target} ({args.leaves} leaves) in {time.perf_counter() - started:.0f} s; "
              f"{load()}", flush=True)
    shutil.rmtree(vector_file.folder_for(target.resolve()), ignore_errors=True)
    from longqa.retrieve.settings import RETRIEVAL

    def show(label: str, data: dict) -> None:
        if "dense" not in data["parts"]:
            raise SystemExit("dense retrieval did not run: the figure would not be comparable")
        parts = ", ".join(f"{k} {v * 1000:.0f}" for k, v in data["parts"].items())
        print(f"{label}: {data['total_s'] * 1000:.0f} ms, CPU {data['cpu_s'] * 1000:.0f} ms (open {data['open_s'] * 1000:.0f}; {parts} ms); "
              f"peak {data['peak_bytes'] / 2**20:,.0f} MiB; {load()}", flush=True)

    folder = vector_file.folder_for(target.resolve())
    if args.leaves <= 200_000:
        folder.write_text("blocks the matrix file: every process reads SQLite, as before the file existed")
        try:
            show("fresh process, vectors read from SQLite (no file can be written)", fresh(target))
        finally:
            folder.unlink()
    show("fresh process, no matrix file yet (read from SQLite, file written)", fresh(target))
    store_bytes = sum(p.stat().st_size for p in target.parent.glob(target.name + "*") if p.is_file())
    vector_bytes = sum(p.stat().st_size for p in folder.iterdir())
    print(f"store {store_bytes / 1e9:.2f} GB, vectors file {vector_bytes / 1e9:.2f} GB; dense search "
          f"{'through the candidate cut' if args.leaves > RETRIEVAL.dense_exact_max else 'exact'} "
          f"(dense_exact_max {RETRIEVAL.dense_exact_max:,}, dense_cut_pool {RETRIEVAL.dense_cut_pool:,})", flush=True)
    trees = {"this tree": REPO} if args.against is None else {"this tree": REPO, str(args.against): args.against}
    figures = {label: ([], [], []) for label in trees}
    for run in range(args.runs):
        for label, code in trees.items():
            data = fresh(target, code=code)
            totals, cpus, peaks = figures[label]
            totals.append(data["total_s"])
            cpus.append(data["cpu_s"])
            peaks.append(data["peak_bytes"])
            show(f"fresh process, matrix file mapped, run {run + 1}" + (f" ({label})" if args.against else ""), data)
    for label, (totals, cpus, peaks) in figures.items():
        print(f"with the file, {args.runs} fresh processes{f' ({label})' if args.against else ''}: "
              f"p50 {np.percentile(totals, 50) * 1000:.0f} ms, "
              f"p95 {np.percentile(totals, 95) * 1000:.0f} ms wall; CPU p50 {np.median(cpus) * 1000:.0f} ms; "
              f"peak memory max {max(peaks) / 2**20:,.0f} MiB; {load()} (targets: <= 100 ms at 100,000 leaves; "
              f"p50 <= 300 ms, peak <= 1,536 MiB at 1,000,000)", flush=True)
    if args.recall and args.leaves > RETRIEVAL.dense_exact_max:
        data = fresh(target, RECALL, str(args.recall), str(EVALDATA / "dev.jsonl"))
        print(f"candidate cut against exact dense search, {args.recall} random queries: recall@{RETRIEVAL.k} "
              f"{data['recall']:.3f} (worst {data['worst']:.2f}), cut {data['cut_s'] * 1000:.0f} ms (warm); {load()}")
        print(f"BM25 scoring only rows with a rare phrase against every matching row, {data['bm25_questions']} "
              f"FinanceBench dev questions: top {RETRIEVAL.k} shared {data['bm25_recall']:.3f} (worst "
              f"{data['bm25_worst']:.2f}); median {data['bm25_cut_s'] * 1000:.0f} ms against "
              f"{data['bm25_full_s'] * 1000:.0f} ms (warm); {load()}")
    return 0


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores"


if __name__ == "__main__":
    sys.exit(main())
