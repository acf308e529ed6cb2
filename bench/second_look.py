"""The reader's second look, scored with and without from one evaluation run.

A run with `--set answer.reader_second_look=N` records, for each answer the second look changed,
`second_look_changed` and `first_confidence` among its signals, and keeps the reader's own answer
among the alternatives (first, or second after the new answer where the outcome declined that).
So the answer without the second look is known for every question: the reader's own, declined
where its first confidence was below the profile's decline threshold. This prints F1 both ways,
the answers changed, and which way each change went.

    longqa eval ../shared/evaldata/dev.jsonl --half tune --limit 60 --systems longqa \\
        --set answer.reader_second_look=2 --results W/second-look.jsonl --out W/second-look.json
    python bench/second_look.py W/second-look.jsonl ../shared/evaldata/dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from longqa.ask.answer import reader_confidence  # noqa: E402
from longqa.ask.answer.grounded import NO_ANSWER  # noqa: E402
from longqa.eval.data import load_questions  # noqa: E402
from longqa.eval.score import answer_measures  # noqa: E402


def without(record: dict, below: float) -> str | None:
    """The answer the record would have had without the second look (None: unknown)."""
    signals = record.get("signals") or {}
    if not signals.get("second_look_changed"):
        return record["answer"]
    alternatives = record.get("alternatives") or []
    first = alternatives[1] if record.get("declined") else alternatives[0] if alternatives else None
    if first is None:
        return None
    return NO_ANSWER if signals.get("first_confidence", 1.0) < below else first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="per-question results of a run with the second look on")
    parser.add_argument("questions", type=Path, help="the questions file the run read")
    parser.add_argument("--profile", default="qwen2.5-coder-1.5b", help="whose decline threshold applies")
    parser.add_argument("--decline", type=float, default=None, help="the threshold the run declined at")
    args = parser.parse_args()
    below = args.decline if args.decline is not None else reader_confidence.decline_below(args.profile)
    questions = {q.id: q for q in load_questions(args.questions)}
    rows = [json.loads(line) for line in args.results.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("system") == "longqa" and r.get("f1") is not None]
    with_f1, without_f1, changes = [], [], []
    for row in rows:
        before = without(row, below)
        f1_before = answer_measures(questions[row["id"]], before)["f1"] if before is not None else 0.0
        with_f1.append(row["f1"])
        without_f1.append(f1_before)
        if (row.get("signals") or {}).get("second_look_changed"):
            changes.append((row["id"], before, row["answer"], f1_before, row["f1"]))
    n = len(rows)
    load = os.getloadavg()
    print(f"{args.results.name}: {n} questions scored by F1; decline threshold {below}")
    print(f"F1 without the second look {sum(without_f1) / n:.4f}, with it {sum(with_f1) / n:.4f}")
    better = sum(after > before for *_, before, after in changes)
    worse = sum(after < before for *_, before, after in changes)
    print(f"answers changed: {len(changes)} (better {better}, worse {worse}, same {len(changes) - better - worse})")
    for qid, before, after, f1_before, f1_after in changes:
        print(f"  {qid}: {before!r} ({f1_before:.2f}) -> {after!r} ({f1_after:.2f})")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (seconds are in the run's report)")


if __name__ == "__main__":
    main()
