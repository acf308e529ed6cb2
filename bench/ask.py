"""Benchmark `longqa ask` on the FinanceBench filings; prints figures, asserts nothing.

    python bench/ask.py [--db bench/out/financebench.db] [--limit N] [--leaves 100000] [--threads N]

1. The store: the FinanceBench PDFs of ../shared/evaldata ingested with embeddings (built on the
   first run into bench/out/, reused after).
2. Per dev question whose filing is stored: analysis-free retrieval latency, time to the first
   answer token and total time (models loaded once, as in a long-running caller; the CLI adds
   process start and model loading, printed separately), tokens given to the generator versus the
   whole document, and whether the gold evidence page is in the context.
3. Retrieval with 100,000 leaves: a copy of the store padded with synthetic leaves (real leaf
   texts and jittered vectors under synthetic documents), timed in a fresh process.
4. Peak memory (max RSS) of this process and of the fresh retrieval process.

Targets on 2 cores with the default models: first token <= 1.5 s, analysis-free retrieval
<= 150 ms, retrieval at 100k leaves <= 100 ms in a fresh process. The machine's cores may be
shared: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))
OUT = REPO / "bench" / "out"


def build_store(db_path: Path) -> None:
    from longqa.ingest import Ingestor
    from longqa.models.resolve import load_embedder
    from longqa.store import open_db

    db = open_db(db_path)
    ingestor = Ingestor(db=db, embedder=load_embedder())
    for pdf in sorted((EVALDATA / "docs" / "financebench").glob("*.pdf")):
        started = time.perf_counter()
        result = ingestor.ingest(pdf)
        print(f"  ingest {pdf.name}: {result.status} {result.nodes} nodes {time.perf_counter() - started:.1f}s", flush=True)


def questions(db, limit: int | None) -> list[dict]:
    stored = {Path(row["path"]).name: row for row in db.query("SELECT id, path, tokens FROM documents")}
    rows = [json.loads(line) for line in (EVALDATA / "dev.jsonl").open()]
    picked = [r for r in rows if r["dataset"] == "financebench" and Path(r["docs"][0]).name in stored]
    for r in picked:
        r["doc"] = stored[Path(r["docs"][0]).name]
    return picked[:limit] if limit else picked


def per_question(db, picked: list[dict], budget: int) -> None:
    from longqa.ask import Pipeline
    from longqa.models.resolve import load_embedder, load_generator

    started = time.perf_counter()
    generator, embedder = load_generator(), load_embedder()
    print(f"models loaded in {time.perf_counter() - started:.2f}s")
    speed_probe(generator)
    full = Pipeline(db, generator, embedder, budget=budget)
    bare = Pipeline(db, None, embedder, use_analysis=False, use_expansion=False)
    bare.retrieve_context("warm-up question about revenue")  # vectors and tokenizer load once
    rows = []
    print(f"{'retr ms':>8} {'calls s':>7} {'prefill s':>9} {'1st tok s':>9} {'total s':>8} {'ctx tok':>7} "
          f"{'doc tok':>8} gold  question")
    for r in picked:
        tick = time.perf_counter()
        bare.retrieve_context(r["question"])
        retrieval = time.perf_counter() - tick
        stream = full.stream(r["question"])
        for _ in stream:
            pass
        result = stream.result
        pages = {e["page"] for e in r["evidence"] if e.get("page")}
        gold = any(p.doc_id == r["doc"]["id"] and any(p.page_start <= g <= p.page_end for g in pages)
                   for p in result.passages)
        t = result.timings
        calls = sum(t.get(k, 0.0) for k in ("analysis", "evidence_probe", "expansion", "outline"))
        rows.append((retrieval, t.get("first_token"), t.get("total"), result.refined.context_tokens, r["doc"]["tokens"],
                     gold, calls, t.get("prefill")))
        first = f"{t['first_token']:.2f}" if t.get("first_token") else "-"
        prefill = f"{t['prefill']:.2f}" if t.get("prefill") else "-"
        print(f"{retrieval * 1000:8.0f} {calls:7.2f} {prefill:>9} {first:>9} {t.get('total', 0):8.2f} "
              f"{result.refined.context_tokens:7d} {r['doc']['tokens']:8d} {'yes' if gold else 'no ':4} "
              f"{r['question'][:52]}", flush=True)
    if rows:
        def med(values):
            values = [v for v in values if v is not None]
            return statistics.median(values) if values else float("nan")
        print(f"median: retrieval {med([r[0] for r in rows]) * 1000:.0f} ms, model calls before the answer "
              f"{med([r[6] for r in rows]):.2f} s, answer prefill {med([r[7] for r in rows]):.2f} s, "
              f"first token {med([r[1] for r in rows]):.2f} s, "
              f"total {med([r[2] for r in rows]):.2f} s, context {med([r[3] for r in rows]):.0f} of "
              f"{med([r[4] for r in rows]):.0f} document tokens "
              f"({med([r[3] / r[4] for r in rows]) * 100:.1f}%), gold page in context {sum(r[5] for r in rows)}/{len(rows)}")


def speed_probe(generator) -> None:
    """The generator's prompt and generation rates right now: on a shared machine they set the
    scale of every latency below (the brief's idle 2-core figures: ~700 and 30-40 tokens/s)."""
    prompt = " ".join(["The company reported higher revenue in the quarter."] * 50)
    n = generator.count_tokens(prompt)
    tick = time.perf_counter()
    generator.label_probs(prompt + "\nIs that so? Answer:", [" yes", " no"])
    prefill = time.perf_counter() - tick
    tick = time.perf_counter()
    out = generator.complete("Once upon a time", max_tokens=32, temperature=0.0)
    gen = time.perf_counter() - tick
    print(f"generator now: prompt {n / prefill:.0f} tokens/s, generation {generator.count_tokens(out) / gen:.1f} tokens/s")


def pad_store(source: Path, target: Path, leaves: int) -> int:
    """Copy the store and add synthetic leaves until it holds `leaves` of them."""
    import numpy as np
    from longqa.store import open_db

    shutil.copyfile(source, target)
    db = open_db(target)
    have = db.execute("SELECT count(*) FROM nodes WHERE kind = 'paragraph'").fetchone()[0]
    real = db.execute(
        "SELECT n.text, n.tokens, e.model, e.dim, e.vector FROM nodes n JOIN embeddings e ON e.node_id = n.id"
    ).fetchall()
    rng = np.random.default_rng(7)
    conn = db.conn
    conn.execute("BEGIN")
    next_id = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] + 1
    doc_number = 0
    while have < leaves:
        doc_number += 1
        doc_id = conn.execute(
            "INSERT INTO documents (path, sha256, title, format, pages, tokens, nodes, structure, bytes, added) "
            "VALUES (?, '', ?, 'synthetic', 100, 0, 0, 'synthetic', 0, '')",
            (f"/synthetic/SYNTH_{doc_number:04d}.pdf", f"Synthetic filing {doc_number}")).lastrowid
        root = next_id
        conn.execute("INSERT INTO nodes (id, doc_id, parent_id, kind, title, path, ord, depth, page_start, page_end, "
                     "char_start, char_end, tokens) VALUES (?, ?, NULL, 'document', ?, '', 0, 0, 1, 100, 0, 0, 0)",
                     (root, doc_id, f"Synthetic filing {doc_number}"))
        next_id += 1
        nodes, vectors = [], []
        for i in range(1000):
            text, count, model, dim, blob = real[(have + i) % len(real)]
            vector = np.frombuffer(blob, dtype=np.float32) + rng.normal(0, 0.02, dim).astype(np.float32)
            vector /= np.linalg.norm(vector)
            nodes.append((next_id, doc_id, root, "paragraph", text, f"Synthetic filing {doc_number}", i + 1, 1,
                          1 + i // 10, 1 + i // 10, 0, len(text), count))
            vectors.append((next_id, model, dim, vector.astype(np.float32).tobytes()))
            next_id += 1
        conn.executemany("INSERT INTO nodes (id, doc_id, parent_id, kind, text, path, ord, depth, page_start, "
                         "page_end, char_start, char_end, tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", nodes)
        conn.executemany("INSERT INTO embeddings (node_id, model, dim, vector) VALUES (?,?,?,?)", vectors)
        have += len(nodes)
    conn.execute("COMMIT")
    return have


FRESH = """
import json, sys, time
from longqa.models.resolve import load_embedder
from longqa.retrieve.hybrid import HybridRetriever
from longqa.store import open_db
embedder = load_embedder()
vector = embedder.embed([sys.argv[2]])[0]
db = open_db(sys.argv[1])
tick = time.perf_counter()
first = HybridRetriever(db, embedder).retrieve(sys.argv[2], query_vector=vector)
cold = time.perf_counter() - tick
tick = time.perf_counter()
again = HybridRetriever(db, embedder).retrieve(sys.argv[3])
warm = time.perf_counter() - tick
# VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child started by a big parent
# would report the parent's peak.
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"cold_s": cold, "cold_parts": first.seconds, "warm_s": warm, "warm_parts": again.seconds,
                  "max_rss_mb": hwm / 1024}))
"""


def big_store(source: Path, leaves: int) -> None:
    target = OUT / f"padded_{leaves}.db"
    if not target.exists():
        started = time.perf_counter()
        total = pad_store(source, target, leaves)
        print(f"padded store: {total} leaves in {time.perf_counter() - started:.0f}s")
    run = subprocess.run([sys.executable, "-c", FRESH, str(target), "What was Nike's revenue in fiscal 2018?",
                          "How much cash did Amazon hold at the end of 2017?"], capture_output=True, text=True, env=os.environ)
    if run.returncode != 0:
        print(run.stderr[-2000:])
        return
    data = json.loads(run.stdout.strip().splitlines()[-1])
    parts = lambda p: ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in p.items())
    print(f"fresh process, {leaves} leaves: first retrieval {data['cold_s'] * 1000:.0f} ms ({parts(data['cold_parts'])}); "
          f"second {data['warm_s'] * 1000:.0f} ms ({parts(data['warm_parts'])}); peak RSS {data['max_rss_mb']:.0f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=OUT / "financebench.db")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--leaves", type=int, default=100_000)
    parser.add_argument("--budget", type=int, default=2000, help="context budget for the answers (tokens)")
    parser.add_argument("--threads", type=int, default=None,
                        help="llama.cpp threads (sets $LONGQA_THREADS; default: every core)")
    parser.add_argument("--skip-questions", action="store_true")
    args = parser.parse_args()
    cores = os.cpu_count()
    if args.threads:
        os.environ["LONGQA_THREADS"] = str(args.threads)  # read when a model is opened
    if not (EVALDATA / "docs" / "financebench").is_dir():
        print(f"evaluation data not found at {EVALDATA}; nothing to measure")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO))
    from longqa.store import open_db

    print(f"load average {os.getloadavg()[0]:.1f} on {cores} cores (shared machine: other work competes); "
          f"llama.cpp threads {os.environ.get('LONGQA_THREADS') or cores}")
    print(f"store {args.db}: ingesting the filings not in it yet (unchanged files are skipped)...")
    build_store(args.db)
    db = open_db(args.db)
    if not args.skip_questions:
        per_question(db, questions(db, args.limit), args.budget)
    big_store(args.db, args.leaves)
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
          f"load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
