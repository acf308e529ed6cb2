"""Benchmark `ingest --graph` on L-Eval narratives; prints figures, asserts nothing.

    python bench/graph.py [--docs N] [--groups N] [--db bench/out/graph.db]

1. Graph ingest: the first N L-Eval documents (of ../shared/evaldata) are stored (parse,
   structure, embed: not timed here), then their graphs are built with attention edges from the
   default gemma-3-270m. Printed: CPU and wall seconds per 1,000 input tokens (model loading
   apart), attention passes, levels and the first level's share of the input, generated tokens
   per input token (0: extractive points).
2. Attention versus the cosine proxy: for every point with at least 3 children, the Spearman
   rank correlation of its attention edge weights with the cosine weights over the same children,
   and how often both put the same child first.
3. Generated points (GARLIC's summarising step) with the default model on the first --groups
   level-1 groups: generated tokens per input token, seconds per 1,000 input tokens, and
   faithfulness (share of a bullet's content words found in its sources): why the default points
   are extractive.

Targets, on 2 cores: graph ingest <= 15 s per 1,000 input tokens, <= 0.3 generated
tokens per input token. The machine's cores may be shared: the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))
OUT = REPO / "bench" / "out"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}"


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(-a)), np.argsort(np.argsort(-b))
    if np.std(ra) == 0 or np.std(rb) == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=3)
    parser.add_argument("--groups", type=int, default=6)
    parser.add_argument("--db", type=Path, default=OUT / "graph.db")
    args = parser.parse_args()
    os.environ.setdefault("LONGQA_THREADS", "1")

    from longqa import tokens
    from longqa.graph.build import GraphBuilder, _groups
    from longqa.graph.edges import cosine_weights
    from longqa.graph.generated import generated_points
    from longqa.graph.points import faithfulness
    from longqa.graph.settings import DEFAULT
    from longqa.ingest import Ingestor
    from longqa.models.resolve import load_embedder, load_generator
    from longqa.store import open_db
    from longqa.store.graph import load_graph
    from longqa.store.nodes import load_tree
    from longqa.structure.tree import walk

    # one document per L-Eval task (narratives, contracts, papers, filings, ...), in name order
    firsts: dict[str, Path] = {}
    for path in sorted((EVALDATA / "docs" / "leval").glob("*.txt")):
        firsts.setdefault(path.stem.rsplit("_", 1)[0], path)
    files = list(firsts.values())[: args.docs]
    if not files:
        sys.exit(f"no L-Eval documents under {EVALDATA}")
    args.db.parent.mkdir(parents=True, exist_ok=True)
    if args.db.exists():
        args.db.unlink()
    db = open_db(args.db)
    started = time.perf_counter()
    embedder, generator = load_embedder(), load_generator()
    print(f"models loaded in {time.perf_counter() - started:.1f} s ({load()})")
    ingestor = Ingestor(db=db, embedder=embedder)
    doc_ids = []
    for path in files:
        result = ingestor.ingest(path)
        doc_ids.append(result.id)
        print(f"  stored {path.name}: {result.nodes} nodes, {result.seconds:.1f} s")

    print("\n1. graph ingest (attention edges, extractive points)")
    builder = GraphBuilder(db, embedder, lambda: generator)
    wall0 = time.perf_counter()
    builder._edge_source()  # open the attention context before timing documents
    print(f"  attention context opened in {time.perf_counter() - wall0:.2f} s")
    total_input = total_cpu = total_wall = 0.0
    for doc_id in doc_ids:
        cpu, wall = time.process_time(), time.perf_counter()
        graph = builder.build(doc_id, force=True)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        total_input += graph.input_tokens
        total_cpu += cpu
        total_wall += wall
        level1 = sum(n.tokens for n in graph.nodes if n.level == 1)
        print(f"  doc {doc_id}: {graph.input_tokens:,} input tokens, {graph.levels} levels, level 1 = "
              f"{level1 / graph.input_tokens:.0%} of the input, {cpu / graph.input_tokens * 1000:.1f} CPU s and "
              f"{wall / graph.input_tokens * 1000:.1f} wall s per 1,000 tokens ({load()})")
    edges = builder._edges
    print(f"  all: {total_cpu / total_input * 1000:.1f} CPU s / {total_wall / total_input * 1000:.1f} wall s per "
          f"1,000 input tokens; {edges.passes} attention passes of {edges.pass_tokens / edges.passes:.0f} model "
          f"tokens on average; generated tokens per input token 0.00 ({load()})")

    print("\n2. attention edges versus the cosine proxy")
    rhos, same_top, points = [], 0, 0
    for doc_id in doc_ids:
        graph = load_graph(db, doc_id)
        by_id = {n.id: n for n in graph.nodes}
        children: dict[int, list[tuple[int, float]]] = {}
        for parent, child, weight in graph.edge_list:
            children.setdefault(parent, []).append((child, weight))
        for parent, kids in children.items():
            if len(kids) < 3:
                continue
            attention = np.array([w for _, w in kids])
            member_vectors = np.stack([by_id[c].vector for c, _ in kids])
            cosine = cosine_weights(member_vectors, by_id[parent].vector[None, :], keep=len(kids))[0]
            rho = spearman(attention, cosine)
            if not np.isnan(rho):
                rhos.append(rho)
            same_top += int(np.argmax(attention) == np.argmax(cosine))
            points += 1
    print(f"  {points} points: Spearman rho median {statistics.median(rhos):.2f}, mean {statistics.mean(rhos):.2f}; "
          f"same strongest child {same_top / points:.0%} ({load()})")

    print("\n3. generated points (default model) on level-1 groups")
    gen_input = gen_tokens = 0
    gen_seconds = 0.0
    scores = []
    bullets_all: list[str] = []
    done = 0
    for doc_id in doc_ids:
        leaves = [n for n in walk(load_tree(db, doc_id)) if n.is_leaf and n.text.strip()]
        for group in _groups([tokens.count(leaf.text) for leaf in leaves], DEFAULT.group_tokens):
            if done >= args.groups:
                break
            texts = [leaves[i].text for i in group]
            size = sum(tokens.count(t) for t in texts)
            cpu = time.process_time()
            bullets = generated_points(generator, texts, max_tokens=int(0.3 * size))
            gen_seconds += time.process_time() - cpu
            gen_input += size
            gen_tokens += sum(tokens.count(b) for b in bullets)
            scores += [faithfulness(b, texts) for b in bullets]
            bullets_all += bullets
            if done < 2:
                for b in bullets[:3]:
                    print(f"    e.g. {b[:120]!r} faithfulness {faithfulness(b, texts):.2f}")
            done += 1
    faithful = sum(1 for s in scores if s >= 0.9) / max(len(scores), 1)
    print(f"  {done} groups, {len(scores)} bullets: {gen_tokens / gen_input:.2f} generated tokens per input token, "
          f"{gen_seconds / gen_input * 1000:.1f} CPU s per 1,000 input tokens; faithfulness mean "
          f"{statistics.mean(scores) if scores else 0:.2f}, bullets >= 0.9: {faithful:.0%}, distinct bullets "
          f"{len(set(bullets_all)) / max(len(bullets_all), 1):.0%} ({load()})")
    builder.close()


if __name__ == "__main__":
    main()
