"""Learn the leaf ranker's weights (longqa/ask/search/leaf_ranker.json) from labelled questions.

    # 1. the candidate leaves of every question of a half, with their features and labels (the
    #    search runs as usual; no generation):
    LONGQA_THREADS=1 python bench/leaf_ranker.py collect ../shared/evaldata/dev.jsonl --half tune \
        --limit 150 --work-dir /tmp/leaves-tune
    # 2. fit on the tune half, cross-validated by question; writes the weights file:
    python bench/leaf_ranker.py fit /tmp/leaves-tune/leaves.jsonl
    # 3. the shipped weights on the other half, against the hand-weighted score:
    python bench/leaf_ranker.py score /tmp/leaves-report/leaves.jsonl

A leaf is a positive when it holds a gold answer (normalised, on word boundaries, as the eval's
answer recall reads a context) or most of a gold evidence passage (80 % of the passage's tokens in
one window of the leaf, or 80 % of a leaf of at least 8 tokens inside the passage). The model is a
softmax over each question's leaves (listwise, L2-regularised, numpy), its strength chosen by
5-fold cross-validation by question; features whose removal alone does not lower the
cross-validated figure are dropped. The figure is what the search's first picks reach: the share of
questions with a positive among the leaves taken best first until 500 and 2,000 tokens. Every figure
is printed with the load average.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fitting  # noqa: E402
from longqa.ask.search import leaf_ranker  # noqa: E402
from longqa.ask.settings import DEFAULTS  # noqa: E402
from longqa.eval import metrics  # noqa: E402

KEEP_TOP = 400  # leaves kept per question by the hand-weighted score (with every positive and a sample)
KEEP_RANDOM = 100
BUDGETS = (500, 2000)
COVERED = 0.8


# -- collect ------------------------------------------------------------------------------------
def collect(args) -> None:
    args.work_dir.mkdir(parents=True, exist_ok=True)
    recorder = fitting.Recorder(args.questions, args.work_dir / "leaves.jsonl")
    original = leaf_ranker.features

    def recording(inputs: leaf_ranker.LeafInputs):
        table = original(inputs)
        recorder.offer(inputs.query, lambda record: _labelled(record, inputs, table))
        return table

    leaf_ranker.features = recording
    # The search runs on the hand-weighted score while collecting: the features of a query's leaves
    # do not depend on it, only which hops are taken (those are not recorded).
    leaf_ranker.load = lambda path=None: _Hand()
    fitting.run_half(args, "search.learned_leaves")
    print(f"collected {recorder.close()} questions (half={args.half}) load={fitting.load()}")


class _Hand:
    """Stands in for the ranker while collecting: the hand-weighted score."""

    def scores(self, table, scale):
        return scale


def hand(f: dict) -> float:
    back = DEFAULTS.search.back_matter_weight if f["back_matter"] else 1.0
    return max(f["first_stage"], f["fused"]) * f["doc_prior"] * back


def _labelled(record: dict, inputs: leaf_ranker.LeafInputs, table: dict) -> dict:
    leaves = {n.id: n for root in inputs.roots for n in _leaves(root)}
    golds = [g for g in record.get("answers", []) if isinstance(g, str)] if record.get("metric") != "choice" else []
    evidence = [metrics.tokens_of(e["text"] if isinstance(e, dict) else e) for e in record.get("evidence", [])]
    evidence = [e for e in evidence if e]
    bags = [set(e) for e in evidence]  # a cheap test before the window scan of a leaf inside a passage
    order = sorted(table, key=lambda i: -hand(table[i]))
    rows = []
    rng = random.Random(record["id"])
    for rank, leaf_id in enumerate(order):
        node = leaves[leaf_id]
        answer = metrics.answer_in_context(golds, node.text) if golds else None
        tokens = metrics.tokens_of(node.text)
        covers = max((metrics.window_coverage(e, tokens) for e in evidence), default=0.0)
        inside = max((metrics.window_coverage(tokens, e) for e, bag in zip(evidence, bags)
                      if sum(t in bag for t in tokens) >= COVERED * len(tokens)), default=0.0) if len(tokens) >= 8 else 0.0
        positive = bool(answer) or covers >= COVERED or inside >= COVERED
        if rank < KEEP_TOP or positive or rng.random() < KEEP_RANDOM / max(1, len(order)):
            rows.append({"id": leaf_id, "tokens": node.tokens or len(node.text.split()), "answer": answer,
                         "covers": round(covers, 3), "inside": round(inside, 3), "features": table[leaf_id]})
    return {"id": record["id"], "dataset": record["dataset"], "leaves": len(order),
            "answerable": bool(golds and metrics.answer_in_context(golds, " ".join(n.text for n in leaves.values()))),
            "has_evidence": bool(evidence), "rows": rows}


def _leaves(root):
    from longqa.tree_types import walk

    return [n for n in walk(root) if n.is_leaf]


# -- fit and score ------------------------------------------------------------------------------
NAMES = list(leaf_ranker.FEATURES)


def load_questions(path: Path) -> list[dict]:
    questions = [json.loads(line) for line in open(path, encoding="utf-8")]
    for q in questions:
        for r in q["rows"]:
            r["positive"] = bool(r["answer"]) or r["covers"] >= COVERED or r["inside"] >= COVERED
    return fitting.prepare(questions, NAMES, lambda r: hand(r["features"]))


def fit(args) -> None:
    fitting.fit_and_write(load_questions(args.leaves), args.leaves, args.out, "leaf_ranker.py",
                          "the leaf holds a gold answer or most of a gold evidence passage", NAMES, BUDGETS)


def score(args) -> None:
    """The shipped (or given) weights on collected questions, against the hand-weighted score."""
    ranker = leaf_ranker.load(args.weights or leaf_ranker.WEIGHTS_FILE)
    fitting.score_against_hand(load_questions(args.leaves), ranker.stage.score, BUDGETS)


if __name__ == "__main__":
    fitting.command_line(__doc__, "leaves", leaf_ranker.WEIGHTS_FILE, {"collect": collect, "fit": fit, "score": score})
