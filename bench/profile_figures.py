"""Each generator profile's measured figures, from committed reports, into the file `longqa models`
reads (longqa/models/data/profiles.json), and the default chosen by the stated rule.

    python bench/profile_figures.py            # write longqa/models/data/profiles.json
    python bench/profile_figures.py --check    # exit 1 when the file differs from the reports

Quality comes from the report-half eval report of each profile (eval/PROFILE_REPORTS): F1 and
the share of sure answers; speed and memory from bench/fresh_ask_profiles.json (`python
bench/fresh_ask.py --out`): a fresh `ask`'s median wall time and peak memory on the sample
handbook. The rule for the default: the highest report-half F1 among the profiles whose fresh
answer takes at most MAX_SECONDS on 2 idle cores (printed, with the load the timings were taken at).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "longqa" / "models" / "data" / "profiles.json"
FRESH = REPO / "bench" / "fresh_ask_profiles.json"
# profile -> its report-half answers report (150 questions, answers generated).
PROFILE_REPORTS = {
    "gemma-3-270m": "eval/dev-report150-corpus-answers-gemma-3-270m.json",
    "qwen2.5-coder-0.5b": "eval/dev-report150-corpus-answers-qwen2.5-coder-0.5b.json",
    "qwen2.5-coder-1.5b": "eval/dev-report150-corpus-answers-qwen2.5-coder-1.5b-paragraphs.json",
}
MAX_SECONDS = 15.0


def figures() -> dict:
    fresh = json.loads(FRESH.read_text(encoding="utf-8")) if FRESH.is_file() else {"profiles": {}}
    rows = {}
    for name, path in PROFILE_REPORTS.items():
        report_file = REPO / path
        if not report_file.is_file():
            continue
        report = json.loads(report_file.read_text(encoding="utf-8"))
        overall = report["overall"]["longqa"]
        timing = fresh["profiles"].get(name, {})
        rows[name] = {
            "f1": round(overall["f1"], 3), "em": round(overall["em"], 3), "sure": round(overall.get("sure", 0.0), 3),
            "sure_f1": overall.get("sure_f1"), "questions": report["questions"], "half": report["half"],
            "report": path, "commit": report["commit"],
            "seconds_per_question": timing.get("wall_p50"), "first_token": timing.get("first_token_p50"),
            "first_draft": timing.get("first_draft_p50"),
            "peak_mib": timing.get("peak_mib"), "timing_load": timing.get("load"),
            "timing_commit": fresh.get("commit"), "timing_machine": fresh.get("machine"),
        }
    return {"rule": f"highest report-half F1 among profiles whose fresh ask takes at most {MAX_SECONDS:g} s "
                    "(median, sample handbook, 2 cores)", "profiles": rows}


def chosen(data: dict) -> str | None:
    fit = [(row["f1"], name) for name, row in data["profiles"].items()
           if row.get("seconds_per_question") is not None and row["seconds_per_question"] <= MAX_SECONDS]
    return max(fit)[1] if fit else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    data = figures()
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    for name, row in data["profiles"].items():
        print(f"{name:22s} F1 {row['f1']:.3f}  sure {row['sure']:.2f}  fresh ask {row['seconds_per_question']} s "
              f"(first token {row['first_token']} s, peak {row['peak_mib']} MiB, load {row['timing_load']})")
    print(f"by the rule ({data['rule']}): {chosen(data)}")
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print("profiles.json " + ("matches the reports" if same else "differs from the reports"))
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
