"""Print where the time of an evaluation run went, and project a larger run from it.

    python bench/eval_timing.py REPORT.json [--questions 150]

Reads the JSON report `longqa eval --out` wrote (and the per-question results file it names):
seconds per question for each system and dataset, split into retrieval and generation, the
preparation (ingest, chunking) per dataset, and a projection for N questions spread over the
datasets as `--limit N` would spread them. Preparation grows with the corpus, not the question
count, so the projection scales it by each dataset's document count as given with --docs-scale
(default 1: the same corpus).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from statistics import mean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--questions", type=int, default=150, help="questions in the projected run")
    parser.add_argument("--docs-scale", type=float, default=1.0, help="projected corpus size / this corpus size")
    args = parser.parse_args()

    report = json.loads(args.report.read_text())
    records = [json.loads(line) for line in Path(report["results_file"]).open() if line.strip()]
    chosen = {(r["system"], r["id"]) for r in records}
    print(f"run: {report['questions']} questions, systems {', '.join(report['systems'])}, protocol "
          f"{report['protocol']}, budget {report['budget']}, machine {report['machine']['cpus']} CPUs, "
          f"{report['date']}, elapsed {report['elapsed_seconds']:.0f} s")
    print(f"{len(chosen)} (system, question) results\n")

    by = defaultdict(list)
    for r in records:
        by[(r["dataset"], r["system"])].append(r)
    print(f"{'dataset':<13} {'system':<20} {'n':>3} {'total s/q':>10} {'retrieve':>9} {'generate':>9} "
          f"{'calls':>6} {'prompt tok':>10}")
    per_question = defaultdict(float)  # dataset → seconds per question over all systems
    for (dataset, system), rs in sorted(by.items()):
        total = mean(r["seconds"]["total"] for r in rs)
        per_question[dataset] += total
        prompts = [r["prompt_tokens"] for r in rs if r.get("prompt_tokens")]
        print(f"{dataset:<13} {system:<20} {len(rs):>3} {total:>10.1f} "
              f"{mean(r['seconds']['retrieve'] for r in rs):>9.1f} {mean(r['seconds']['generate'] for r in rs):>9.1f} "
              f"{mean(r['model_calls'] for r in rs):>6.1f} {mean(prompts) if prompts else 0:>10.0f}")

    print("\npreparation per dataset (seconds spent in this run / recorded when first built)")
    prep_total = 0.0
    for dataset, info in report.get("ingest", {}).items():
        spent = info.get("seconds_recorded", 0) + info.get("chunk_seconds_now", 0)
        prep_total += spent
        print(f"  {dataset:<13} {info.get('documents', 0):>4} docs {info.get('pages', 0):>6} pages  ingest "
              f"{info.get('seconds_recorded', 0):>7.1f} s  chunks+vectors {info.get('chunk_seconds_now', 0):>7.1f} s")

    datasets = report["datasets"]
    share = args.questions / max(sum(datasets.values()), 1)
    asking = sum(per_question[d] * n * share for d, n in datasets.items())
    print(f"\nprojection for {args.questions} questions (same dataset mix, same systems):")
    print(f"  asking  {asking / 60:7.1f} min")
    print(f"  prepare {prep_total * args.docs_scale / 60:7.1f} min (x{args.docs_scale} corpus)")
    print(f"  total   {(asking + prep_total * args.docs_scale) / 60:7.1f} min")


if __name__ == "__main__":
    main()
