"""bench/recall_losses.py: a context's misses split by cause (document, passage, the gold itself)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "recall_losses.py"


def record(system: str, question: str, dataset: str, answer_recall, doc_hit=1.0) -> str:
    return json.dumps({"system": system, "id": question, "dataset": dataset, "answer_recall": answer_recall,
                       "doc_hit": doc_hit, "passages": [], "run_key": "0123456789abcdef"})


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_each_miss_is_counted_once_under_its_cause(tmp_path):
    results = tmp_path / "run.jsonl"
    results.write_text("\n".join([
        record("longqa", "manual-1", "manuals", 1.0), record("full-context", "manual-1", "manuals", 1.0),
        record("longqa", "manual-2", "manuals", 0.0, doc_hit=0.0),  # another manual was read
        record("full-context", "manual-2", "manuals", 1.0),
        record("longqa", "manual-3", "manuals", 0.0), record("full-context", "manual-3", "manuals", 1.0),
        record("longqa", "report-1", "reports", 0.0), record("full-context", "report-1", "reports", 0.0),
        record("longqa", "report-2", "reports", 0.0),  # no whole-document record
        record("longqa", "report-3", "reports", None), record("full-context", "report-3", "reports", None),
        '{"system": "longqa", "id": "report-4", "answ',  # cut short by an interrupted run
    ]) + "\n", encoding="utf-8")
    done = run(results)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()[2:-1]}
    # n, found, document left out, passage left out, not in the document, no whole row, recall, ceilings
    assert rows["manuals"] == ["3", "1", "1", "1", "0", "0", "0.333", "0.667", "0.667"]
    assert rows["reports"] == ["2", "0", "0", "0", "1", "1", "0.000", "0.000", "0.000"]
    assert rows["all"] == ["5", "1", "1", "1", "1", "1", "0.200", "0.400", "0.400"]


def test_a_file_without_the_system_is_one_line_and_exit_1(tmp_path):
    results = tmp_path / "run.jsonl"
    results.write_text(record("bm25-chunks", "manual-1", "manuals", 1.0) + "\n", encoding="utf-8")
    done = run(results)
    assert done.returncode == 1
    assert done.stderr.strip() == f"recall_losses: {results}: no longqa record with a measured answer recall"
    missing = run(tmp_path / "absent.jsonl")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "cannot read it" in missing.stderr
