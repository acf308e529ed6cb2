"""The Markdown of an eval report (the README's generated tables): a stopped run's systems may have
answered different numbers of questions, and the counts column says so."""

from longqa.eval.report import markdown

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
