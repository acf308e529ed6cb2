"""How often the "nothing relevant" decision (ask exits 4) refuses an answerable question, and how
often it lets a foreign one through, on real stores.

    LONGQA_THREADS=1 python bench/relevance.py ../shared/evaldata/dev.jsonl --work-dir /work/evalrun-tune \
        [--out eval/relevance-gate-tune.json]

Answerable: each evaluation store's own questions (the questions of the run in `work-dir/runs/`),
and the natural questions about the sample handbook below. Foreign: every other dataset's questions
asked of that store, and the dev questions asked of the handbook. Prints, for the settings in use,
refusals of answerable questions and foreign questions let through, with the load average; then the
same for a small grid of thresholds, so a change of rule can be compared on the tune half only.
`--out` writes the same figures as a report (commit, date, command, load), which the `relevance.*`
settings and ask/search/relevance.py cite.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from longqa.ask.analysis import analyze
from longqa.ask.search import relevance as evidence  # noqa: E402
from longqa.ask.pipeline import Pipeline  # noqa: E402
from longqa.ask.settings import DEFAULTS  # noqa: E402

RELEVANCE = DEFAULTS.relevance
from longqa.ingest import Ingestor  # noqa: E402
from longqa.models.resolve import load_embedder  # noqa: E402
from longqa.store import open_db  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# Questions a new user asks of the sample handbook, in their own words (all answered, or at least
# touched on, by the handbook).
HANDBOOK = [
    "When was the works built?",
    "What happens if a sample fails?",
    "What does the glossary say about turbidity?",
    "How often are the filters backwashed?",
    "What is the chlorine dose?",
    "Is the river intake screened?",
    "What are the plans for 2025?",
    "How much did electricity cost in 2023?",
    "Who decides whether to stop supply?",
    "How many people does the works supply?",
    "What coagulant is used?",
    "How long can the standby generators run?",
    "What should I do if there is a chemical spill?",
    "How is sludge treated?",
    "What training do new operators get?",
    "How big is the raw water reservoir?",
    "When does abstraction stop?",
    "What spares must be kept on site?",
    "Tell me about the laboratory.",
    "What does NTU mean?",
]


def measures(pipeline: Pipeline, question: str) -> evidence.EvidenceCheck:
    first = pipeline.retriever.retrieve(question, analyze.from_rules(question).pattern, None)
    return evidence.check(pipeline.db, question, first.max_cosine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--foreign", type=int, default=40, help="foreign questions per store")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures to this JSON report")
    args = parser.parse_args()
    embedder = load_embedder(None, None)
    every = {json.loads(line)["id"]: json.loads(line) for line in open(args.questions)}
    run_ids = {json.loads(line)["id"] for f in (args.work_dir / "runs").glob("*.jsonl") for line in open(f)}
    rows: list[tuple[str, bool, evidence.EvidenceCheck, str]] = []  # (store, answerable, measures, question)
    stores = sorted(args.work_dir.glob("stores/*.db"))
    for path in stores:
        dataset = path.name.split("-")[0]
        pipeline = Pipeline(open_db(path), None, embedder)
        own = [q for i, q in every.items() if i in run_ids and q["dataset"] == dataset]
        foreign = [q for i, q in sorted(every.items()) if i in run_ids and q["dataset"] != dataset][::7][:args.foreign]
        for q, answerable in [(q, True) for q in own] + [(q, False) for q in foreign]:
            rows.append((dataset, answerable, measures(pipeline, q["question"]), q["question"]))
    handbook = args.work_dir / "handbook-relevance.db"
    if not handbook.exists():
        Ingestor(db=open_db(handbook), embedder=embedder).ingest(REPO / "examples" / "kestrel_valley_handbook.pdf")
    pipeline = Pipeline(open_db(handbook), None, embedder)
    foreign = [q["question"] for _, q in sorted(every.items())][::13][:args.foreign]
    for question, answerable in [(q, True) for q in HANDBOOK] + [(q, False) for q in foreign]:
        rows.append(("handbook", answerable, measures(pipeline, question), question))

    load = os.getloadavg()[0]
    print(f"stores={len(stores) + 1} questions={len(rows)} load={load:.2f}")

    def decide(m: evidence.EvidenceCheck, coverage_min: float, cosine_min: float) -> bool:
        return evidence.relevant(m.coverage, m.max_cosine, m.topical, coverage_min, cosine_min)

    def counts(coverage_min: float, cosine_min: float) -> dict:
        return {"coverage_min": coverage_min, "cosine_min": cosine_min,
                "answerable": sum(r[1] for r in rows), "foreign": sum(not r[1] for r in rows),
                "refused": sum(1 for r in rows if r[1] and not decide(r[2], coverage_min, cosine_min)),
                "passed": sum(1 for r in rows if not r[1] and decide(r[2], coverage_min, cosine_min))}

    def table(coverage_min: float, cosine_min: float, verbose: bool = False) -> str:
        parts = []
        for store in sorted({r[0] for r in rows}):
            mine = [r for r in rows if r[0] == store]
            refused = [r for r in mine if r[1] and not decide(r[2], coverage_min, cosine_min)]
            passed = [r for r in mine if not r[1] and decide(r[2], coverage_min, cosine_min)]
            parts.append(f"{store} refused {len(refused)}/{sum(r[1] for r in mine)} "
                         f"passed {len(passed)}/{sum(not r[1] for r in mine)}")
            if verbose:
                for r in refused:
                    print(f"    refused: cov {r[2].coverage:.2f} cos {r[2].max_cosine or 0:.2f} "
                          f"missing {r[2].missing} {r[3][:80]!r}")
        refused = sum(1 for r in rows if r[1] and not decide(r[2], coverage_min, cosine_min))
        passed = sum(1 for r in rows if not r[1] and decide(r[2], coverage_min, cosine_min))
        return (f"coverage_min={coverage_min} cosine_min={cosine_min}: refused {refused}/{sum(r[1] for r in rows)} "
                f"answerable, passed {passed}/{sum(not r[1] for r in rows)} foreign\n    " + "; ".join(parts))

    print("in use: " + table(RELEVANCE.coverage_min, RELEVANCE.cosine_min, verbose=True))
    grid = [(coverage_min, cosine_min) for coverage_min in (0.5, 0.6, 0.7, 0.8) for cosine_min in (0.3, 0.35, 0.42)]
    for coverage_min, cosine_min in grid:
        print(table(coverage_min, cosine_min))
    if args.out is not None:
        import datetime
        import subprocess

        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip()
        report = {"measures": "the 'nothing relevant' gate (ask exits 4): answerable questions refused, "
                              "foreign questions let through",
                  "command": "LONGQA_THREADS=1 python bench/relevance.py " + " ".join(sys.argv[1:]),
                  "commit": commit, "date": datetime.date.today().isoformat(), "load": round(load, 2),
                  "stores": len(stores) + 1, "in_use": counts(RELEVANCE.coverage_min, RELEVANCE.cosine_min),
                  "grid": [counts(a, b) for a, b in grid]}
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
