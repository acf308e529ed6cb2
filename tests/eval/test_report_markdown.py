"""The Markdown of an eval report (the README's generated tables) and its terminal rendering: a
stopped run's systems may have answered different numbers of questions, and the counts column
says so; yes/no and how/why questions are reported on their own lines."""

import io

from rich.console import Console

from longqa.eval.report import markdown, render

REPORT = {
    "questions": 60, "budget": 2000, "generate": True, "systems": ["longqa", "full-context"],
    "overall": {"longqa": {"n": 60, "f1": 0.28, "em": 0.2, "answer_recall": 0.55, "evidence_recall": 0.78,
                           "context_tokens": 1852, "seconds": {"total": 49.9}},
                "full-context": {"n": 22, "f1": 0.07, "em": 0.0, "answer_recall": 0.27, "evidence_recall": 0.92,
                                 "context_tokens": 5956, "seconds": {"total": 225.3}}},
    "by_dataset": {}, "commit": "f98dd9d", "date": "2026-11-29",
}


def test_counts_add_each_systems_number_of_questions():
    rows = [line for line in markdown(REPORT, datasets=False, counts=True).splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| system | questions | answer recall")
    assert rows[1].startswith("| longqa | 60 | 0.550") and rows[2].startswith("| full-context | 22 | 0.270")


def test_without_counts_the_table_is_as_before():
    header = next(line for line in markdown(REPORT, datasets=False).splitlines() if line.startswith("| system"))
    assert header.startswith("| system | answer recall")


FORMS = {"fact": {"longqa": {"n": 43, "f1": 0.339, "f1_n": 35}, "full-context": {"n": 15, "f1": 0.1, "f1_n": 12}},
         "yes/no": {"longqa": {"n": 4, "f1": 0.0, "f1_n": 1}},
         "how/why": {"longqa": {"n": 10, "f1": 0.153, "f1_n": 8}, "full-context": {"n": 4, "f1": 0.05, "f1_n": 3}}}


def test_forms_add_a_row_per_form_with_the_scored_count():
    rows = [line for line in markdown({**REPORT, "by_form": FORMS}, datasets=False, forms=True).splitlines()
            if line.startswith("| ")]
    assert "| form | longqa F1 (scored) | full-context F1 (scored) |" in rows
    assert "| fact | 0.339 (35) | 0.100 (12) |" in rows
    assert "| yes/no | 0.000 (1) | – |" in rows and "| how/why | 0.153 (8) | 0.050 (3) |" in rows
    assert not any(r.startswith("| form") for r in markdown({**REPORT, "by_form": FORMS}, datasets=False).splitlines())


def test_the_terminal_report_has_a_table_per_form():
    report = {**REPORT, "by_form": FORMS, "protocol": "corpus", "full_context_cap": 6000, "datasets": {}}
    out = io.StringIO()
    render(report, Console(file=out, width=200))
    text = out.getvalue()
    assert "yes/no questions" in text and "how/why questions" in text and "fact questions" in text
