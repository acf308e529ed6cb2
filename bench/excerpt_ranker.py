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

import json
import sys
from pathlib import Path

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
    args.work_dir.mkdir(parents=True, exist_ok=True)
    recorder = fitting.Recorder(args.questions, args.work_dir / "sentences.jsonl")
    original = excerpt_ranker.features

    def recording(question, found, readings):
        table = original(question, found, readings)
        recorder.offer(question, lambda record: _labelled(record, found, table))
        return table

    excerpt_ranker.features = recording
    # The excerpt orders sentences by the hand-weighted score while collecting (the features do
    # not depend on the order).
    excerpt_ranker.load = lambda path=None: _Hand()
    fitting.run_half(args, "search.learned_excerpt", args.budget)
    print(f"collected {recorder.close()} questions (half={args.half}, budget {args.budget}) load={fitting.load()}")


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
    return (f["focus"] + s.excerpt_leaf_weight * f["leaf"] + s.excerpt_kind_weight * f["kind_fit"]
            + f["hop"] + 2.0 * f["field"])


def load_questions(path: Path) -> list[dict]:
    questions = [json.loads(line) for line in open(path, encoding="utf-8")]
    for q in questions:
        for r in q["rows"]:
            r["positive"] = bool(r["answer"]) or r["inside"] >= COVERED
    return fitting.prepare(questions, NAMES, hand)


def fit(args) -> None:
    fitting.fit_and_write(load_questions(args.sentences), args.sentences, args.out, "excerpt_ranker.py",
                          "the sentence holds a gold answer or lies inside a gold evidence passage", NAMES, BUDGETS)


def score(args) -> None:
    """The shipped (or given) weights on collected questions, against the hand-weighted score."""
    ranker = excerpt_ranker.load(args.weights or excerpt_ranker.WEIGHTS_FILE)
    fitting.score_against_hand(load_questions(args.sentences), ranker.score, BUDGETS)


if __name__ == "__main__":
    fitting.command_line(__doc__, "sentences", excerpt_ranker.WEIGHTS_FILE,
                         {"collect": collect, "fit": fit, "score": score}, budget=500)
