"""bench/merge_reports.py: one report from two runs of the same questions, the named systems from the second."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "merge_reports.py"


def report(commit: str, systems: dict[str, float], ids=("q1", "q2"), half="report") -> dict:
    return {
        "commit": commit * 8, "git": {"commit": commit * 8, "dirty": False}, "date": f"2026-11-0{len(commit)}T00:00:00",
        "half": half, "command": f"longqa eval at {commit}", "load": [1.0, 1.0, 1.0], "settings": {"at": commit},
        "systems": list(systems), "notes": ["a note"],
        "overall": {name: {"f1": f1} for name, f1 in systems.items()},
        "by_dataset": {"manuals": {name: {"f1": f1} for name, f1 in systems.items()}},
        "by_form": {"fact": {name: {"f1": f1} for name, f1 in systems.items()}},
        "per_question": [{"system": name, "id": q, "f1": f1} for name, f1 in systems.items() for q in ids],
    }


def run(tmp_path, base: dict, other: dict, *args) -> subprocess.CompletedProcess:
    (tmp_path / "base.json").write_text(json.dumps(base), encoding="utf-8")
    (tmp_path / "other.json").write_text(json.dumps(other), encoding="utf-8")
    return subprocess.run([sys.executable, str(SCRIPT), tmp_path / "base.json", tmp_path / "other.json",
                           "--out", tmp_path / "merged.json", *args], capture_output=True, text=True, timeout=60)


def test_the_named_system_comes_from_the_second_run_and_the_rest_from_the_first(tmp_path):
    done = run(tmp_path, report("abc1", {"longqa": 0.2, "bm25-chunks": 0.3}), report("def2", {"longqa": 0.4}),
               "--systems", "longqa")
    assert done.returncode == 0, done.stderr
    merged = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    assert merged["overall"] == {"longqa": {"f1": 0.4}, "bm25-chunks": {"f1": 0.3}}
    assert merged["by_form"]["fact"] == {"longqa": {"f1": 0.4}, "bm25-chunks": {"f1": 0.3}}
    assert sorted((r["system"], r["f1"]) for r in merged["per_question"]) == \
        [("bm25-chunks", 0.3)] * 2 + [("longqa", 0.4)] * 2
    assert merged["commit"] == "def2def (longqa rows); abc1abc (bm25-chunks rows)"
    assert "longqa eval at def2" in merged["command"] and "longqa eval at abc1" in merged["command"]
    assert any("Merged report" in note for note in merged["notes"])


def test_runs_of_other_questions_are_refused(tmp_path):
    done = run(tmp_path, report("abc1", {"longqa": 0.2, "bm25-chunks": 0.3}),
               report("def2", {"longqa": 0.4}, ids=("q1", "q3")), "--systems", "longqa")
    assert done.returncode != 0 and "same questions" in done.stderr
    assert not (tmp_path / "merged.json").exists()
