"""Every evaluation figure the READMEs state is pasted from a committed report, and `longqa eval
--markdown` writes the summary those tables are made of."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from tests.command import run
from tests.test_readme import section
from tests.eval.test_runner import questions_file  # noqa: F401  (the fixture)

REPO = Path(__file__).resolve().parents[1]


def _tables():
    spec = importlib.util.spec_from_file_location("readme_tables", REPO / "bench" / "readme_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_blocks_match_the_committed_reports():
    tables = _tables()
    assert tables.stale("README.md") == [] and tables.stale("eval/README.md") == []
    assert tables.stale("bench/RESULTS.md") == [], "bench/RESULTS.md's decisions table differs from decisions.json"
    missing = [p.name for p in (REPO / "eval").glob("*.json") if p.name not in tables.MEASURES]
    assert not missing, f"reports without a line in bench/readme_tables.py MEASURES: {missing}"


def test_a_figure_edited_by_hand_is_caught():
    tables = _tables()
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = tables.headline_block("answers")
    figure = re.search(r"\| 0\.\d{3} \|", block).group(0)
    edited = text.replace(block, block.replace(figure, "| 0.999 |", 1))
    assert edited != text
    assert tables.paste(edited, {"answers": block}) == text  # the check would rewrite it back


def test_the_evaluation_section_states_no_figure_outside_the_generated_blocks():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    prose = re.sub(r"<!-- generated: (\S+) -->.*?<!-- end: \1 -->", "", section(text, "What it measures"), flags=re.S)
    assert not re.findall(r"\b0\.\d+|\d+(?:\.\d+)? ?%", prose)


def test_every_headline_cites_a_committed_report_with_its_provenance():
    for _, path, *_ in _tables().HEADLINES:
        report = json.loads((REPO / path).read_text(encoding="utf-8"))
        commit = (report.get("git") or {}).get("commit") or report.get("commit")
        assert commit and report.get("command") and report.get("date") and report.get("machine"), path


def test_cli_writes_the_markdown_summary(questions_file, tmp_path):  # noqa: F811
    summary, out = tmp_path / "summary.md", tmp_path / "report.json"
    result = run("eval", questions_file, "--systems", "bm25-chunks,no-context", "--no-generate", "--limit", "3",
                 "--work-dir", tmp_path / "work", "--out", out, "--markdown", summary)
    assert result.returncode == 0, result.stderr
    text = summary.read_text(encoding="utf-8")
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["command"].startswith("longqa eval ") and "--markdown" in report["command"]
    assert len(report["load"]) == 3
    assert "| bm25-chunks |" in text and "| no-context |" in text and "| alpha (" in text
    recall = report["overall"]["bm25-chunks"]["answer_recall"]
    assert f"| bm25-chunks | {recall:.3f} |" in text
    assert "recall only" in text and "F1 |" not in text.splitlines()[2]  # no answer columns without answers
    assert f"command: `{report['command']}`" in text and "load average" in text and "report.json" in text
