"""The run report: what was run and where (so runs are comparable), and the measures averaged per
system overall, per dataset and per task; plus the tables printed for people."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from statistics import mean

from rich.console import Console
from rich.table import Table

from longqa import __version__
from longqa.eval.metrics import EVIDENCE_THRESHOLD

MEASURES = ("answer_recall", "evidence_recall", "page_hit", "doc_hit", "em", "f1", "choice_correct",
            "gold_in_top3", "sure", "sure_f1", "declined")
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


def command_line() -> str:
    """The command as typed, for the report: a run is only comparable with its flags (a server
    URL's user name and password shown as ***)."""
    from longqa.models.http import redact_url

    return shlex.join(["longqa", *(redact_url(arg) for arg in sys.argv[1:])])


def load_average() -> list[float] | None:
    """1, 5 and 15-minute load averages when the report is written: seconds and any figure that
    depends on them mean little on a busy machine, so the load travels with them."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


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
    git = git_state()
    return {
        "longqa": __version__,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        # What a reader checks first, at the top: the commit, which half of the questions (rules
        # are set on the tune half and reported on the other), whether answers were generated and
        # the budget; the command is added by the CLI.
        "commit": git["commit"],
        "half": settings.half,
        "git": git,
        "machine": machine(),
        "load": load_average(),
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
        # What each question asks for (score.question_form): yes/no and how/why on their own lines
        "by_form": _grouped(records, lambda r: r.get("form") or "fact", settings.budget),
        # Each answered question's result, for the benches that fit on a half (bench/refusal.py)
        "per_question": [{key: record.get(key) for key in PER_QUESTION if key in record} for record in records],
    }


# The fields of each record the report keeps (its answers and what they were decided from).
PER_QUESTION = ("system", "id", "dataset", "task", "metric", "form", "answer", "f1", "em", "answer_recall",
                "evidence_recall", "answer_mode", "declined", "declined_answer_mode", "confidence", "unsure",
                "alternatives", "signals")


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
    for form, rows in (report.get("by_form") or {}).items():  # fact, yes/no, how/why, option: each on its own
        console.print()
        console.print(table(f"{form} questions", rows, order))
    console.print("\nRecall and accuracy columns in %; '–' = not applicable. Judge records: recall only.",
                  markup=False, highlight=False)
    for system, stats in report["overall"].items():
        if stats.get("over_budget"):
            console.print(f"note: {system} exceeded the {report['budget']}-token budget on "
                          f"{stats['over_budget']} of {stats['n']} questions", markup=False, highlight=False)
        if stats.get("errors"):
            console.print(f"note: {system} failed on {stats['errors']} of {stats['n']} questions "
                          "(see the results file)", markup=False, highlight=False)


# -- Markdown summary (`longqa eval --markdown`, and the README's tables) ---------------------------------
DATASET_NAMES = {"financebench": "FinanceBench", "uda": "UDA", "leval": "L-Eval", "lciteeval": "L-CiteEval",
                 "hotpotqa": "HotpotQA", "musique": "MuSiQue"}
MARKDOWN_COLUMNS = [("answer recall", "answer_recall"), ("evidence recall", "evidence_recall"), ("F1", "f1"),
                    ("EM", "em"), ("context tokens", "context_tokens"), ("s/q", "seconds")]


def measure(stats: dict, key: str) -> float | None:
    """One measure of a system's aggregate, in the run report's layout or in the older hand-merged
    one (seconds per question as a plain number)."""
    if key == "seconds":
        seconds = stats.get("seconds")
        return seconds.get("total") if isinstance(seconds, dict) else stats.get("seconds_per_question")
    return stats.get(key)


def _figure(value: float | None, key: str) -> str:
    if value is None:
        return "–"
    if key in ("context_tokens", "n"):
        return f"{value:,.0f}"
    if key == "seconds":
        return f"{value:.1f}"
    return f"{value:.3f}"


def _short(commit: str) -> str:
    """A full hash as its usual 7 characters; a hand-written note ('88da483 (longqa rows); …') whole."""
    return commit[:7] if len(commit) == 40 and all(c in "0123456789abcdef" for c in commit) else commit


def _provenance(report: dict, source: str | None) -> str:
    commit = (report.get("git") or {}).get("commit") or report.get("commit")
    machine_info = report.get("machine")
    if isinstance(machine_info, dict):
        machine_info = f"{machine_info.get('cpus')} CPUs, {machine_info.get('processor')}"
    elif isinstance(machine_info, str):
        machine_info = machine_info.split(";")[0]
    load = report.get("load")
    if isinstance(load, list):
        load = "load average " + " / ".join(f"{x:.2f}" for x in load) + " (1, 5, 15 min, at the end)"
    parts = [f"command: `{report['command']}`" if report.get("command") else None,
             f"commit {_short(str(commit))}" if commit else "commit not recorded",
             (report.get("date") or "")[:10] or None, machine_info, load,
             f"report: [{Path(source).name}]({source})" if source else None]
    return " · ".join(p for p in parts if p)


def markdown(report: dict, *, title: str | None = None, systems: list[str] | None = None,
             source: str | None = None, overall: bool = True, datasets: bool = True, counts: bool = False,
             forms: bool = False) -> str:
    """The report as Markdown: a row per system (overall), a row per dataset with each system's
    headline measure (F1 when answers were generated, else answer recall), and where it came from.
    `counts` adds each system's number of questions (a partial run's systems may differ); `forms`
    a row per form of question (fact, yes/no, how/why, option) with each system's headline measure
    and how many questions it was scored on."""
    order = systems or list(report.get("systems") or report["overall"])
    order = [s for s in order if s in report["overall"]]
    generated = report.get("generate", any(measure(report["overall"][s], "f1") is not None for s in order))
    columns = [(h, k) for h, k in MARKDOWN_COLUMNS if generated or k not in ("f1", "em")]
    if counts:
        columns = [("questions", "n")] + columns
    budget = f", {report['budget']:,}-token budget" if report.get("budget") else ""
    summary = (f"{report['questions']} questions{budget}, "
               f"{'answers generated' if generated else 'recall only, no answers generated'}")
    lines = [f"**{title}** ({summary})" if title else summary + "."]
    if overall:
        lines += ["", "| system | " + " | ".join(h for h, _ in columns) + " |", "|---" * (len(columns) + 1) + "|"]
        for system in order:
            stats = report["overall"][system]
            lines.append(f"| {system} | " + " | ".join(_figure(measure(stats, k), k) for _, k in columns) + " |")
    if datasets:
        headline = "f1" if generated else "answer_recall"
        lines += ["", "| dataset (questions) | " + " | ".join(f"{s} {'F1' if generated else 'answer recall'}"
                                                              for s in order) + " |",
                  "|---" * (len(order) + 1) + "|"]
        for dataset, rows in report["by_dataset"].items():
            n = (report.get("datasets") or {}).get(dataset) or max((r.get("n") or 0) for r in rows.values())
            cells = [_figure(measure(rows[s], headline), headline) if s in rows else "–" for s in order]
            lines.append(f"| {DATASET_NAMES.get(dataset, dataset)} ({n}) | " + " | ".join(cells) + " |")
    if forms and report.get("by_form"):
        headline = "f1" if generated else "answer_recall"
        lines += ["", "| form | " + " | ".join(f"{s} {'F1' if generated else 'answer recall'} (scored)"
                                              for s in order) + " |", "|---" * (len(order) + 1) + "|"]
        for form, rows in report["by_form"].items():
            cells = [f"{_figure(measure(rows[s], headline), headline)} ({rows[s].get(headline + '_n') or 0})"
                     if s in rows else "–" for s in order]
            lines.append(f"| {form} | " + " | ".join(cells) + " |")
    lines += ["", _provenance(report, source), ""]
    return "\n".join(lines)
