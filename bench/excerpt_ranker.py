"""Learn the sentence ranker of tight-budget contexts (longqa/ask/excerpt_ranker.json) from labelled questions.

    # 1. every sentence of the search's pool, for each question of a half asked at a tight budget,
    #    with its features and labels (no generation):
    LONGQA_THREADS=1 python bench/excerpt_ranker.py collect ../shared/evaldata/dev.jsonl --half tune \
        --limit 150 --work-dir /tmp/excerpt-tune
    # 2. fit on the tune half, cross-validated by question; writes the weights file:
    python bench/excerpt_ranker.py fit /tmp/excerpt-tune/sentences.jsonl
    # 3. the shipped weights on the other half, against the hand-weighted score:
    python bench/excerpt_ranker.py score /tmp/excerpt-report/sentences.jsonl

A sentence is a positive when it holds a gold answer (normalised, on word boundaries) or lies, 80 %
of its tokens or more, inside one gold evidence passage (sentences of 6 tokens or more). The fit is
bench/fitting.py's: a softmax over each question's sentences, its strength and features chosen by
5-fold cross-validation by question on what a 500-token budget reaches (sentences taken best first,
each costing its tokens and a separator). The hand-weighted reference is the score the excerpt sums
without the learned ranker (focus, 0.3 × the paragraph's score, 0.3 × the asked kind, cast, field
and hop raises), read from the same features. Every figure is printed with the load average.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fitting  # noqa: E402
from longqa import tokens  # noqa: E402
from longqa.ask import excerpt_ranker  # noqa: E402
from longqa.ask.settings import DEFAULTS  # noqa: E402
from longqa.eval import metrics  # noqa: E402

BUDGETS = (500,)
COVERED = 0.8
SEPARATOR = 2  # tokens a kept sentence costs beyond its own (ask/excerpt.py's GAP)
NAMES = list(excerpt_ranker.FEATURES)


def collect(args) -> None:
    from longqa.eval.runner import EvalSettings, Runner
    from longqa.eval.systems import Resources, make_system
    from longqa.models.resolve import load_embedder

    args.work_dir.mkdir(parents=True, exist_ok=True)
    records = {}
    for line in open(args.questions, encoding="utf-8"):
        record = json.loads(line)
        records[" ".join(record["question"].split())] = record
    out = open(args.work_dir / "sentences.jsonl", "w", encoding="utf-8")
    seen: set[str] = set()
    original = excerpt_ranker.features

    def recording(question, found, readings):
        table = original(question, found, readings)
        record = records.get(" ".join(question.split()))
        if record is not None and record["id"] not in seen:
            seen.add(record["id"])
            out.write(json.dumps(_labelled(record, found, table)) + "\n")
            out.flush()
        return table

    excerpt_ranker.features = recording
    # The excerpt orders sentences by the hand-weighted score while collecting (the features do
    # not depend on the order).
    excerpt_ranker.load = lambda path=None: _Hand()
    resources = Resources.of(None, load_embedder(None, None))
    run = EvalSettings(systems=["longqa"], generate=False, half=args.half, limit=args.limit, budget=args.budget,
                       datasets=args.datasets.split(",") if args.datasets else None, structure="auto")
    runner = Runner(run, resources, args.work_dir, lambda name: make_system(name, resources, run.budget, run.max_steps))
    runner.run(args.questions, fresh=True)
    out.close()
    print(f"collected {len(seen)} questions (half={args.half}, budget {args.budget}) load={fitting.load()}")


def _labelled(record: dict, found: list, table: list[dict]) -> dict:
    golds = [g for g in record.get("answers", []) if isinstance(g, str)] if record.get("metric") != "choice" else []
    evidence = [metrics.tokens_of(e["text"] if isinstance(e, dict) else e) for e in record.get("evidence", [])]
    evidence = [e for e in evidence if e]
    bags = [set(e) for e in evidence]
    rows = []
    for sentence, values in zip(found, table):
        said = metrics.tokens_of(sentence.text)
        answer = metrics.answer_in_context(golds, sentence.text) if golds else None
        inside = max((metrics.window_coverage(said, e) for e, bag in zip(evidence, bags)
                      if sum(t in bag for t in said) >= COVERED * len(said)), default=0.0) if len(said) >= 6 else 0.0
        rows.append({"tokens": tokens.count(" ".join(sentence.text.split())) + SEPARATOR, "answer": answer,
                     "inside": round(inside, 3), "features": values})
    pool = " ".join(s.text for s in found)
    return {"id": record["id"], "dataset": record["dataset"],
            "answerable": bool(golds and metrics.answer_in_context(golds, pool)), "rows": rows}


class _Hand:
    def score(self, values: dict) -> float:
        return hand({"features": values})


def hand(row: dict) -> float:
    """The hand-weighted excerpt score, relative to the best focus score, from the features."""
    f, s = row["features"], DEFAULTS.search
    return (f["focus"] + s.excerpt_leaf_weight * f["leaf"] + s.excerpt_kind_weight * f["kind_fit"] + f["cast"]
            + f["hop"] + 2.0 * f["field"])


def load_questions(path: Path) -> list[dict]:
    questions = [json.loads(line) for line in open(path, encoding="utf-8")]
    for q in questions:
        for r in q["rows"]:
            r["positive"] = bool(r["answer"]) or r["inside"] >= COVERED
    return fitting.prepare(questions, NAMES, hand)


def fit(args) -> None:
    questions = load_questions(args.sentences)
    print(f"{len(questions)} questions, {sum(len(q['rows']) for q in questions)} sentences, "
          f"{sum(bool(q['y'].any()) for q in questions)} with a positive; load={fitting.load()}")
    table, figures = fitting.fit_ranker(questions, NAMES, BUDGETS)
    table["provenance"] = {"command": "python bench/excerpt_ranker.py fit " + " ".join(sys.argv[2:]),
                           "commit": fitting.commit(), "date": datetime.date.today().isoformat(),
                           "data_sha256": hashlib.sha256(args.sentences.read_bytes()).hexdigest()[:16],
                           "label": "the sentence holds a gold answer or lies inside a gold evidence passage",
                           **figures}
    args.out.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


def score(args) -> None:
    """The shipped (or given) weights on collected questions, against the hand-weighted score."""
    ranker = excerpt_ranker.load(args.weights or excerpt_ranker.WEIGHTS_FILE)
    questions = load_questions(args.sentences)
    learned = [np.array([ranker.score(r["features"]) for r in q["rows"]]) for q in questions]
    print(f"{len(questions)} questions, load={fitting.load()}")
    print(f"  hand-weighted: {fitting.show(fitting.figures(questions, [q['hand'] for q in questions], BUDGETS))}")
    print(f"  learned:       {fitting.show(fitting.figures(questions, learned, BUDGETS))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("questions", type=Path)
    c.add_argument("--half", default="tune")
    c.add_argument("--limit", type=int, default=150)
    c.add_argument("--budget", type=int, default=500)
    c.add_argument("--datasets", default="")
    c.add_argument("--work-dir", type=Path, required=True)
    f = sub.add_parser("fit")
    f.add_argument("sentences", type=Path)
    f.add_argument("--out", type=Path, default=excerpt_ranker.WEIGHTS_FILE)
    s = sub.add_parser("score")
    s.add_argument("sentences", type=Path)
    s.add_argument("--weights", type=Path)
    args = parser.parse_args()
    {"collect": collect, "fit": fit, "score": score}[args.command](args)


if __name__ == "__main__":
    main()
