"""How far an answer's confidence can be trusted, from an eval report with answers generated.

    python bench/reliability.py eval/REPORT.json [--threshold 0.5]

Prints the reliability table of longqa's per-question confidence against being right (token F1
at least answer_ranker.RIGHT), its expected calibration error, and for each threshold the share of
answers shown sure and their mean F1: what `answer.reader_sure` (a reader profile) or the
ranker's threshold (the default) trades. Reads a tune-half report to choose, a report-half one to
check; the load average is printed for the record, the figures do not depend on it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_ranker import RIGHT, reliability  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--threshold", type=float, default=None, help="also show this threshold's row")
    args = parser.parse_args()
    report = json.loads(args.report.read_text(encoding="utf-8"))
    rows = [q for q in report["per_question"] if q.get("f1") is not None and q.get("confidence") is not None]
    if not rows:
        print(f"{args.report}: no question with both an F1 and a confidence")
        return 1
    confidence = np.array([q["confidence"] for q in rows], dtype=float)
    f1 = np.array([q["f1"] for q in rows], dtype=float)
    print(f"{args.report.name}: {len(rows)} questions with F1 and confidence, half {report.get('half')}, "
          f"commit {report.get('commit')}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    reliability(confidence, f1)
    print("  threshold  sure  sure F1  unsure F1")
    for threshold in sorted({0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9} | ({args.threshold} if args.threshold else set())):
        sure = confidence >= threshold
        sure_f1 = f1[sure].mean() if sure.any() else float("nan")
        unsure_f1 = f1[~sure].mean() if (~sure).any() else float("nan")
        print(f"  {threshold:9.2f}  {sure.mean():4.2f}  {sure_f1:7.3f}  {unsure_f1:9.3f}")
    print(f"  (right: F1 >= {RIGHT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
