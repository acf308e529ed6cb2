"""Fitting helpers shared by the bench scripts that learn the shipped linear models (answer_ranker.py,
leaf_ranker.py): L2-regularised logistic and listwise (softmax per question) fits by Newton's method,
folds by question, and the provenance every weights file records."""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np


def fold_of(question_id: str, folds: int) -> int:
    """A stable cross-validation fold per question (by a hash of its id)."""
    return int(hashlib.sha1(question_id.encode()).hexdigest(), 16) % folds


def fit_logistic(x: np.ndarray, y: np.ndarray, lam: float) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression (bias unpenalised) by Newton's method."""
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, lam)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -30, 30)))
        grad = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w[:-1], float(w[-1])


def fit_listwise(groups: list[tuple[np.ndarray, np.ndarray]], lam: float) -> np.ndarray:
    """L2-regularised conditional logit (a softmax over each question's candidates) by Newton's
    method: the likelihood that each question's pick is one of its right candidates. Questions with
    no right candidate teach nothing about which to pick and are left out. No bias: a softmax is
    blind to one."""
    groups = [(x, y / y.sum()) for x, y in groups if len(y) > 1 and y.sum() > 0]
    if not groups:
        return np.zeros(0)
    x = np.vstack([g[0] for g in groups])
    q = np.concatenate([g[1] for g in groups])
    starts = np.cumsum([0] + [len(g[1]) for g in groups[:-1]])
    member = np.repeat(np.arange(len(groups)), [len(g[1]) for g in groups])
    d = x.shape[1]
    w = np.zeros(d)
    for _ in range(50):
        z = x @ w
        z = z - np.maximum.reduceat(z, starts)[member]
        e = np.exp(z)
        p = e / np.add.reduceat(e, starts)[member]
        per_group = np.add.reduceat(x * p[:, None], starts)  # each question's expected feature vector
        grad = x.T @ (p - q) + lam * w
        hess = (x * p[:, None]).T @ x - per_group.T @ per_group + np.diag(np.full(d, lam + 1e-9))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, scale = x.mean(axis=0), x.std(axis=0)
    return mean, np.where(scale > 1e-9, scale, 1.0)


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- a listwise ranker of a question's items (leaves, sentences), judged by what a budget reaches --
FOLDS = 5
LAMBDAS = (0.1, 1.0, 10.0, 100.0, 1000.0)


def prepare(questions: list[dict], names: list[str], hand) -> list[dict]:
    """Each question's items as arrays: `x` (features in `names` order), `y` (positive), `answer`
    (holds a gold answer), `tokens` (what taking it costs), `hand` (the hand-weighted score)."""
    for q in questions:
        rows = q["rows"]
        q["x"] = np.array([[r["features"].get(n, 0.0) for n in names] for r in rows], dtype=np.float64)
        q["y"] = np.array([r["positive"] for r in rows], dtype=np.float64)
        q["answer"] = np.array([bool(r["answer"]) for r in rows], dtype=np.float64)
        q["tokens"] = np.array([r["tokens"] for r in rows], dtype=np.float64)
        q["hand"] = np.array([hand(r) for r in rows])
    return [q for q in questions if len(q["rows"])]


def reached(q: dict, scores: np.ndarray, budget: int, which: str = "y") -> float:
    """1 when a positive (`which`) is among the items taken best first while they fit in `budget`."""
    used = 0.0
    for i in np.argsort(-scores, kind="stable"):
        if used + q["tokens"][i] > budget:
            continue
        used += q["tokens"][i]
        if q[which][i] > 0:
            return 1.0
    return 0.0


def figures(questions: list[dict], scores: list[np.ndarray], budgets) -> dict[str, float]:
    """Per budget: the share of questions with a positive reached, and of answerable ones with a
    gold answer reached."""
    out = {}
    for budget in budgets:
        labelled = [(q, s) for q, s in zip(questions, scores) if q["y"].any()]
        out[f"positive@{budget}"] = float(np.mean([reached(q, s, budget) for q, s in labelled])) if labelled else 0.0
        answered = [(q, s) for q, s in zip(questions, scores) if q["answerable"]]
        out[f"answer@{budget}"] = float(np.mean([reached(q, s, budget, "answer") for q, s in answered])) if answered else 0.0
    return out


def fit_weights(train: list[dict], cols: list[int], lam: float):
    """(mean, scale, weights) of a softmax over each question's items, on the columns `cols`."""
    x = np.vstack([q["x"][:, cols] for q in train])
    mean, scale = standardise(x)
    w = fit_listwise([((q["x"][:, cols] - mean) / scale, q["y"]) for q in train], lam)
    return mean, scale, w


def out_of_fold(questions: list[dict], cols: list[int], lam: float) -> list[np.ndarray]:
    folds = [fold_of(q["id"], FOLDS) for q in questions]
    out = [np.zeros(len(q["rows"])) for q in questions]
    for fold in range(FOLDS):
        mean, scale, w = fit_weights([q for q, f in zip(questions, folds) if f != fold], cols, lam)
        for i, q in enumerate(questions):
            if folds[i] == fold:
                out[i] = ((q["x"][:, cols] - mean) / scale) @ w
    return out


def show(fig: dict[str, float]) -> str:
    return "  ".join(f"{k} {v:.3f}" for k, v in fig.items())


def fit_ranker(questions: list[dict], names: list[str], budgets) -> tuple[dict, dict]:
    """The regularisation and the features that cross-validate best (the mean of the reach figures;
    a feature whose removal alone does not lower it goes, unless removing those together does), the
    weights fitted on every question, and the figures: (weights table, provenance figures)."""
    def objective(fig):
        return float(np.mean(list(fig.values())))

    def cv(kept, lam):
        return figures(questions, out_of_fold(questions, [names.index(n) for n in kept], lam), budgets)

    base = figures(questions, [q["hand"] for q in questions], budgets)
    print(f"hand-weighted score: {show(base)}")
    lam = max(LAMBDAS, key=lambda v: objective(cv(names, v)))
    full = cv(names, lam)
    print(f"learned, all features, regularisation {lam}: {show(full)}", flush=True)
    useless = []
    for name in names:
        without = cv([n for n in names if n != name], lam)
        delta = objective(without) - objective(full)
        print(f"  without {name:18} {show(without)}  ({delta:+.4f})", flush=True)
        if delta >= 0:
            useless.append(name)
    kept = [n for n in names if n not in useless]
    final = cv(kept, lam) if kept else full
    if not kept or objective(final) < objective(full):
        kept, final = list(names), full
    print(f"kept {len(kept)} of {len(names)}: {show(final)}")
    mean, scale, w = fit_weights(questions, [names.index(n) for n in kept], lam)
    table = {"weights": dict(zip(kept, map(float, w))), "means": dict(zip(kept, map(float, mean))),
             "scales": dict(zip(kept, map(float, scale))), "bias": 0.0}
    return table, {"questions": len(questions), "regularisation": lam,
                   "cross_validated": {"folds": FOLDS, **{k: round(v, 4) for k, v in final.items()}},
                   "hand_weighted": {k: round(v, 4) for k, v in base.items()},
                   "dropped": sorted(set(names) - set(kept))}


# -- what the collecting scripts share ---------------------------------------------------------
def records_by_question(path: Path) -> dict[str, dict]:
    """The question records of a questions file, keyed by their whitespace-normalised text (how a
    pipeline hook recognises the question it is asked)."""
    records = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            records[" ".join(record["question"].split())] = record
    return records


class Recorder:
    """Writes one labelled row per question, the first time a pipeline hook meets the question's
    own text (a bridge hop's or sub-question's query is not the question and is not recorded)."""

    def __init__(self, questions: Path, out: Path):
        self.records = records_by_question(questions)
        self.out = open(out, "w", encoding="utf-8")
        self.seen: set[str] = set()

    def offer(self, question: str, row) -> None:
        """`row(record)` is written when `question` is a question of the file not seen yet."""
        record = self.records.get(" ".join(question.split()))
        if record is not None and record["id"] not in self.seen:
            self.seen.add(record["id"])
            self.out.write(json.dumps(row(record)) + "\n")
            self.out.flush()

    def close(self) -> int:
        self.out.close()
        return len(self.seen)


def run_half(args, switch: str, budget: int = 2000) -> None:
    """The eval harness over a half's questions, `longqa` only, no generation, with the setting
    `switch` (the learned part whose hook records) on: the hooks the caller installed record what
    they need on the way."""
    from longqa.ask.settings import DEFAULTS
    from longqa.eval.runner import EvalSettings, Runner
    from longqa.eval.systems import Resources, make_system
    from longqa.models.resolve import load_embedder

    resources = Resources.of(None, load_embedder(None, None))
    run = EvalSettings(systems=["longqa"], generate=False, half=args.half, limit=args.limit, budget=budget,
                       datasets=args.datasets.split(",") if args.datasets else None, structure="auto")
    settings = DEFAULTS.with_values({switch: True})
    runner = Runner(run, resources, args.work_dir,
                    lambda name: make_system(name, resources, run.budget, run.max_steps, settings=settings))
    runner.run(args.questions, fresh=True)


def fit_and_write(questions: list[dict], data: Path, out: Path, script: str, label: str, names: list[str],
                  budgets) -> None:
    """Fit a listwise ranker on `questions` (collected from `data`, `prepare`d) and write its
    weights with their provenance to `out`."""
    print(f"{len(questions)} questions, {sum(len(q['rows']) for q in questions)} items, "
          f"{sum(bool(q['y'].any()) for q in questions)} with a positive; load={load()}")
    table, figures_ = fit_ranker(questions, names, budgets)
    table["provenance"] = {"command": f"python bench/{script} fit " + " ".join(sys.argv[2:]),
                           "commit": commit(), "date": datetime.date.today().isoformat(),
                           "data_sha256": hashlib.sha256(data.read_bytes()).hexdigest()[:16], "label": label,
                           **figures_}
    out.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")


def score_against_hand(questions: list[dict], score, budgets) -> None:
    """The learned score (`score(features)`) against the hand-weighted one on collected questions."""
    learned = [np.array([score(r["features"]) for r in q["rows"]]) for q in questions]
    print(f"{len(questions)} questions, load={load()}")
    print(f"  hand-weighted: {show(figures(questions, [q['hand'] for q in questions], budgets))}")
    print(f"  learned:       {show(figures(questions, learned, budgets))}")


def collecting_parser(doc: str):
    """A parser whose `collect` command takes the questions, a half, a limit, datasets and a work
    directory, as every collecting bench script does; (parser, its subparsers)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("questions", type=Path)
    c.add_argument("--half", default="tune")
    c.add_argument("--limit", type=int, default=150)
    c.add_argument("--datasets", default="")
    c.add_argument("--work-dir", type=Path, required=True)
    return parser, sub


def command_line(doc: str, data: str, weights: Path, commands: dict, budget: int | None = None):
    """The scripts' three commands (collect, fit, score) and their arguments."""
    parser, sub = collecting_parser(doc)
    if budget is not None:
        sub.choices["collect"].add_argument("--budget", type=int, default=budget)
    f = sub.add_parser("fit")
    f.add_argument(data, type=Path)
    f.add_argument("--out", type=Path, default=weights)
    s = sub.add_parser("score")
    s.add_argument(data, type=Path)
    s.add_argument("--weights", type=Path)
    args = parser.parse_args()
    commands[args.command](args)
