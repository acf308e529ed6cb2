"""The run report: what was run and where (so runs are comparable), and the measures averaged per
system overall, per dataset and per task; plus the tables printed for people."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from dataclasses import asdict
from pathlib import Path
from statistics import mean

from rich.console import Console
from rich.table import Table

from longqa import __version__
from longqa.eval.metrics import EVIDENCE_THRESHOLD

MEASURES = ("answer_recall", "evidence_recall", "page_hit", "doc_hit", "em", "f1", "choice_correct")
COSTS = ("context_tokens", "recall_tokens", "prompt_tokens", "generated_tokens", "model_calls", "embed_calls")
TIMES = ("total", "retrieve", "generate")

NOTES = [
    "Records with metric 'judge' (free-form answers) get the recall measures only: no judge model "
    "scores them, so no answer is generated for them and they have no EM/F1.",
    "Answer recall: a SQuAD-normalised gold answer occurs on word boundaries in the context the "
    "generator receives. Not measured for 'choice' records (their gold is an option's wording), for "
    "yes/no gold answers (verdicts, not spans), nor for records without gold answers (these also get "
    "no EM/F1).",
    f"Evidence recall: share of gold evidence passages covered; a passage is covered when at least "
    f"{EVIDENCE_THRESHOLD:.0%} of its normalised tokens (as a multiset) lie in one contiguous window "
    f"of the context as long as the passage.",
    "Page hit (FinanceBench): a context passage from the question's own document spans a gold "
    "evidence page. Doc hit: any context passage comes from the question's own document.",
    "full-context: the generator reads the first N tokens of the question's own document(s) "
    "(N = settings.full_context_cap); its recall columns are measured over the untruncated "
    "documents, i.e. the ceiling for any retrieval.",
    "over_budget counts questions whose context exceeded the run's token budget (full-context "
    "excluded: its cap is separate).",
    "Seconds are wall-clock on the machine below, which may have been shared with other work.",
]


def git_state() -> dict:
    repo = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit or None, "dirty": bool(dirty) if commit else None}


def machine() -> dict:
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "processor": platform.processor() or platform.machine()}


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(mean(values), 4) if values else None


def aggregate(records: list[dict], budget: int | None = None) -> dict:
    out: dict = {"n": len(records), "errors": sum(1 for r in records if r.get("error"))}
    if budget is not None:  # contexts the generator got that exceed the run's token budget
        out["over_budget"] = sum(1 for r in records if (r.get("context_tokens") or 0) > budget
                                 and r["system"] != "full-context")
    for name in MEASURES:
        values = [r.get(name) for r in records if r.get(name) is not None]
        out[name] = _mean(values)
        out[f"{name}_n"] = len(values)
    for name in COSTS:
        out[name] = _mean([r.get(name) for r in records])
    out["seconds"] = {name: _mean([r["seconds"].get(name) for r in records]) for name in TIMES}
    stages = sorted({k for r in records for k in r["seconds"] if k.startswith("stage.")})
    for stage in stages:
        out["seconds"][stage] = _mean([r["seconds"].get(stage) for r in records])
    return out


def _grouped(records: list[dict], key, budget: int) -> dict:
    groups: dict = {}
    for record in records:
        groups.setdefault(key(record), {}).setdefault(record["system"], []).append(record)
    return {name: {system: aggregate(rs, budget) for system, rs in systems.items()}
            for name, systems in groups.items()}


def build_report(records, settings, resources, questions, preparation: dict, elapsed: float,
                 results_path: Path, models: dict | None = None) -> dict:
    datasets: dict[str, int] = {}
    for question in questions:
        datasets[question.dataset] = datasets.get(question.dataset, 0) + 1
    by_system: dict = {}
    for record in records:
        by_system.setdefault(record["system"], []).append(record)
    return {
        "longqa": __version__,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "git": git_state(),
        "machine": machine(),
        "models": models if models is not None else resources.describe(),
        "protocol": settings.protocol,
        "budget": settings.budget,
        "generate": settings.generate,
        "full_context_cap": settings.full_context_cap,
        "systems": list(settings.systems),
        "questions": len(questions),
        "datasets": datasets,
        "settings": asdict(settings),
        "ingest": preparation,
        "elapsed_seconds": round(elapsed, 1),
        "results_file": str(results_path),
        "notes": NOTES,
        "overall": {system: aggregate(rs, settings.budget) for system, rs in by_system.items()},
        "by_dataset": _grouped(records, lambda r: r["dataset"], settings.budget),
        "by_task": _grouped(records, lambda r: f"{r['dataset']}/{r['task']}", settings.budget),
    }


# -- tables ----------------------------------------------------------------------------------------
COLUMNS = [
    ("system", None), ("n", "n"), ("ans rec", "answer_recall"), ("ev rec", "evidence_recall"),
    ("page hit", "page_hit"), ("doc hit", "doc_hit"), ("EM", "em"), ("F1", "f1"),
    ("choice acc", "choice_correct"), ("ctx tok", "context_tokens"), ("s/q", "seconds"),
]


def _cell(stats: dict, key: str) -> str:
    value = stats.get(key)
    if key == "seconds":
        total = value.get("total") if value else None
        return "–" if total is None else f"{total:.1f}"
    if value is None:
        return "–"
    if key in ("n",):
        return str(value)
    if key == "context_tokens":
        return f"{value:,.0f}"
    return f"{100 * value:.1f}"


def table(title: str, rows: dict, order: list[str]) -> Table:
    view = Table(title=title, title_justify="left", header_style="bold", box=None, pad_edge=False)
    for header, _ in COLUMNS:
        view.add_column(header, justify="left" if header == "system" else "right", no_wrap=True)
    for system in [s for s in order if s in rows] + [s for s in rows if s not in order]:
        stats = rows[system]
        view.add_row(system, *(_cell(stats, key) for _, key in COLUMNS[1:]))
    return view


def render(report: dict, console: Console) -> None:
    if not console.is_terminal:
        console.width = max(console.width, 132)  # a file or pipe gets whole rows, not ellipses
    order = report["systems"]
    models = report.get("models") or {}
    generator = (models.get("generator") or {}).get("name", "not loaded")
    console.print(
        f"longqa eval · {report['questions']} questions · protocol {report['protocol']} · budget "
        f"{report['budget']} · generator {generator} · full-context cap {report['full_context_cap']} · "
        f"{'generation on' if report['generate'] else 'recall only (--no-generate)'}",
        markup=False, highlight=False,
    )
    for dataset, rows in report["by_dataset"].items():
        console.print()
        console.print(table(f"{dataset} ({report['datasets'].get(dataset, 0)} questions)", rows, order))
    console.print()
    console.print(table("all datasets", report["overall"], order))
    console.print("\nRecall and accuracy columns in %; '–' = not applicable. Judge records: recall only.",
                  markup=False, highlight=False)
    for system, stats in report["overall"].items():
        if stats.get("over_budget"):
            console.print(f"note: {system} exceeded the {report['budget']}-token budget on "
                          f"{stats['over_budget']} of {stats['n']} questions", markup=False, highlight=False)
        if stats.get("errors"):
            console.print(f"note: {system} failed on {stats['errors']} of {stats['n']} questions "
                          "(see the results file)", markup=False, highlight=False)
