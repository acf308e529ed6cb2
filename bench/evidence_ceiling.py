"""How much gold evidence a store can hold at all: each evidence passage's best coverage over the
whole stored text of its question's documents; prints figures, asserts nothing.

    python bench/evidence_ceiling.py ../shared/evaldata/dev.jsonl --store WORK/stores/uda-....db \
        [--store ...] [--half report] [--results WORK/runs/dev-corpus-....jsonl] [--verbose]

Evidence recall counts a gold passage when EVIDENCE_THRESHOLD (80 %) of its tokens stand in one
window of the context (longqa/eval/metrics.py). A passage that no window of its own documents'
stored text reaches (the dataset quotes another revision of the page, or text the PDF does not
hold) cannot be recalled by any retriever: this script says how many there are, per dataset, and
with --results the evidence recall the run reached on the same questions beside that ceiling.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from longqa.eval.data import half_of, load_questions  # noqa: E402
from longqa.eval.metrics import EVIDENCE_THRESHOLD, tokens_of, window_coverage  # noqa: E402
from longqa.store import open_db  # noqa: E402
from longqa.store.documents import document_labels  # noqa: E402
from longqa.store.nodes import leaf_texts  # noqa: E402


def stored_tokens(stores: list[Path]) -> dict[str, list[str]]:
    """Document file name -> the tokens of its stored leaves in reading order (id order)."""
    found: dict[str, list[str]] = {}
    for path in stores:
        db = open_db(path, readonly=True)
        for doc_id, label in document_labels(db).items():
            text = "\n".join(leaf.text for leaf in leaf_texts(db, doc_id))
            found[Path(label.path).name] = tokens_of(text)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--store", type=Path, action="append", required=True, help="a store (repeatable)")
    parser.add_argument("--half", choices=["tune", "report"], help="only this half's questions")
    parser.add_argument("--results", type=Path, help="an eval run's per-question JSONL: its evidence recall beside")
    parser.add_argument("--verbose", action="store_true", help="one line per question")
    args = parser.parse_args()

    documents = stored_tokens(args.store)
    achieved: dict[str, float] = {}
    if args.results:
        for line in args.results.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("evidence_recall") is not None:
                achieved[row["id"]] = row["evidence_recall"]
    by: dict[str, list[tuple[float, float | None]]] = defaultdict(list)  # dataset -> (reachable, achieved)
    for question in load_questions(args.questions):
        names = [doc.name for doc in question.docs]
        if not question.evidence or (args.half and half_of(question.id) != args.half):
            continue
        if any(name not in documents for name in names) or (args.results and question.id not in achieved):
            continue  # not in these stores, or not asked in that run
        best = [max(window_coverage(tokens_of(e.text), documents[name]) for name in names) for e in question.evidence]
        reachable = sum(1 for b in best if b >= EVIDENCE_THRESHOLD) / len(best)
        got = achieved.get(question.id)
        by[question.dataset].append((reachable, got))
        by["all"].append((reachable, got))
        if args.verbose:
            print(f"  {question.id[:40]:40} best coverage {[round(b, 2) for b in best]}"
                  + ("" if got is None else f"  recalled {got:.2f}"))
    print(f"evidence a retriever could recall (coverage >= {EVIDENCE_THRESHOLD} over the whole stored text)")
    for dataset, rows in sorted(by.items(), key=lambda item: item[0] == "all"):
        ceiling = sum(r for r, _ in rows) / len(rows)
        line = f"  {dataset:12} questions={len(rows):3}  ceiling={ceiling:.3f}"
        if args.results:
            line += f"  recalled={sum(g for _, g in rows) / len(rows):.3f}"
        print(line)


if __name__ == "__main__":
    main()
