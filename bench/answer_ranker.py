"""Learn the answer ranker's weights (longqa/ask/answer/ranker.json) from labelled questions.

    # 1. every candidate of every short-answer question of a half, with its features, the model
    #    scoring all of them (memoised model calls under the work dir):
    LONGQA_THREADS=1 python bench/answer_ranker.py collect ../shared/evaldata/dev.jsonl --half tune \
        --limit 150 --work-dir /tmp/ranker-tune
    # 2. fit both stages on the tune half, cross-validated by question; writes the weights file:
    python bench/answer_ranker.py fit /tmp/ranker-tune/candidates.jsonl --out longqa/ask/answer/ranker.json
    # 3. the shipped weights on the other half (the same choice the pipeline makes):
    python bench/answer_ranker.py score /tmp/ranker-report/candidates.jsonl
    # 4. a change to the shipped feature lists or the shortlist, cross-validated on the tune half
    #    (the figure that decides) and fitted there and scored on the report half (the proof):
    python bench/answer_ranker.py compare /tmp/ranker-tune/candidates.jsonl /tmp/ranker-report/candidates.jsonl \
        --add FEATURE --shortlist 16

A candidate is right when its token F1 with a gold answer is at least 0.5. Each stage is an
L2-regularised logistic regression over standardised features (numpy, Newton's method); the
regularisation strength is chosen by cross-validation, and features are removed backwards while
removing one does not lower the cross-validated F1 of the top answer. The final stage's out-of-fold
scores are recalibrated (Platt scaling) into the confidence; a reliability table and the expected
calibration error are printed. Every figure is printed with the load average.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from longqa.ask.answer import choose  # noqa: E402
from longqa.ask.answer.features import FEATURES, MODEL_FEATURES, TYPED  # noqa: E402
from longqa.linear import confidence_inputs  # noqa: E402
from longqa.ask.settings import DEFAULTS  # noqa: E402
from longqa.eval.metrics import token_f1  # noqa: E402
from fitting import collecting_parser, commit, fit_listwise, fit_logistic, fold_of, load, standardise  # noqa: E402

RIGHT = 0.5  # token F1 from which a candidate counts as right
SHORTLIST = DEFAULTS.answer.max_candidates  # the shortlist the pipeline keeps
FOLDS = 5
REPEATS = 3  # splits into folds whose figures are averaged
LAMBDAS = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0)
# (prior, final) objectives tried: the prior keeps a shortlist (pointwise keeps more right
# candidates on it), the final stage picks one from it
OBJECTIVES = (("pointwise", "pointwise"), ("pointwise", "listwise"))
SURE_SHARE = 0.4  # the share of answers given without an "unsure" note (the rest show alternatives)


# -- collect ------------------------------------------------------------------------------------
class MemoGenerator:
    """A generator whose answers are remembered on disk, call by call (re-runs cost no model time)."""

    def __init__(self, inner, path: Path):
        self.inner = inner
        self.name, self.n_ctx = inner.name, inner.n_ctx
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS memo (key TEXT PRIMARY KEY, value TEXT)")

    def _call(self, method: str, args: tuple, kwargs: dict, compute):
        key = hashlib.sha1(json.dumps([self.name, method, args, sorted(kwargs.items())], default=str)
                           .encode()).hexdigest()
        row = self.db.execute("SELECT value FROM memo WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return json.loads(row[0])
        value = compute()
        self.db.execute("INSERT OR REPLACE INTO memo VALUES (?, ?)", (key, json.dumps(value)))
        self.db.commit()
        return value

    def complete(self, prompt: str, **kwargs) -> str:
        return self._call("complete", (prompt,), kwargs, lambda: self.inner.complete(prompt, **kwargs))

    def stream(self, prompt: str, **kwargs):
        yield from self._call("stream", (prompt,), kwargs, lambda: list(self.inner.stream(prompt, **kwargs)))

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        return self._call("label_probs", (prompt, labels), {}, lambda: self.inner.label_probs(prompt, labels))

    def option_logprobs(self, prompt: str, options: list[str], **kwargs) -> list[float]:
        return self._call("option_logprobs", (prompt, options), kwargs,
                          lambda: self.inner.option_logprobs(prompt, options, **kwargs))

    def __getattr__(self, name):
        return getattr(self.inner, name)


def collect(args) -> None:
    from longqa.eval.runner import EvalSettings, Runner
    from longqa.eval.systems import Resources, make_system
    from longqa.models.resolve import load_embedder, load_generator

    args.work_dir.mkdir(parents=True, exist_ok=True)
    questions = {}
    for line in open(args.questions, encoding="utf-8"):
        record = json.loads(line)
        questions[" ".join(record["question"].split())] = record
    out = open(args.work_dir / "candidates.jsonl", "w", encoding="utf-8")
    original = choose.choose_short

    def recording(generator, asked, *rest, **kwargs):
        text, grounding = original(generator, asked, *rest, **kwargs)
        record = questions.get(asked.question)
        if record is not None and grounding.pool and record["metric"] == "f1":
            out.write(json.dumps({"id": record["id"], "dataset": record["dataset"], "want": asked.want,
                                  "golds": record["answers"], "candidates": [
                                      {"text": c.text, "kind": c.kind, "structure": c.structure, "source": c.source,
                                       "features": c.features} for c in grounding.pool]}) + "\n")
            out.flush()
        return text, grounding

    choose.choose_short = recording
    # Every candidate is scored by the model, so that any shortlist can be replayed when fitting.
    settings = DEFAULTS.with_values({"answer.max_candidates": 1000})
    generator = MemoGenerator(load_generator(None, None), args.work_dir / "memo.sqlite")
    resources = Resources.of(generator, load_embedder(None, None))
    run = EvalSettings(systems=["longqa"], generate=True, half=args.half, limit=args.limit,
                       datasets=args.datasets.split(",") if args.datasets else None, structure="auto")
    runner = Runner(run, resources, args.work_dir,
                    lambda name: make_system(name, resources, run.budget, run.max_steps, settings=settings))
    runner.run(args.questions, fresh=True)
    out.close()
    print(f"collected {sum(1 for _ in open(args.work_dir / 'candidates.jsonl'))} questions "
          f"(half={args.half}) load={load()}")


# -- data ---------------------------------------------------------------------------------------
ALL = list(FEATURES)
COLUMN = {name: i for i, name in enumerate(ALL)}


def load_questions(path: Path) -> list[dict]:
    """The collected questions, each candidate labelled with its best token F1 and its features as
    one vector (in FEATURES order)."""
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    for row in rows:
        for c in row["candidates"]:
            # a feature added after the candidates were collected, computed from what they hold
            if "draft_agrees_typed" not in c["features"]:
                typed = row["want"] in TYPED
                c["features"]["draft_agrees_typed"] = c["features"].get("draft_agrees", 0.0) if typed else 0.0
            c["f1"] = 0.0 if c["kind"] == "none" else token_f1(c["text"], row["golds"])
            c["x"] = np.array([c["features"].get(n, 0.0) for n in ALL], dtype=np.float64)
    return rows


def matrix(cands: list[dict], names: list[str]) -> np.ndarray:
    if not cands:
        return np.zeros((0, len(names)))
    return np.stack([c["x"] for c in cands])[:, [COLUMN[n] for n in names]]


def with_model_features(shortlist: list[dict]) -> None:
    """model_share and model_best recomputed within a shortlist (as the pipeline computes them)."""
    raw = [(c["features"].get("model_logprob", 0.0) - 1.0) * 12.0 for c in shortlist]
    if not raw:
        return
    peak = max(raw)
    total = sum(math.exp(r - peak) for r in raw)
    for c, r in zip(shortlist, raw):
        c["features"] = {**c["features"], "model_share": math.exp(r - peak) / total, "model_best": float(r == peak)}
        c["x"] = c["x"].copy()
        c["x"][COLUMN["model_share"]], c["x"][COLUMN["model_best"]] = c["features"]["model_share"], c["features"]["model_best"]


# -- the model ----------------------------------------------------------------------------------
def fit_model(objective: str, lists: list[list[dict]], names: list[str], lam: float):
    """(mean, scale, weights, bias) of one stage fitted on `lists` (one candidate list a question):
    `pointwise`, a logistic model of each candidate being right; `listwise`, a softmax over each
    question's list."""
    flat = [c for cands in lists for c in cands]
    x = matrix(flat, names)
    mean, scale = standardise(x)
    if objective == "pointwise":
        w, b = fit_logistic((x - mean) / scale, np.array([c["f1"] >= RIGHT for c in flat], float), lam)
        return mean, scale, w, b
    groups = [((matrix(cands, names) - mean) / scale, np.array([c["f1"] >= RIGHT for c in cands], float))
              for cands in lists if cands]
    return mean, scale, fit_listwise(groups, lam), 0.0


def folds_of(rows: list[dict], repeat: int = 0) -> list[int]:
    """Each question's fold in one of REPEATS different splits (the first by its id alone)."""
    return [fold_of(f"{repeat}:{r['id']}" if repeat else r["id"], FOLDS) for r in rows]


def stage_scores(rows, lists, names, lam, objective: str, repeat: int = 0) -> list[np.ndarray]:
    """Out-of-fold scores of each question's candidate list (`lists[i]` for `rows[i]`)."""
    folds = folds_of(rows, repeat)
    out: list[np.ndarray | None] = [None] * len(rows)
    for fold in range(FOLDS):
        train = [cands for i, cands in enumerate(lists) if folds[i] != fold]
        if not any(train):
            continue
        mean, scale, w, b = fit_model(objective, train, names, lam)
        for i, cands in enumerate(lists):
            if folds[i] == fold and cands:
                out[i] = ((matrix(cands, names) - mean) / scale) @ w + b
    return [s if s is not None else np.zeros(len(c)) for s, c in zip(out, lists)]


def shortlists(rows, prior_scores) -> list[list[dict]]:
    """Each question's shortlist: the best SHORTLIST candidates by the prior stage, plus the
    no-answer candidate, with the model's features recomputed within it."""
    out = []
    for row, scores in zip(rows, prior_scores):
        spans = [(s, c) for s, c in zip(scores, row["candidates"]) if c["kind"] != "none"]
        spans.sort(key=lambda t: -t[0])
        chosen = [dict(c) for _, c in spans[:SHORTLIST]] + [dict(c) for c in row["candidates"] if c["kind"] == "none"]
        with_model_features(chosen)
        out.append(chosen)
    return out


def top_f1(lists, scores) -> float:
    picked = [cands[int(np.argmax(s))]["f1"] if len(cands) else 0.0 for cands, s in zip(lists, scores)]
    return float(np.mean(picked)) if picked else 0.0


def prior_names(names: list[str]) -> list[str]:
    return [n for n in names if n not in MODEL_FEATURES]


_PRIOR_CACHE: dict = {}


def prior_shortlists(rows, prior, lam_prior, objective: str, repeat: int = 0):
    """Out-of-fold prior scores of every candidate and the shortlists they keep (computed once per
    feature list, strength, objective and split)."""
    key = (id(rows), tuple(prior), lam_prior, objective, repeat)
    if key not in _PRIOR_CACHE:
        ps = stage_scores(rows, [r["candidates"] for r in rows], prior, lam_prior, objective, repeat)
        _PRIOR_CACHE[key] = (ps, shortlists(rows, ps))
    return _PRIOR_CACHE[key]


def evaluate(rows, prior, final, lam_prior, lam_final, objective: str) -> dict:
    """Cross-validated figures of the two stages with these feature lists, each the mean over
    REPEATS splits into folds (one split of a few hundred questions moves the top answer's F1 by
    a few hundredths); `short` and `final_scores` are the first split's."""
    pool = [r["candidates"] for r in rows]
    figures: dict[str, list[float]] = defaultdict(list)
    for repeat in range(REPEATS):
        ps, short = prior_shortlists(rows, prior, lam_prior, objective[0], repeat)
        fs = stage_scores(rows, short, final, lam_final, objective[1], repeat)
        figures["prior_top_f1"].append(top_f1(pool, ps))
        figures["final_top_f1"].append(top_f1(short, fs))
        figures["best_of_shortlist"].append(float(np.mean([max((c["f1"] for c in s), default=0.0) for s in short])))
        if repeat == 0:
            first = {"short": short, "final_scores": fs}
    best = [max((c["f1"] for c in r["candidates"]), default=0.0) for r in rows]
    return {**{k: float(np.mean(v)) for k, v in figures.items()}, "best_of_pool": float(np.mean(best)), **first}


def eliminate(rows, names, fixed, lam_prior, lam_final, stage: str, objective: str) -> list[str]:
    """Backward elimination of one stage's features, judged by the cross-validated F1 of the answer
    the two stages pick: each feature is tried alone first; then, from the one whose removal
    leaves that figure highest, each whose removal alone did not lower it is removed for good
    while removing it (with those already gone) does not lower it either. What survives earns its
    weight; what it drops is deleted with its code."""

    def score(features):
        prior, final = (features, fixed) if stage == "prior" else (fixed, features)
        return evaluate(rows, prior, final, lam_prior, lam_final, objective)["final_top_f1"]

    kept = list(names)
    base = score(kept)
    alone = sorted(((score([f for f in kept if f != name]), name) for name in kept), reverse=True)
    for without, name in alone:
        print(f"  {stage}: without {name:24} top F1 {without:.4f} ({without - base:+.4f})", flush=True)
    for without, name in alone:
        if without < base - 1e-9 or len(kept) == 1:
            break
        trial = score([f for f in kept if f != name])
        if trial >= base - 1e-9:
            kept.remove(name)
            print(f"  {stage}: dropped {name:24} top F1 {trial:.4f}; {len(kept)} left", flush=True)
            base = trial
    return kept


def fit_stage(lists, names, lam, objective: str) -> dict:
    mean, scale, w, b = fit_model(objective, lists, names, lam)
    return {"weights": dict(zip(names, map(float, w))), "means": dict(zip(names, map(float, mean))),
            "scales": dict(zip(names, map(float, scale))), "bias": b}


def platt(inputs: np.ndarray, right: np.ndarray) -> dict[str, float]:
    """Platt scaling of the top candidate's calibrated input."""
    w, b = fit_logistic(inputs, right.astype(float), 1e-3)
    return {"final": float(w[0]), "bias": b}


def reliability(probabilities: np.ndarray, f1s: np.ndarray, bins: int = 5) -> float:
    """Prints the reliability table; returns the expected calibration error."""
    right = f1s >= RIGHT
    edges = np.linspace(0, 1, bins + 1)
    ece = 0.0
    print("  confidence      n  predicted  right   mean F1")
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (probabilities >= lo) & ((probabilities < hi) if hi < 1 else (probabilities <= hi))
        if inside.any():
            predicted, observed = probabilities[inside].mean(), right[inside].mean()
            ece += inside.mean() * abs(predicted - observed)
            print(f"  {lo:.1f}-{hi:.1f}  {inside.sum():7d}  {predicted:9.3f}  {observed:5.3f}  {f1s[inside].mean():8.3f}")
    print(f"  expected calibration error {ece:.3f}")
    return float(ece)


def choose_objective(rows, names) -> tuple[tuple[str, str], float, float]:
    """The objective and the two regularisation strengths that cross-validate best (all features)."""
    best = None
    for objective in OBJECTIVES:
        # each strength by the F1 of the picked answer (the prior's with the final's at 30 first)
        lam_prior = max(LAMBDAS, key=lambda lam: evaluate(rows, prior_names(names), names, lam, 30.0,
                                                          objective)["final_top_f1"])
        lam_final = max(LAMBDAS, key=lambda lam: evaluate(rows, prior_names(names), names, lam_prior, lam,
                                                          objective)["final_top_f1"])
        full = evaluate(rows, prior_names(names), names, lam_prior, lam_final, objective)
        print(f"{'+'.join(objective):19}: regularisation prior {lam_prior}, final {lam_final}; all features: prior top F1 "
              f"{full['prior_top_f1']:.4f}  final top F1 {full['final_top_f1']:.4f}  best of pool "
              f"{full['best_of_pool']:.4f}  best of shortlist {full['best_of_shortlist']:.4f}", flush=True)
        if best is None or full["final_top_f1"] > best[0]:
            best = (full["final_top_f1"], objective, lam_prior, lam_final)
    return best[1], best[2], best[3]


def fit(args) -> None:
    rows = load_questions(args.candidates)
    names = list(FEATURES)
    print(f"{len(rows)} questions, {sum(len(r['candidates']) for r in rows)} candidates, load={load()}")
    objective, lam_prior, lam_final = choose_objective(rows, names)
    calibrated_on = "score" if objective[1] == "pointwise" else "share"
    print(f"objectives: prior {objective[0]}, final {objective[1]}")
    prior = eliminate(rows, prior_names(names), names, lam_prior, lam_final, "prior", objective)
    final = eliminate(rows, names, prior, lam_prior, lam_final, "final", objective)
    result = evaluate(rows, prior, final, lam_prior, lam_final, objective)
    print(f"kept: prior {len(prior)}, final {len(final)}; prior top F1 {result['prior_top_f1']:.4f}  "
          f"final top F1 {result['final_top_f1']:.4f}  best of shortlist {result['best_of_shortlist']:.4f}")
    # confidence: Platt scaling of the out-of-fold final scores of each question's top candidate
    # (of its calibrated input alone, so that the confidences of a shortlist rank as its scores do)
    tops = [(max(confidence_inputs(list(s), calibrated_on)), cands[int(np.argmax(s))]["f1"])
            for cands, s in zip(result["short"], result["final_scores"]) if len(cands)]
    inputs, top_f1s = np.array([t[:1] for t in tops]), np.array([t[1] for t in tops])
    calibration = platt(inputs, top_f1s >= RIGHT)
    probabilities = 1 / (1 + np.exp(-(inputs[:, 0] * calibration["final"] + calibration["bias"])))
    ece = reliability(probabilities, top_f1s)
    # The confidence from which an answer is shown without doubt: the share of questions answered
    # "sure" is fixed (SURE_SHARE), the threshold is where the out-of-fold confidences put it.
    threshold = args.threshold if args.threshold is not None else float(np.quantile(probabilities, 1 - SURE_SHARE))
    args.threshold = round(threshold, 4)
    sure = probabilities >= args.threshold
    print(f"answers with confidence >= {args.threshold}: {sure.mean():.3f} of questions, mean F1 "
          f"{top_f1s[sure].mean() if sure.any() else 0:.3f} (others {top_f1s[~sure].mean() if (~sure).any() else 0:.3f})")
    pool = [r["candidates"] for r in rows]
    _, short = prior_shortlists(rows, prior, lam_prior, objective[0])  # the final fit's, from out-of-fold priors
    weights = {"prior": fit_stage(pool, prior, lam_prior, objective[0]),
               "final": fit_stage(short, final, lam_final, objective[1]),
               "calibration": calibration, "calibrated_on": calibrated_on, "threshold": args.threshold,
               "provenance": {
                   "command": "python bench/answer_ranker.py fit " + " ".join(sys.argv[2:]),
                   "commit": commit(), "date": datetime.date.today().isoformat(),
                   "data_sha256": hashlib.sha256(args.candidates.read_bytes()).hexdigest()[:16],
                   "questions": len(rows), "label": f"token F1 with a gold answer >= {RIGHT}",
                   "objectives": {"prior": objective[0], "final": objective[1]}, "regularisation": {"prior": lam_prior, "final": lam_final},
                   "cross_validated": {"folds": FOLDS, "prior_top_f1": round(result["prior_top_f1"], 4),
                                       "final_top_f1": round(result["final_top_f1"], 4),
                                       "best_of_shortlist": round(result["best_of_shortlist"], 4),
                                       "expected_calibration_error": round(ece, 4),
                                       "share_sure": round(float(sure.mean()), 4)},
                   "dropped": sorted(set(names) - set(prior) - set(final))}}
    args.out.write_text(json.dumps(weights, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


def score(args) -> None:
    """The shipped (or given) weights on collected questions: the pipeline's own choice."""
    from longqa.ask.answer.ranker import from_dict

    table = json.loads((args.weights or Path(choose.ranking.WEIGHTS_FILE)).read_text())
    ranker = from_dict(table)
    rows = load_questions(args.candidates)
    by = defaultdict(list)
    confidences, f1s = [], []
    for row in rows:
        pool = row["candidates"]
        prior = [ranker.prior.score(c["features"]) for c in pool]
        short = shortlists([row], [np.array(prior)])[0]
        final = [ranker.final.score(c["features"]) for c in short]
        best = int(np.argmax(final))
        top = short[best]
        confidences.append(ranker.confidence(confidence_inputs(final, ranker.calibrated_on)[best]))
        f1s.append(top["f1"])
        by[row["dataset"]].append(top["f1"])
        by["all"].append(top["f1"])
        ranked = sorted(zip(final, short), key=lambda t: -t[0])
        by["gold among top 3"].append(float(any(c["f1"] >= RIGHT for _, c in ranked[:3])))
    print(f"{len(rows)} questions, load={load()}")
    for name, values in sorted(by.items()):
        print(f"  {name:18} n={len(values):3}  {np.mean(values):.3f}")
    reliability(np.array(confidences), np.array(f1s))


def picked_f1(rows, prior: dict, final: dict) -> float:
    """Mean F1 of the answer two fitted stages pick on `rows` (the pipeline's own choice)."""
    from longqa.linear import stage_from

    p, f = stage_from(prior), stage_from(final)
    picked = []
    for row in rows:
        short = shortlists([row], [np.array([p.score(c["features"]) for c in row["candidates"]])])[0]
        picked.append(short[int(np.argmax([f.score(c["features"]) for c in short]))]["f1"] if short else 0.0)
    return float(np.mean(picked)) if picked else 0.0


def compare(args) -> None:
    """The shipped feature lists, objectives and strengths against the same with features added or
    dropped (or another shortlist size): cross-validated on the tune candidates, and fitted on all
    of them and scored on the report candidates."""
    global SHORTLIST
    shipped = json.loads(Path(choose.ranking.WEIGHTS_FILE).read_text())
    objective = (shipped["provenance"]["objectives"]["prior"], shipped["provenance"]["objectives"]["final"])
    strengths = shipped["provenance"]["regularisation"]
    tune, report = load_questions(args.tune), load_questions(args.report)
    added = [n for n in args.add.split(",") if n]
    dropped = set(n for n in args.drop.split(",") if n)
    unknown = [n for n in added + sorted(dropped) if n not in FEATURES]
    if unknown:
        sys.exit(f"unknown features: {', '.join(unknown)}")
    base_prior, base_final = list(shipped["prior"]["weights"]), list(shipped["final"]["weights"])
    variants = {"shipped": (base_prior, base_final, SHORTLIST),
                "changed": ([n for n in base_prior if n not in dropped] + [n for n in added if n not in MODEL_FEATURES],
                            [n for n in base_final if n not in dropped] + added, args.shortlist or SHORTLIST)}
    print(f"{len(tune)} tune / {len(report)} report questions; add {added or '-'}, drop {sorted(dropped) or '-'}, "
          f"shortlist {variants['changed'][2]}; load={load()}")
    for name, (prior, final, size) in variants.items():
        SHORTLIST = size
        _PRIOR_CACHE.clear()
        cv = evaluate(tune, prior, final, strengths["prior"], strengths["final"], objective)
        _, short = prior_shortlists(tune, prior, strengths["prior"], objective[0])
        fitted = (fit_stage([r["candidates"] for r in tune], prior, strengths["prior"], objective[0]),
                  fit_stage(short, final, strengths["final"], objective[1]))
        print(f"  {name:8} tune cross-validated top F1 {cv['final_top_f1']:.4f} (best of shortlist "
              f"{cv['best_of_shortlist']:.3f})   report {picked_f1(report, *fitted):.4f}")


def main() -> None:
    parser, sub = collecting_parser(__doc__)
    f = sub.add_parser("fit")
    f.add_argument("candidates", type=Path)
    f.add_argument("--out", type=Path, default=Path(choose.ranking.WEIGHTS_FILE))
    f.add_argument("--threshold", type=float, default=None,
                   help="confidence below which an answer is shown unsure (default: the out-of-fold confidence "
                        "above which SURE_SHARE of the questions fall)")
    s = sub.add_parser("score")
    s.add_argument("candidates", type=Path)
    s.add_argument("--weights", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("tune", type=Path)
    c.add_argument("report", type=Path)
    c.add_argument("--add", default="", help="features to add (comma-separated); model-read ones go to the final stage only")
    c.add_argument("--drop", default="", help="features to drop from both stages (comma-separated)")
    c.add_argument("--shortlist", type=int, default=0, help="another shortlist size")
    args = parser.parse_args()
    {"collect": collect, "fit": fit, "score": score, "compare": compare}[args.command](args)


if __name__ == "__main__":
    main()
