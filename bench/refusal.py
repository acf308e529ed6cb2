"""How often the answer stage says "The documents do not say." where they do not, and what it costs
where they do.

    python bench/refusal.py ANSWERS NEGATIVES --profile NAME [--choose [--write]] [--threshold T] [--out REPORT.json]

ANSWERS: an eval report (or results .jsonl) of a half, each question asked of its own documents
(`longqa eval ... --half H`). NEGATIVES: the same half asked of its dataset's documents without its
own (`longqa eval ... --half H --without-own-docs`): nothing there should be answered. Both runs
with `answer.reader_decline` 0 (nothing declined on confidence), so that every answer the reader
proved is recorded with its signals; each answer's confidence is computed again from them by the
profile's confidence table as shipped now (bench/reader_confidence.py fits it), and this bench
replays the decision at each threshold:
- declined: a negative question answered nothing (nothing relevant, the reader's "unknown", a reply
  the documents do not hold) or answered below the threshold;
- right answers lost: answers with token F1 >= 0.5 on their own documents whose confidence is below
  the threshold, as a share of all right answers;
- F1 of the answerable half with the threshold applied (a declined answer scores 0).
`--choose` (on the tune half) picks the highest threshold that loses at most 5 % of right answers,
and `--write` keeps it in the profile's confidence table (its provenance's `decline_below`, what
`answer.reader_decline` -1 declines below; fitting the table again drops it, as a new table needs
its own); `--threshold` checks a given one (on the report half). Figures do not depend on the machine's load;
it is printed for the record.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fitting import commit, load  # noqa: E402

from longqa.ask.answer import reader_confidence  # noqa: E402

RIGHT = 0.5  # token F1 from which an answer counts as right (the ranker's and the confidence's label)
MOST_LOST = 0.05  # right answers the refusal may lose, as a share of all right answers
READER_MODES = ("read", "verdict", "selection")


def rows(path: Path, profile: str) -> list[dict]:
    """The generated answers of longqa in a report (per_question) or a results file, each reader
    answer's confidence from its signals by the profile's table as shipped now."""
    text = path.read_text(encoding="utf-8")
    found = json.loads(text)["per_question"] if path.suffix == ".json" else \
        [json.loads(line) for line in text.splitlines() if line.strip()]
    kept = [dict(r) for r in found if r.get("system", "longqa") == "longqa" and r.get("declined") is not None]
    for row in kept:
        if row.get("answer_mode") in READER_MODES and row.get("signals"):
            row["confidence"] = reader_confidence.calibrated(profile, row["signals"])
    return kept


def declinable(row: dict) -> bool:
    """An answer the confidence decides on: a reader's proven answer."""
    return not row["declined"] and row.get("answer_mode") in READER_MODES and row.get("confidence") is not None


def declined_by_the_run(answers: list[dict], profile: str) -> int:
    """Answers the run itself declined below the profile's shipped threshold (their candidate and
    its confidence are kept, not shown): replaying cannot tell whether they were right."""
    shipped = reader_confidence.decline_below(profile)
    return 0 if not shipped else sum(1 for r in answers if r["declined"] and r.get("confidence") is not None
                                      and r["confidence"] < shipped and r.get("f1") is not None)


def figures(answers: list[dict], negatives: list[dict], threshold: float) -> dict:
    def below(row: dict) -> bool:
        return declinable(row) and row["confidence"] < threshold

    scored = [r for r in answers if r.get("f1") is not None]
    right = [r for r in scored if r["f1"] >= RIGHT and not r["declined"]]
    lost = [r for r in right if below(r)]
    declined = [r for r in negatives if r["declined"] or below(r)]
    f1 = [0.0 if (r["declined"] or below(r)) else r["f1"] for r in scored]
    return {"threshold": round(threshold, 4), "negatives": len(negatives),
            "negatives_declined": round(len(declined) / len(negatives), 4) if negatives else None,
            "right_answers": len(right), "right_lost": len(lost),
            "right_lost_share": round(len(lost) / len(right), 4) if right else None,
            "answerable_declined": round(sum(1 for r in scored if r["declined"] or below(r)) / len(scored), 4)
            if scored else None,
            "f1": round(float(np.mean(f1)), 4) if f1 else None, "f1_n": len(f1)}


def choose(answers: list[dict], negatives: list[dict]) -> float:
    """The highest threshold at which at most MOST_LOST of the right answers are declined."""
    candidates = sorted({0.0} | {r["confidence"] for r in answers + negatives if declinable(r)})
    best = 0.0
    for threshold in candidates:
        share = figures(answers, negatives, threshold)["right_lost_share"] or 0.0
        if share <= MOST_LOST:
            best = threshold
    return best


def by_dataset(answers: list[dict], negatives: list[dict], threshold: float) -> dict:
    names = sorted({r["dataset"] for r in answers + negatives})
    return {name: figures([r for r in answers if r["dataset"] == name],
                          [r for r in negatives if r["dataset"] == name], threshold) for name in names}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("answers", type=Path)
    parser.add_argument("negatives", type=Path)
    parser.add_argument("--profile", required=True, help="the reader profile whose confidence table decides")
    parser.add_argument("--choose", action="store_true", help="pick the threshold (tune half)")
    parser.add_argument("--write", action="store_true", help="with --choose: keep the threshold in the profile's table")
    parser.add_argument("--threshold", type=float, default=None, help="check this threshold (report half)")
    parser.add_argument("--out", type=Path, help="write the figures as a JSON report")
    args = parser.parse_args()
    answers, negatives = rows(args.answers, args.profile), rows(args.negatives, args.profile)
    if not answers or not negatives:
        print("no answers with a declined field: run both evals with this version of longqa")
        return 1
    threshold = choose(answers, negatives) if args.choose else (args.threshold or 0.0)
    print(f"{args.answers.name} + {args.negatives.name}: load {load()}")
    hidden = declined_by_the_run(answers, args.profile)
    if hidden:
        print(f"  note: the answers run declined {hidden} answers on its own threshold (run without "
              "answer.reader_decline=0): a right one among them is not counted as lost here")
    print(f"  {'threshold':>9}  {'neg declined':>12}  {'right lost':>10}  {'F1':>6}")
    for t in sorted({0.0, 0.1, 0.2, 0.3, 0.4, 0.5, threshold}):
        f = figures(answers, negatives, t)
        mark = "  <-" if t == threshold else ""
        print(f"  {t:9.3f}  {f['negatives_declined']:12.3f}  {f['right_lost']:4d}/{f['right_answers']:<5d}"
              f"  {f['f1']:6.3f}{mark}")
    chosen = figures(answers, negatives, threshold)
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "commit": commit(), "command": "python bench/refusal.py " + " ".join(sys.argv[1:]),
              "load": load(), "profile": args.profile, "answers": args.answers.name, "negatives": args.negatives.name,
              "chosen_on_this_half": bool(args.choose), "rule": f"right = token F1 >= {RIGHT}; "
              f"chosen = highest threshold losing at most {MOST_LOST:.0%} of right answers",
              "at_threshold": chosen, "by_dataset_at_threshold": by_dataset(answers, negatives, threshold)}
    print(json.dumps(chosen, indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    if args.choose and args.write:
        kept = keep_threshold(args.profile, threshold, report["command"])
        print(f"wrote decline_below {threshold:.4f} into {kept}")
    return 0


def keep_threshold(profile: str, threshold: float, command: str) -> Path:
    """The chosen threshold written into the profile's confidence table, beside how it was chosen."""
    path = reader_confidence.TABLES / f"{profile}.json"
    table = json.loads(path.read_text(encoding="utf-8"))
    table.setdefault("provenance", {}).update(
        {"decline_below": round(threshold, 4), "decline_chosen_by": command, "decline_commit": commit()})
    path.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    sys.exit(main())
