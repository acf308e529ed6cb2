"""`longqa eval QUESTIONS.jsonl`: measure longqa against baselines on evaluation questions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from longqa import config
from longqa.ask.settings import BUDGET_TOKENS, DEFAULTS, MAX_STEPS
from longqa.cli.settings_options import SetOption, SettingsFileOption, settings_from
from longqa.tunables import described
from longqa.cli.app import JsonOption, app, console_err, console_out, interactive, print_json
from longqa.cli.models import EmbedModelOption, LlmUrlOption, ModelOption, option_value
from longqa.eval import report as reporting
from longqa.eval.data import HALVES
from longqa.eval.runner import CORPORA, PROTOCOLS, EvalSettings, Runner
from longqa.structure.tree_source import MODES
from longqa.eval.systems import ALL_SYSTEMS, DEFAULT_SYSTEMS, Resources, make_system


class _BarProgress:
    """A progress bar with ETA on stderr (TTY only); warnings go to stderr either way."""

    def __init__(self, enabled: bool):
        self.console = console_err()
        self.bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("eta"), TimeRemainingColumn(), console=self.console, disable=not enabled, transient=True,
        )
        self.task = None

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

    def start(self, total: int) -> None:
        self.task = self.bar.add_task("eval", total=total)

    def status(self, text: str) -> None:
        if self.task is not None:
            self.bar.update(self.task, description=text)

    def advance(self, text: str) -> None:
        if self.task is not None:
            self.bar.update(self.task, advance=1, description=text)

    def warn(self, text: str) -> None:
        self.bar.console.print(f"longqa: warning: {text}", markup=False, highlight=False)


def _names(value: Optional[str], allowed: tuple[str, ...] | None, option: str) -> Optional[list[str]]:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if allowed is not None and n not in allowed]
    if unknown or not names:
        raise typer.BadParameter(f"unknown {', '.join(unknown) or 'empty list'}; choose from {', '.join(allowed or ())}",
                                 param_hint=option)
    return names


@app.command("eval")
def eval_command(
    questions: Path = typer.Argument(..., help="Questions file (unified JSONL; docs paths relative to it)."),
    protocol: str = typer.Option("corpus", "--protocol", help="corpus: ask each question of its dataset's "
                                 "whole corpus; single: only of its own documents."),
    systems: Optional[str] = typer.Option(None, "--systems", help=f"Comma-separated, from: {', '.join(ALL_SYSTEMS)} "
                                          f"(default {','.join(DEFAULT_SYSTEMS)})."),
    datasets: Optional[str] = typer.Option(None, "--datasets", help="Comma-separated dataset names (default all)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="At most N questions, round-robin over datasets."),
    seed: int = typer.Option(0, "--seed", help="Seed of the --limit sample."),
    half: str = typer.Option("all", "--half", help="all | tune | report: a stable half of the questions "
                             "(by a hash of their id); tune thresholds on one, report the other."),
    budget: int = typer.Option(BUDGET_TOKENS, "--budget", min=100, help="Context token budget of every system."),
    max_steps: int = typer.Option(MAX_STEPS, "--max-steps", min=1, help="longqa's expansion steps."),
    model: Optional[str] = ModelOption,
    embed_model: Optional[str] = EmbedModelOption,
    llm_url: Optional[str] = LlmUrlOption,
    no_generate: bool = typer.Option(False, "--no-generate", help="Recall only: build contexts, skip answers."),
    full_context_cap: int = typer.Option(6000, "--full-context-cap", min=100,
                                         help="Tokens of the document the full-context generator reads."),
    answer_tokens: int = typer.Option(32, "--answer-tokens", min=1, help="Longest generated answer."),
    corpus: str = typer.Option("selected", "--corpus", help="Corpus protocol's corpus per dataset: selected = "
                               "the documents the chosen questions name; file = those every question of the "
                               "file names; folder = every document in their folders."),
    structure: str = typer.Option("auto", "--structure", help="Ingest structure mode of longqa's stores "
                                  "(as `longqa ingest --structure`)."),
    work_dir: Optional[Path] = typer.Option(None, "--work-dir", help="Stores, chunk caches and results "
                                            "(default: <data dir>/eval)."),
    results: Optional[Path] = typer.Option(None, "--results", help="Per-question results JSONL to resume "
                                           "(default: under the work dir, named by the settings)."),
    fresh: bool = typer.Option(False, "--fresh", help="Discard earlier results for these settings."),
    stop_after: Optional[float] = typer.Option(None, "--stop-after", min=0.0, help="Minutes after which no "
                                               "further question is asked: the report covers those asked and "
                                               "says which were not (the same command again resumes)."),
    without_own: bool = typer.Option(False, "--without-own-docs", help="Ask each question of its dataset's "
                                     "documents without its own (corpus protocol): how often the answer "
                                     "stage says the documents do not say, where they do not."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON report to this file."),
    markdown: Optional[Path] = typer.Option(None, "--markdown", help="Also write a Markdown summary to this "
                                            "file: a row per system and per dataset, the command, commit, "
                                            "machine and load."),
    as_json: bool = JsonOption,
    assignments: Optional[List[str]] = SetOption,
    settings_file: Optional[Path] = SettingsFileOption,
) -> None:
    """Run systems over evaluation questions; print a table per dataset and a JSON report."""
    if protocol not in PROTOCOLS:
        raise typer.BadParameter(f"choose from {', '.join(PROTOCOLS)}", param_hint="--protocol")
    if structure not in MODES:
        raise typer.BadParameter(f"choose from {', '.join(MODES)}", param_hint="--structure")
    if corpus not in CORPORA:
        raise typer.BadParameter(f"choose from {', '.join(CORPORA)}", param_hint="--corpus")
    if half not in HALVES:
        raise typer.BadParameter(f"choose from {', '.join(HALVES)}", param_hint="--half")
    if without_own and protocol != "corpus":
        raise typer.BadParameter("needs the corpus protocol", param_hint="--without-own-docs")
    ask_settings = settings_from(assignments, settings_file)
    changed = {name: value for (name, value, _, _), (_, default, _, _) in
               zip(described(ask_settings), described(DEFAULTS)) if value != default}
    settings = EvalSettings(
        systems=_names(systems, ALL_SYSTEMS, "--systems") or list(DEFAULT_SYSTEMS),
        protocol=protocol, budget=budget, max_steps=max_steps, generate=not no_generate,
        full_context_cap=full_context_cap, answer_tokens=answer_tokens, corpus=corpus, structure=structure,
        datasets=_names(datasets, None, "--datasets"), limit=limit, seed=seed, half=half,
        without_own=without_own, stop_after=stop_after,
        settings={name: list(value) if isinstance(value, tuple) else value for name, value in changed.items()},
    )
    model, embed_model, llm_url = option_value(model), option_value(embed_model), option_value(llm_url)
    resources = Resources(model=model, embed_model=embed_model, llm_url=llm_url)
    work = (work_dir or config.data_dir() / "eval").expanduser()

    def factory(name: str):
        return make_system(name, resources, budget, max_steps, full_context_cap, ask_settings)

    with _BarProgress(interactive() and not as_json) as progress:
        runner = Runner(settings, resources, work, factory, progress,
                        model_ids={"model": model, "embed_model": embed_model, "llm_url": llm_url})
        report = runner.run(questions, results, fresh)
    report["command"] = reporting.command_line()
    if markdown:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(reporting.markdown(report, source=str(out) if out else None, forms=True), encoding="utf-8")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if as_json:
        print_json(report)
    else:
        reporting.render(report, console_out())
        console_err().print(f"per-question results: {report['results_file']}", markup=False, highlight=False)
