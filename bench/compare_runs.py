"""Which questions two `longqa eval` runs answered differently. Prints, per system, how many
questions differ in their context and in their answer text, with the first few ids of each.

    python bench/compare_runs.py A.jsonl B.jsonl [--show 5]

A and B are per-question results files (`<work dir>/runs/*.jsonl`, one JSON line per system and
question). A context is the passages a system handed over (document, pages, characters of each),
in any order; an answer is its exact text (a run without generation has none). A question in
only one file is counted apart. Differences never change the exit status (0); a file that
cannot be read is one line on stderr, exit 1. A line cut short by an interrupted run is skipped,
as `longqa eval` skips it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def read_run(path: Path) -> dict[tuple[str, str], dict]:
    """(system, question id) -> record; the last line wins, as when a run was resumed."""
    records = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "system" in record and "id" in record:
            records[(record["system"], record["id"])] = record
    return records


def read_or_say(path: Path, program: str) -> dict[tuple[str, str], dict] | None:
    """`read_run`, or None after one line on stderr saying why the file cannot be read."""
    try:
        return read_run(path)
    except OSError as exc:
        print(f"{program}: {path}: cannot read it ({exc.strerror or exc})", file=sys.stderr)
    except UnicodeDecodeError:
        print(f"{program}: {path}: not a results file (not UTF-8 text)", file=sys.stderr)
    return None


def context_of(record: dict) -> Counter:
    """The passages handed over, as a multiset: the same passages in another order are the same
    context."""
    return Counter(json.dumps(passage, sort_keys=True) for passage in record.get("passages") or [])


def compare(a: dict[tuple[str, str], dict], b: dict[tuple[str, str], dict]) -> dict[str, dict[str, list[str]]]:
    """Per system: the ids only in A, only in B, and those whose context or answer differ."""
    found: dict[str, dict[str, list[str]]] = {}
    for system, question in sorted(set(a) | set(b)):
        row = found.setdefault(system, {"only_a": [], "only_b": [], "both": [], "context": [], "answer": []})
        left, right = a.get((system, question)), b.get((system, question))
        if right is None:
            row["only_a"].append(question)
            continue
        if left is None:
            row["only_b"].append(question)
            continue
        row["both"].append(question)
        if context_of(left) != context_of(right):
            row["context"].append(question)
        if left.get("answer") != right.get("answer"):
            row["answer"].append(question)
    return found


def report(found: dict[str, dict[str, list[str]]], show: int) -> list[str]:
    lines = []
    for system, row in found.items():
        lines.append(f"{system}: {len(row['both'])} questions in both runs, {len(row['only_a'])} only in A, "
                     f"{len(row['only_b'])} only in B")
        for kind in ("context", "answer"):
            ids = row[kind]
            first = f" (first: {', '.join(ids[:show])})" if ids else ""
            lines.append(f"  {kind} differs: {len(ids)}{first}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the first results file (.jsonl)")
    parser.add_argument("b", type=Path, help="the second results file (.jsonl)")
    parser.add_argument("--show", type=int, default=5, help="ids shown per difference (default 5)")
    args = parser.parse_args(argv)
    runs = [read_or_say(path, "compare_runs") for path in (args.a, args.b)]
    if None in runs:
        return 1
    print("\n".join(report(compare(*runs), args.show)) or "no records in either file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
