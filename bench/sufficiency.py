"""Is the evidence enough? The search's stop rule (word coverage, halved while nothing of the asked
shape is picked) against a logistic model over the same step's signals, measured on labelled steps.

    # 1. every step of the search for each question of a half, with its signals and whether the
    #    picks so far hold a gold answer (no generation):
    LONGQA_THREADS=1 python bench/sufficiency.py collect ../shared/evaldata/dev.jsonl --half tune \
        --limit 150 --work-dir /tmp/steps-tune
    # 2. fit on the tune half (cross-validated by question) and score both halves:
    python bench/sufficiency.py fit /tmp/steps-tune/steps.jsonl /tmp/steps-report/steps.jsonl

A step is positive when the picks so far hold a gold answer (normalised, on word boundaries), for
questions whose gold answer can be found at all. The figure is the AUC of each signal at telling
positive steps from negative ones; the rule in use is `coverage × (1 or shape_missing)`. Printed with
the load average.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fitting  # noqa: E402
from longqa.ask.search import loop  # noqa: E402
from longqa.ask.search.relevance import answer_shape_present, top_share  # noqa: E402
from longqa.ask.settings import DEFAULTS  # noqa: E402
from longqa.eval import metrics  # noqa: E402
from longqa.tree_types import walk  # noqa: E402

# name -> why it may say the evidence is enough
SIGNALS = {
    "coverage": "IDF-weighted share of the question's words in the picks",
    "shape": "1 when the picks hold something of the asked shape (a figure, a date, a name)",
    "picks": "how many nodes are picked",
    "used": "share of the budget the picks fill",
    "best_priority": "the best pick's priority (its relevance as the search scored it)",
    "last_priority": "the last pick's priority: a search reaching for weak nodes has little left",
}


def collect(args) -> None:
    args.work_dir.mkdir(parents=True, exist_ok=True)
    records = fitting.records_by_question(args.questions)
    out = open(args.work_dir / "steps.jsonl", "w", encoding="utf-8")
    original = loop.Search.sufficiency
    priorities: dict[int, list[float]] = {}
    original_pop = loop.Search._pop

    def pop(self, turn):
        picked = original_pop(self, turn)
        if picked is not None:
            priorities.setdefault(id(self), []).append(picked[1])
        return picked

    def recording(self):
        result = original(self)
        record = records.get(" ".join(self.question.split()))
        golds = [g for g in record.get("answers", []) if isinstance(g, str)] if record and record.get("metric") != "choice" else []
        texts = [leaf.text for pick in self.picks for leaf in walk(pick) if leaf.is_leaf]
        found = metrics.answer_in_context(golds, "\n".join(texts)) if golds else None
        if found is not None:
            seen = priorities.get(id(self), [0.0]) or [0.0]
            out.write(json.dumps({"id": record["id"], "dataset": record["dataset"], "positive": bool(found), "signals": {
                "coverage": top_share(self.question, texts, self.term_weights),
                "shape": float(answer_shape_present(self.question, texts)),
                "picks": float(len(self.picks)), "used": self.used / max(1, self.budget),
                "best_priority": max(seen), "last_priority": seen[-1]}}) + "\n")
            out.flush()
        return result

    loop.Search._pop = pop
    loop.Search.sufficiency = recording
    fitting.run_half(args, "search.use_loop")
    out.close()
    print(f"collected (half={args.half}) load={fitting.load()}")


def load_steps(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """The probability that a positive step outscores a negative one (ties count half)."""
    pos, neg = scores[labels > 0], scores[labels == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def matrix(steps: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[s["signals"][n] for n in SIGNALS] for s in steps], dtype=np.float64)
    return x, np.array([s["positive"] for s in steps], dtype=np.float64)


def rule(steps: list[dict]) -> np.ndarray:
    missing = DEFAULTS.search.shape_missing
    return np.array([s["signals"]["coverage"] * (1.0 if s["signals"]["shape"] else missing) for s in steps])


def fit(args) -> None:
    tune, report = load_steps(args.tune), load_steps(args.report)
    x, y = matrix(tune)
    print(f"tune: {len(tune)} steps of {len({s['id'] for s in tune})} questions, {y.mean():.3f} positive; "
          f"report: {len(report)} steps; load={fitting.load()}")
    folds = np.array([fitting.fold_of(s["id"], fitting.FOLDS) for s in tune])
    best = None
    for lam in fitting.LAMBDAS:
        oof = np.zeros(len(tune))
        for fold in range(fitting.FOLDS):
            train = folds != fold
            mean, scale = fitting.standardise(x[train])
            w, b = fitting.fit_logistic((x[train] - mean) / scale, y[train], lam)
            oof[~train] = ((x[~train] - mean) / scale) @ w + b
        score = auc(oof, y)
        if best is None or score > best[0]:
            best = (score, lam)
    mean, scale = fitting.standardise(x)
    w, b = fitting.fit_logistic((x - mean) / scale, y, best[1])
    xr, yr = matrix(report)
    learned_report = ((xr - mean) / scale) @ w + b
    print(f"{'signal':16} {'AUC tune':>9} {'AUC report':>11}")
    for i, name in enumerate(SIGNALS):
        print(f"{name:16} {auc(x[:, i], y):9.3f} {auc(xr[:, i], yr):11.3f}")
    print(f"{'rule in use':16} {auc(rule(tune), y):9.3f} {auc(rule(report), yr):11.3f}")
    print(f"{'learned':16} {best[0]:9.3f} {auc(learned_report, yr):11.3f}   (tune: cross-validated; "
          f"regularisation {best[1]})")
    print("weights (standardised): " + ", ".join(f"{n} {v:+.2f}" for n, v in zip(SIGNALS, w)))


def main() -> None:
    parser, sub = fitting.collecting_parser(__doc__)
    f = sub.add_parser("fit")
    f.add_argument("tune", type=Path)
    f.add_argument("report", type=Path)
    args = parser.parse_args()
    {"collect": collect, "fit": fit}[args.command](args)


if __name__ == "__main__":
    main()
