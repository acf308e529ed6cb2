"""Embedding throughput and ingest speed with embeddings, on real documents.

    python bench/embed.py [PATH ...] [--limit N] [--embed-model FILE.gguf] [--no-embed] [--json]

PATH defaults to ../shared/evaldata/docs/financebench (files or folders; .pdf/.txt/.md).
Ingests every document into a fresh temporary store with the embedder in use and prints:
pages and leaves ingested, ingest pages/s (parse + structure + embed + store; target >= 30 on a
2-core laptop CPU), embedding throughput in leaves/s and tokens/s (batched, as ingest does it),
the share of ingest time spent embedding, the embedder's load time, and peak resident memory.
Figures depend on machine load: on a shared machine, say so when reporting them. CPU seconds
of the whole ingest and of embedding (all threads) are also printed: tokens per CPU-second hardly depend on load,
and `pages_per_s_if_embedding_had_all_cores` estimates the idle-machine rate from them.

With `--no-embed` the documents are stored as `longqa ingest --no-embed` stores them (no embedder:
searchable by BM25 when the ingest ends; `searchable_pages_per_s`), then `longqa reindex` gives
every leaf its vector (`reindex_s`); `ingest_pages_per_s` is then the rate until both are done.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata")) / "docs" / "financebench"


class TimedEmbedder:
    """Wraps the embedder to count the leaves, tokens and seconds spent embedding."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.seconds, self.cpu_seconds, self.texts, self.tokens, self.calls = 0.0, 0.0, 0, 0, 0

    def embed(self, texts):
        started, cpu = time.perf_counter(), time.process_time()
        vectors = self.inner.embed(texts)
        self.seconds += time.perf_counter() - started
        self.cpu_seconds += time.process_time() - cpu  # all threads: robust to a busy machine
        self.texts += len(texts)
        self.calls += 1
        if hasattr(self.inner, "count_tokens"):  # not timed: only for the tokens/s figure
            self.tokens += sum(self.inner.count_tokens(t) for t in texts)
        return vectors


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(DEFAULT_DOCS)])
    parser.add_argument("--limit", type=int, default=None, help="only the first N documents")
    parser.add_argument("--embed-model", default=None)
    parser.add_argument("--no-embed", action="store_true",
                        help="store without vectors (`ingest --no-embed`), then time `reindex` filling them in")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from longqa.ingest import Ingestor, expand_inputs
    from longqa.models.resolve import load_embedder
    from longqa.reindex import reindex
    from longqa.store import open_db

    files, missing = expand_inputs(args.paths)
    if missing or not files:
        print(f"bench/embed.py: nothing to ingest at {', '.join(args.paths)}", file=sys.stderr)
        return 1
    files = files[: args.limit] if args.limit else files

    started = time.perf_counter()
    embedder = TimedEmbedder(load_embedder(args.embed_model))
    load_seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "bench.db")
        ingestor = Ingestor(db=db, embedder=None if args.no_embed else embedder)
        pages = failed = 0
        started, cpu_started = time.perf_counter(), time.process_time()
        for path in files:
            before = embedder.seconds
            result = ingestor.ingest(path)
            pages += result.pages
            failed += result.status == "failed"
            print(f"{path.name}: {result.status}, {result.pages} pages, {result.seconds:.1f} s "
                  f"(embedding {embedder.seconds - before:.1f} s)", file=sys.stderr, flush=True)
        searchable = time.perf_counter() - started
        if args.no_embed:
            reindex(db, embedder)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        stored = db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    figures = {
        "documents": len(files), "failed": failed, "pages": pages, "leaves": embedder.texts,
        "vectors_stored": stored, "embedder": embedder.name, "dim": embedder.dim,
        "cpu_count": os.cpu_count(), "load_avg_1min": round(os.getloadavg()[0], 2),
        "embedder_load_s": round(load_seconds, 2),
        "ingest_s": round(seconds, 2),
        **({"searchable_s": round(searchable, 2), "searchable_pages_per_s": round(pages / searchable, 1),
            "reindex_s": round(seconds - searchable, 2)} if args.no_embed else {}),
        "ingest_pages_per_s": round(pages / seconds, 1) if seconds else None,
        "ingest_cpu_s": round(cpu_seconds, 2),
        "ingest_pages_per_cpu_s": round(pages / cpu_seconds, 2) if cpu_seconds else None,
        "embed_s": round(embedder.seconds, 2),
        "embed_share_of_ingest": round(embedder.seconds / seconds, 3) if seconds else None,
        "embed_leaves_per_s": round(embedder.texts / embedder.seconds, 1) if embedder.seconds else None,
        "embed_tokens_per_s": round(embedder.tokens / embedder.seconds) if embedder.seconds else None,
        "embed_cpu_s": round(embedder.cpu_seconds, 2),
        "embed_tokens_per_cpu_s": round(embedder.tokens / embedder.cpu_seconds) if embedder.cpu_seconds else None,
        "pages_per_s_if_embedding_had_all_cores": round(
            pages / (seconds - embedder.seconds + embedder.cpu_seconds / (os.cpu_count() or 1)), 1)
            if seconds else None,
        "mean_tokens_per_leaf": round(embedder.tokens / embedder.texts, 1) if embedder.texts else None,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:>24}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
