"""Where a context misses the gold answer, by cause: the document, the passage, or the gold itself.

    python bench/recall_losses.py RESULTS.jsonl [--system longqa] [--whole full-context]

RESULTS is a per-question results file of `longqa eval` (`<work dir>/runs/*.jsonl`) holding the
system and the whole-document system (`full-context`, whose answer recall is measured over the
untruncated documents). Every question with a gold answer span (answer recall measured) falls in
one row:

- found: the context holds a gold answer;
- document left out: missed, no passage of the question's own document in the context, and the
  whole document holds the answer: what a better choice of documents could win, at most;
- passage left out: missed, the document is in the context, and the whole document holds the
  answer: what a better choice of passages inside the document could win;
- not in the document as written: the whole document holds no gold answer on word boundaries
  (a computed figure, another wording): no context can hold it;
- no whole-document row: the results have no `--whole` record for the question.

Per dataset and overall, with the ceilings the rows imply (answer recall with every left-out
document or passage won back). The figures depend on nothing but the file; they are the measure
of how much a better document score, or a better passage order, can still add.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_runs import read_or_say  # noqa: E402

ROWS = ("found", "document left out", "passage left out", "not in the document as written",
        "no whole-document row")


def cause(record: dict, whole: dict | None) -> str:
    if record.get("answer_recall"):
        return "found"
    if whole is None or whole.get("answer_recall") is None:
        return "no whole-document row"
    if not whole["answer_recall"]:
        return "not in the document as written"
    return "passage left out" if record.get("doc_hit") else "document left out"


def tally(records: dict[tuple[str, str], dict], system: str, whole_system: str) -> dict[str, Counter]:
    """dataset -> cause -> questions, over the system's questions with a measured answer recall;
    the key "all" sums them."""
    found: dict[str, Counter] = defaultdict(Counter)
    for (name, question), record in sorted(records.items()):
        if name != system or record.get("answer_recall") is None:
            continue
        row = cause(record, records.get((whole_system, question)))
        found[record.get("dataset") or "?"][row] += 1
        found["all"][row] += 1
    return found


def report(found: dict[str, Counter]) -> list[str]:
    width = max((len(name) for name in found), default=3)
    head = f"{'dataset':<{width}}  {'n':>4}  " + "  ".join(f"{row:>{len(row)}}" for row in ROWS)
    lines = [head + "  recall  with documents  with passages"]
    for name in sorted(found, key=lambda n: (n == "all", n)):
        counts = found[name]
        n = sum(counts.values())
        cells = "  ".join(f"{counts[row]:>{len(row)}}" for row in ROWS)
        recall = counts["found"] / n
        documents = (counts["found"] + counts["document left out"]) / n
        passages = (counts["found"] + counts["passage left out"]) / n
        lines.append(f"{name:<{width}}  {n:>4}  {cells}  {recall:6.3f}  {documents:14.3f}  {passages:13.3f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a `longqa eval` results file (.jsonl)")
    parser.add_argument("--system", default="longqa", help="the system whose misses are split (default longqa)")
    parser.add_argument("--whole", default="full-context",
                        help="the whole-document system of the same run (default full-context)")
    args = parser.parse_args(argv)
    records = read_or_say(args.results, "recall_losses")
    if records is None:
        return 1
    found = tally(records, args.system, args.whole)
    if not found:
        print(f"recall_losses: {args.results}: no {args.system} record with a measured answer recall",
              file=sys.stderr)
        return 1
    print(f"{args.results.name}: {args.system}, misses split by {args.whole}")
    print("\n".join(report(found)))
    print("with documents / with passages: the answer recall if every left-out document / passage "
          "were won back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
