"""Dense retrieval recall of embedder variants on the dev questions that carry gold evidence.

    python bench/embed_recall.py [--variant SPEC ...] [--k 5 10 20] [--datasets ...]

SPEC: `llama-f16-512` (today's default: the F16 GGUF through llama.cpp, leaves cut at 512 word
pieces) or `onnx-int8-N` (the int8 ONNX through onnxruntime, leaves cut at N word pieces). The
documents of the chosen questions are ingested once without vectors into bench/out/recall.db;
every variant then embeds all their leaves (cached in bench/out/recall-<variant>.npy, so a rerun
only measures what is new) and, for every question, ranks the leaves of the question's own
documents by cosine alone (no BM25, no fusion: this isolates the embedder). A gold passage is
found at k when it is covered (longqa.eval.metrics, coverage >= 0.8 in one window) by the top-k
leaves joined in document order; FinanceBench also counts a page hit when a top-k leaf spans the
gold page. Printed: recall per variant and k, the loss against the first variant, and the CPU
seconds each variant spent embedding (with the load average).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))
OUT = REPO / "bench" / "out"
DATASETS = ("financebench", "uda", "hotpotqa", "musique")


def make_embedder(spec: str):
    from longqa.models.defaults import default_embedder_path
    from longqa.models.llama import LlamaEmbedder, cpu_threads
    from longqa.models.onnx_embed import OnnxEmbedder, package_model

    kind, weights, cut = spec.split("-")
    if kind == "llama":
        return LlamaEmbedder(default_embedder_path(), name=spec, max_tokens=int(cut))
    return OnnxEmbedder(package_model(), default_embedder_path(), name=spec, max_tokens=int(cut),
                        threads=cpu_threads())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", action="append", default=None)
    parser.add_argument("--k", type=int, nargs="*", default=[5, 10, 20])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    args = parser.parse_args()
    variants = args.variant or ["llama-f16-512", "onnx-int8-256", "onnx-int8-128", "onnx-int8-64"]
    if not (EVALDATA / "dev.jsonl").is_file():
        print(f"evaluation data not found at {EVALDATA}; nothing to measure")
        return 0
    sys.path.insert(0, str(REPO))
    from longqa.embedding import embedding_text
    from longqa.eval.metrics import EVIDENCE_THRESHOLD, tokens_of, window_coverage
    from longqa.ingest import Ingestor
    from longqa.store import open_db

    questions = [json.loads(line) for line in (EVALDATA / "dev.jsonl").open()]
    questions = [q for q in questions if q["dataset"] in args.datasets and q.get("evidence")]
    OUT.mkdir(parents=True, exist_ok=True)
    db = open_db(OUT / "recall.db")
    ingestor = Ingestor(db=db)
    doc_of_path = {}
    for path in sorted({d for q in questions for d in q["docs"]}):
        result = ingestor.ingest(EVALDATA / path)
        doc_of_path[path] = result.id
    rows = db.execute("SELECT id, doc_id, path, text, page_start, page_end FROM nodes "
                      "WHERE kind = 'paragraph' ORDER BY id").fetchall()
    node_ids = np.array([r[0] for r in rows])
    doc_ids = np.array([r[1] for r in rows])
    texts = [embedding_text(r[2], r[3]) for r in rows]
    pages = db.execute("SELECT sum(pages) FROM documents").fetchone()[0]
    print(f"{len(questions)} questions with evidence ({', '.join(args.datasets)}), "
          f"{len(doc_of_path)} documents, {pages} pages, {len(rows)} leaves; {os.cpu_count()} cores, shared machine")

    results = {}
    for spec in variants:
        embedder = make_embedder(spec)
        cache = OUT / f"recall-{spec}.npz"
        cached = np.load(cache) if cache.exists() else None
        if cached is not None and np.array_equal(cached["node_ids"], node_ids):
            vectors, cpu = cached["vectors"], float(cached["cpu"])
            load = float(cached["load"]) if "load" in cached else float("nan")
        else:
            tick = time.process_time()
            vectors = embedder.embed(texts)
            cpu, load = time.process_time() - tick, os.getloadavg()[0]
            np.savez(cache, node_ids=node_ids, vectors=vectors, cpu=cpu, load=load)
        hits = {k: [] for k in args.k}
        page_hits = {k: [] for k in args.k}
        for q in questions:
            scope = np.isin(doc_ids, [doc_of_path[d] for d in q["docs"]])
            rows_in = np.flatnonzero(scope)
            scores = vectors[rows_in] @ embedder.embed([q["question"]])[0]
            ranked = rows_in[np.argsort(-scores, kind="stable")]
            for k in args.k:
                top = sorted(ranked[:k])
                context = tokens_of("\n".join(rows[i][3] for i in top))
                for ev in q["evidence"]:
                    need = tokens_of(ev["text"])
                    if need:
                        hits[k].append(window_coverage(need, context) >= EVIDENCE_THRESHOLD)
                    if q["dataset"] == "financebench" and ev.get("page"):
                        page_hits[k].append(any(rows[i][4] <= ev["page"] <= rows[i][5] for i in top))
        results[spec] = {k: (np.mean(hits[k]), np.mean(page_hits[k]) if page_hits[k] else None) for k in args.k}
        print(f"{spec:>15}: embedding {cpu:.1f} CPU s = {pages / cpu:.2f} pages per CPU-second "
              f"(load {load:.1f} while embedding, nan: not recorded); " + "; ".join(
                  f"recall@{k} {r:.3f}" + (f" (FinanceBench page@{k} {p:.3f})" if p is not None else "")
                  for k, (r, p) in results[spec].items()), flush=True)
        del embedder
    base = variants[0]
    for spec in variants[1:]:
        losses = ", ".join(f"@{k} {results[base][k][0] - results[spec][k][0]:+.3f}" for k in args.k)
        print(f"recall loss of {spec} against {base}: {losses}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
