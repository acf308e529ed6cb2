"""One eval report from two runs over the same questions: the systems named are taken from the second
report, everything else from the first.

    python bench/merge_reports.py BASE.json OTHER.json --systems longqa --out MERGED.json [--note TEXT]

For comparing a changed system with baselines that did not change and take hours to run again (a
BM25-chunk baseline read by the reader does not depend on longqa's settings). Both runs must have
asked the same questions of the same half; the merged report names both commits, both commands
and both load averages, and its notes say which rows came from where.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

GROUPS = ("by_dataset", "by_task", "by_form")  # {group: {system: aggregates}}


def _questions(report: dict) -> set[str]:
    return {row["id"] for row in report["per_question"]}


def merged(base: dict, other: dict, systems: list[str], note: str | None) -> dict:
    if base.get("half") != other.get("half") or _questions(base) != _questions(other):
        raise SystemExit("merge_reports: the two reports did not ask the same questions of the same half")
    missing = [name for name in systems if name not in other["overall"]]
    if missing:
        raise SystemExit(f"merge_reports: {', '.join(missing)} not in the second report")
    out = dict(base)
    kept = [name for name in base["systems"] if name not in systems]
    out["systems"] = systems + kept
    out["overall"] = {**{name: other["overall"][name] for name in systems},
                      **{name: base["overall"][name] for name in kept}}
    for group in GROUPS:
        out[group] = {key: {**{n: other[group].get(key, {}).get(n) for n in systems if n in other[group].get(key, {})},
                            **{n: s for n, s in stats.items() if n not in systems}}
                      for key, stats in base.get(group, {}).items()}
    out["per_question"] = ([row for row in other["per_question"] if row.get("system", "longqa") in systems]
                           + [row for row in base["per_question"] if row.get("system", "longqa") not in systems])
    taken, rest = ", ".join(systems), ", ".join(kept)
    out["commit"] = f"{other['commit'][:7]} ({taken} rows); {base['commit'][:7]} ({rest} rows)"
    out["git"] = {"commit": out["commit"], "dirty": bool(base["git"].get("dirty") or other["git"].get("dirty"))}
    out["command"] = f"{other['command']}  +  {base['command']}"
    out["date"] = other["date"]
    out["load"] = other["load"]
    out["merged_from"] = [
        {"rows": systems, "commit": other["commit"], "date": other["date"], "command": other["command"],
         "load": other["load"]},
        {"rows": kept, "commit": base["commit"], "date": base["date"], "command": base["command"],
         "load": base["load"]},
    ]
    out["settings_by_run"] = {taken: other.get("settings"), rest: base.get("settings")}
    out["notes"] = list(base.get("notes", [])) + [
        f"Merged report: the {taken} rows come from the run of commit {other['commit'][:7]} ({other['date'][:10]}), "
        f"the {rest} rows from the run of commit {base['commit'][:7]} ({base['date'][:10]}), same questions and half."
    ] + ([note] if note else [])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("other", type=Path)
    parser.add_argument("--systems", required=True, help="comma-separated systems taken from OTHER")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--note", help="a note added to the merged report")
    args = parser.parse_args(argv)
    base, other = (json.loads(p.read_text(encoding="utf-8")) for p in (args.base, args.other))
    report = merged(base, other, [s for s in args.systems.split(",") if s], args.note)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.out}: " + ", ".join(f"{name} F1 {report['overall'][name].get('f1')}" for name in report["systems"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
