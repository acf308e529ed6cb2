"""Fit, per reader profile, how sure a proven answer is (longqa/ask/answer/reader_confidence.py),
and check the fit on the other half.

    python bench/reader_confidence.py fit TUNE_RESULTS --profile NAME [--negatives TUNE_NEGATIVES] [--out PATH]
    python bench/reader_confidence.py check REPORT_RESULTS --profile NAME [--negatives REPORT_NEGATIVES]

TUNE_RESULTS / REPORT_RESULTS: an eval report with per-question records (`per_question`) or the
results file (.jsonl) a run of `longqa eval -m NAME` wrote, whose records carry the reader's
signals. Only answers the reader gave and the documents proved (answer_mode read, verdict or
selection) are used; right means token F1 >= 0.5. NEGATIVES: the same half asked without each
question's own documents (`longqa eval --without-own-docs`), whose proven answers are all wrong:
with them the confidence also learns what an answer to a question the documents do not answer
looks like, the decision bench/refusal.py sets a threshold on. `fit` chooses the L2 strength by cross-validation by question
(log loss, 5 folds), prints the out-of-fold reliability table and the uncalibrated one (the
reader's own probability) beside it, and writes the weights with their provenance. `check`
prints the reliability table of the shipped table on another half, and the share shown sure with
its F1 at the answer.reader_sure threshold. The figures do not depend on the machine's load; it
is printed for the record.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_ranker import RIGHT, reliability  # noqa: E402
from fitting import FOLDS, commit, fit_logistic, fold_of, load, standardise  # noqa: E402

from longqa.ask.answer import reader_confidence  # noqa: E402
from longqa.ask.settings import DEFAULTS  # noqa: E402
from longqa.linear import stage_from  # noqa: E402
from longqa.probabilities import sigmoid  # noqa: E402

NAMES = list(reader_confidence.SIGNALS)
LAMBDAS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
READ_MODES = ("read", "verdict", "selection")


def records(path: Path, negatives: Path | None = None) -> list[dict]:
    """The scored, proven reader answers of a report or a results file, and those of a negatives
    run, each given F1 0 (and an id of its own, so its fold is its question's)."""
    def proven(file: Path) -> list[dict]:
        text = file.read_text(encoding="utf-8")
        rows = json.loads(text)["per_question"] if file.suffix == ".json" else [json.loads(line) for line in text.splitlines() if line.strip()]
        return [r for r in rows if r.get("answer_mode") in READ_MODES and r.get("signals")]

    found = [r for r in proven(path) if r.get("f1") is not None]
    if negatives is not None:
        found += [{**r, "f1": 0.0} for r in proven(negatives)]
    return found


def arrays(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.array([[r["signals"].get(name, 0.0) for name in NAMES] for r in rows], dtype=np.float64)
    f1 = np.array([r["f1"] for r in rows], dtype=np.float64)
    return x, (f1 >= RIGHT).astype(np.float64), f1


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def out_of_fold(rows: list[dict], x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    folds = np.array([fold_of(r["id"], FOLDS) for r in rows])
    out = np.zeros(len(rows))
    for fold in range(FOLDS):
        train, test = folds != fold, folds == fold
        if not test.any() or len(set(y[train])) < 2:
            out[test] = y[train].mean() if train.any() else 0.5
            continue
        mean, scale = standardise(x[train])
        w, b = fit_logistic((x[train] - mean) / scale, y[train], lam)
        out[test] = 1 / (1 + np.exp(-(((x[test] - mean) / scale) @ w + b)))
    return out


def sure_line(p: np.ndarray, f1: np.ndarray, threshold: float) -> str:
    sure = p >= threshold
    sure_f1 = f1[sure].mean() if sure.any() else float("nan")
    return f"at {threshold:.2f}: sure {sure.mean():.2f} of proven answers, sure F1 {sure_f1:.3f}, unsure F1 " \
           f"{f1[~sure].mean() if (~sure).any() else float('nan'):.3f}"


def fit(args) -> int:
    rows = records(args.results, args.negatives)
    if len(rows) < 2 * FOLDS:
        print(f"{args.results}: {len(rows)} proven reader answers with signals; too few to fit")
        return 1
    x, y, f1 = arrays(rows)
    print(f"{args.results.name}: {len(rows)} proven reader answers, {int(y.sum())} right; load {load()}")
    losses = {lam: log_loss(out_of_fold(rows, x, y, lam), y) for lam in LAMBDAS}
    lam = min(losses, key=losses.get)
    print("  cross-validated log loss by L2 strength: " + ", ".join(f"{k:g}: {v:.3f}" for k, v in losses.items()))
    print(f"  base rate log loss: {log_loss(np.full(len(y), y.mean()), y):.3f}")
    threshold = DEFAULTS.answer.reader_sure
    print("own probability (uncalibrated):")
    own = np.exp(x[:, NAMES.index("own_logprob")])
    reliability(own, f1)
    print("  " + sure_line(own, f1, threshold))
    print(f"fitted, out of fold (lambda {lam:g}):")
    oof = out_of_fold(rows, x, y, lam)
    ece = reliability(oof, f1)
    print("  " + sure_line(oof, f1, threshold))
    mean, scale = standardise(x)
    w, b = fit_logistic((x - mean) / scale, y, lam)
    table = {"weights": dict(zip(NAMES, map(float, w))), "means": dict(zip(NAMES, map(float, mean))),
             "scales": dict(zip(NAMES, map(float, scale))), "bias": b,
             "provenance": {"command": "python bench/reader_confidence.py " + " ".join(sys.argv[1:]),
                            "commit": commit(), "date": datetime.date.today().isoformat(),
                            "data_sha256": hashlib.sha256(args.results.read_bytes()).hexdigest()[:16],
                            "negatives": args.negatives.name if args.negatives else None,
                            "profile": args.profile, "answers": len(rows), "lambda": lam,
                            "label": f"token F1 >= {RIGHT}", "out_of_fold_ece": round(ece, 4),
                            "out_of_fold_log_loss": round(losses[lam], 4)}}
    for name in sorted(NAMES, key=lambda n: -abs(table["weights"][n])):
        print(f"  {name:20s} {table['weights'][name]:+.3f}  ({reader_confidence.SIGNALS[name]})")
    out = args.out or reader_confidence.TABLES / f"{args.profile}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


def check(args) -> int:
    rows = records(args.results, args.negatives)
    path = args.table or reader_confidence.TABLES / f"{args.profile}.json"
    stage = stage_from(json.loads(path.read_text(encoding="utf-8")))
    x, _, f1 = arrays(rows)
    fitted = np.array([sigmoid(stage.score(dict(zip(NAMES, row)))) for row in x])
    own = np.exp(x[:, NAMES.index("own_logprob")])
    print(f"{args.results.name}: {len(rows)} proven reader answers; table {path}; load {load()}")
    threshold = DEFAULTS.answer.reader_sure
    print("own probability (uncalibrated):")
    reliability(own, f1)
    print("  " + sure_line(own, f1, threshold))
    print("fitted table:")
    reliability(fitted, f1)
    print("  " + sure_line(fitted, f1, threshold))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit")
    f.add_argument("results", type=Path)
    f.add_argument("--profile", required=True)
    f.add_argument("--out", type=Path)
    f.add_argument("--negatives", type=Path)
    c = sub.add_parser("check")
    c.add_argument("results", type=Path)
    c.add_argument("--profile", required=True)
    c.add_argument("--table", type=Path)
    c.add_argument("--negatives", type=Path)
    args = parser.parse_args()
    return fit(args) if args.command == "fit" else check(args)


if __name__ == "__main__":
    sys.exit(main())
