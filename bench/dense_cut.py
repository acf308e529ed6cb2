"""The dense candidate cut: where it should take over from exact search, and what it keeps.

    python bench/dense_cut.py sizes [--sizes 100000,250000,500000,1000000] [--dir /tmp/...]
    python bench/dense_cut.py real STORE.db [STORE.db ...] [--questions ../shared/evaldata/dev.jsonl]

`sizes`: for each size, a vector file of random unit vectors (384 dimensions, as the default
embedder's) is written as the store writes it, and a fresh process maps it and runs one dense
search, exactly and through the cut (retrieve/settings.py dense_cut_pool, dense_cut_levels):
wall time of that first search and the process's peak resident memory (VmHWM: mapped pages count), the
median of `--runs` processes each, and the cut's recall@k against exact over 30 random queries.
Random vectors are the cut's worst case: nothing for the sign bits to exploit.

`real`: every vector of the default embedder in the given stores (deduplicated: stores built from
the same documents share them), and the questions of the evaluation file embedded by the default
embedder; recall@k of the cut against exact search at several pool sizes, as a share of the rows
(the default pool is 1 % of a million). Real stores are small, so the pool's share of the rows,
not its count, is what carries over to a large store.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DIM = 384

FRESH = """
import json, sys, time
import numpy as np
from pathlib import Path
from longqa.retrieve.settings import RETRIEVAL
from longqa.store import vector_file
from longqa.store.vectors import VectorMatrix
path, mode = Path(sys.argv[1]), sys.argv[2]
query = np.random.default_rng(int(sys.argv[3])).normal(size=384).astype(np.float32)
tick = time.perf_counter()
m = vector_file.read(path, store_uuid="bench", version=0, model="bench")
vectors = VectorMatrix("bench", m.node_ids, m.doc_ids, m.matrix, m.codes, m.rows)
cut = RETRIEVAL.dense_cut() if mode == "cut" else None
if cut is not None:
    cut = type(cut)(0, cut.pool, cut.levels)
hits = vectors.search(query, RETRIEVAL.k, cut=cut)
print(json.dumps({"s": time.perf_counter() - tick, "peak": int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024}))
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores"


def write_random(path: Path, rows: int) -> None:
    from longqa.store import vector_file

    rng = np.random.default_rng(rows)
    matrix = np.empty((rows, DIM), np.float32)
    for first in range(0, rows, 100_000):
        block = rng.normal(size=(min(100_000, rows - first), DIM)).astype(np.float32)
        matrix[first:first + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    ids = np.arange(1, rows + 1, dtype=np.int64)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    assert vector_file.write(path, store_uuid="bench", version=0, model="bench", node_ids=ids,
                             doc_ids=(ids - 1) // 1000 + 1, matrix=matrix)


def fresh(path: Path, mode: str, seed: int) -> dict:
    run = subprocess.run([sys.executable, "-c", FRESH, str(path), mode, str(seed)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    if run.returncode:
        raise SystemExit(run.stderr[-2000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def recall(vectors, queries, k: int, cut) -> float:
    kept = []
    for query in queries:
        exact = {h.node_id for h in vectors.search(query, k)}
        kept.append(len(exact & {h.node_id for h in vectors.search(query, k, cut=cut)}) / max(1, len(exact)))
    return float(np.mean(kept))


def sizes(args) -> None:
    from longqa.retrieve.settings import RETRIEVAL
    from longqa.store import vector_file
    from longqa.store.vectors import Cut, VectorMatrix

    folder = Path(args.dir or tempfile.mkdtemp(prefix="dense-cut-"))
    print(f"pool {RETRIEVAL.dense_cut_pool:,}, {RETRIEVAL.dense_cut_levels} bands, k {RETRIEVAL.k}; files in {folder}")
    try:
        for rows in [int(s) for s in args.sizes.split(",")]:
            path = folder / "vectors" / f"random-{rows}.lqv"
            if not path.exists():
                write_random(path, rows)
            line = []
            for mode in ("exact", "cut"):
                runs = [fresh(path, mode, seed) for seed in range(args.runs)]
                line.append(f"{mode} {np.median([r['s'] for r in runs]) * 1000:.0f} ms, "
                            f"peak {np.median([r['peak'] for r in runs]) / 2**20:,.0f} MiB")
            m = vector_file.read(path, store_uuid="bench", version=0, model="bench")
            vectors = VectorMatrix("bench", m.node_ids, m.doc_ids, m.matrix, m.codes, m.rows)
            queries = np.random.default_rng(5).normal(size=(30, DIM)).astype(np.float32)
            kept = recall(vectors, queries, RETRIEVAL.k, Cut(0, RETRIEVAL.dense_cut_pool, RETRIEVAL.dense_cut_levels))
            print(f"{rows:>9,} vectors, fresh process, first search: {'; '.join(line)}; cut recall@{RETRIEVAL.k} "
                  f"{kept:.3f}; {load()}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def real(args) -> None:
    from longqa.models.defaults import EMBEDDER_NAME
    from longqa.models.resolve import load_embedder
    from longqa.retrieve.settings import RETRIEVAL
    from longqa.store.vectors import Cut, VectorMatrix

    seen, rows = set(), []
    for store in args.stores:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        for (blob,) in conn.execute("SELECT vector FROM embeddings WHERE model = ?", [EMBEDDER_NAME]):
            if blob not in seen:
                seen.add(blob)
                rows.append(np.frombuffer(blob, np.float32))
        conn.close()
    matrix = np.stack(rows)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = np.arange(1, len(matrix) + 1, dtype=np.int64)
    vectors = VectorMatrix(EMBEDDER_NAME, ids, ids, matrix)
    questions = [json.loads(line)["question"] for line in Path(args.questions).read_text().splitlines() if line.strip()]
    questions = questions[:args.limit]
    queries = load_embedder().embed(questions)
    print(f"{len(matrix):,} distinct real vectors from {len(args.stores)} stores; {len(questions)} questions; "
          f"{RETRIEVAL.dense_cut_levels} bands, k {RETRIEVAL.k}")
    for share in (0.005, 0.01, 0.02, 0.05):
        pool = max(RETRIEVAL.k, int(round(share * len(matrix))))
        line = [f"{bands} band{'s' * (bands > 1)} {recall(vectors, queries, RETRIEVAL.k, Cut(0, pool, bands)):.3f}"
                for bands in (1, RETRIEVAL.dense_cut_levels)]
        print(f"pool {share:.1%} of the rows ({pool:,}): recall@{RETRIEVAL.k} {', '.join(line)}; {load()}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("sizes")
    one.add_argument("--sizes", default="100000,250000,500000,1000000")
    one.add_argument("--runs", type=int, default=3)
    one.add_argument("--dir")
    one.add_argument("--keep", action="store_true", help="keep the vector files")
    two = sub.add_parser("real")
    two.add_argument("stores", nargs="+")
    two.add_argument("--questions", default=str(REPO.parent / "shared" / "evaldata" / "dev.jsonl"))
    two.add_argument("--limit", type=int, default=300)
    args = parser.parse_args()
    sizes(args) if args.command == "sizes" else real(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
