"""bench/compare_runs.py: which questions two evaluation runs answered differently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "compare_runs.py"
MANUAL = {"doc": "pump_manual.pdf", "pages": [4, 4], "chars": 251}
REPORT = {"doc": "annual_report.pdf", "pages": [12, 13], "chars": 880}


def record(system: str, question: str, answer, passages) -> str:
    return json.dumps({"system": system, "id": question, "answer": answer, "passages": passages,
                       "f1": None, "run_key": "0123456789abcdef"})


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_differences_in_context_and_answer_are_counted_per_system(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("\n".join([
        record("longqa", "q1", "120 hours [1]", [MANUAL, REPORT]),
        record("longqa", "q2", "Yes [2]", [MANUAL]),
        record("longqa", "q3", "12 March 2019 [1]", [REPORT]),
        record("longqa", "q4", None, [MANUAL]),
        record("bm25-chunks", "q1", "120 hours", [MANUAL]),
    ]) + "\n", encoding="utf-8")
    b.write_text("\n".join([
        record("longqa", "q1", "120 hours [1]", [REPORT, MANUAL]),  # the same passages, reordered
        record("longqa", "q2", "No [1]", [MANUAL]),  # another answer
        record("longqa", "q3", "12 March 2019 [1]", [REPORT, MANUAL]),  # a passage more
        record("longqa", "q5", "Yes", [MANUAL]),
        record("bm25-chunks", "q1", "120 hours", [MANUAL]),
        '{"system": "longqa", "id": "q6", "answ',  # cut short by an interrupted run
    ]) + "\n", encoding="utf-8")
    done = run(a, b, "--show", "1")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.splitlines() == [
        "bm25-chunks: 1 questions in both runs, 0 only in A, 0 only in B",
        "  context differs: 0",
        "  answer differs: 0",
        "longqa: 3 questions in both runs, 1 only in A, 1 only in B",
        "  context differs: 1 (first: q3)",
        "  answer differs: 1 (first: q2)",
    ]


def test_a_missing_file_is_one_line(tmp_path):
    present = tmp_path / "a.jsonl"
    present.write_text(record("longqa", "q1", "Yes", [MANUAL]) + "\n", encoding="utf-8")
    done = run(present, tmp_path / "absent.jsonl")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"compare_runs: {tmp_path / 'absent.jsonl'}: cannot read it (No such file or directory)\n"
