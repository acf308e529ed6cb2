"""`longqa ingest PATH...`"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task
from rich.table import Column
from rich.text import Text

from longqa.cli.app import DbOption, JsonOption, app, console_err, db_from, interactive, print_json
from longqa.config import Limits
from longqa.errors import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL, LongqaError
from longqa.ingest import IngestResult, configured_ingestor, expand_inputs
from longqa.parse.ocr import MODES as OCR_MODES
from longqa.names import as_text, shown
from longqa.structure.tree_source import MODES
from longqa.cli.models import EmbedModelOption, EmbedUrlOption, LlmUrlOption, ModelOption, option_value
from longqa.models.lazy import LazyModel
from longqa.models.profiles import STRUCTURER
from longqa.models.resolve import load_embedder, load_generator
from longqa.store.vectors import require_current


DEFAULT_LIMITS = Limits()
# An ingest is batch work beside whatever the user does meanwhile, an `ask` above all: both want
# every core, and llama.cpp's threads stall when another process holds one (bench/RESULTS.md, "A
# fresh `ask` beside a running `ingest`"). At a lower priority the ingest takes what an `ask`
# leaves; on an idle machine nothing changes. 10 was measured against 0, not swept: an `ask` beside
# the ingest took 1.05x its idle time against 2.41x (bench/ask_beside_ingest.py).
DEFAULT_NICE = 10


def lower_priority(by: int) -> None:
    """Lower this process's CPU priority by `by` steps (Unix nice); a no-op where the system has none."""
    if by > 0 and hasattr(os, "nice"):
        try:
            os.nice(by)
        except OSError:  # not permitted here: run at the priority we have
            pass


@app.command()
def ingest(
    paths: List[str] = typer.Argument(..., help="Files, directories, globs; '-' reads paths from stdin."),
    force: bool = typer.Option(False, "--force", help="Re-ingest files even when unchanged."),
    structure: str = typer.Option("auto", "--structure", help=f"Structure source: {'|'.join(MODES)}."),
    db: Optional[Path] = DbOption,
    as_json: bool = JsonOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
    model: Optional[str] = ModelOption,
    embed_model: Optional[str] = EmbedModelOption,
    llm_url: Optional[str] = LlmUrlOption,
    embed_url: Optional[str] = EmbedUrlOption,
    summaries: Optional[bool] = typer.Option(
        None, "--summaries/--no-summaries",
        help="One-sentence section summaries (default: for model-structured documents of at most 50 sections).",
    ),
    max_mb: float = typer.Option(DEFAULT_LIMITS.max_mb, "--max-mb", min=0, help="Largest file in MB (0: no limit)."),
    max_pages: int = typer.Option(DEFAULT_LIMITS.max_pages, "--max-pages", min=0, help="Most PDF pages (0: no limit)."),
    max_line_chars: int = typer.Option(
        DEFAULT_LIMITS.max_line_chars, "--max-line-chars", min=0,
        help="Longest line of a text or markdown file, in characters (0: no limit).",
    ),
    max_headings: int = typer.Option(
        DEFAULT_LIMITS.max_headings, "--max-headings", min=0, help="Most headings in one document (0: no limit)."
    ),
    llm_max_tokens: int = typer.Option(
        DEFAULT_LIMITS.llm_max_tokens, "--llm-max-tokens", min=0,
        help="Longest document (tokens) the local model divides into sections; longer ones are stored flat (0: no limit).",
    ),
    graph: bool = typer.Option(
        False, "--graph", help="Also build each document's information-point graph (for `ask --search graph`).",
    ),
    edges: str = typer.Option(
        "attention", "--edges", help="Graph edges: attention (local model) | cosine (embedding proxy; always with --llm-url).",
    ),
    points: str = typer.Option(
        "auto", "--points",
        help="Graph points: extractive (key sentences) | generated (model bullets, kept when faithful) | "
             "auto (generated with -m or --llm-url, else extractive).",
    ),
    allow_damaged: bool = typer.Option(
        False, "--allow-damaged", help="Store what can be read of a PDF that MuPDF had to repair (default: it fails).",
    ),
    follow_links: bool = typer.Option(
        False, "--follow-links", help="In a directory, also ingest links to files outside it (default: reported, skipped).",
    ),
    nice: int = typer.Option(
        DEFAULT_NICE, "--nice", min=0, max=19,
        help="Lower this ingest's CPU priority by N (0: unchanged), so that an `ask` meanwhile keeps its speed.",
    ),
    ocr: str = typer.Option(
        DEFAULT_LIMITS.ocr, "--ocr",
        help="Read PDF pages by OCR: auto (pages without a text layer) | always (every page) | never.",
    ),
    embed: bool = typer.Option(
        True, "--embed/--no-embed",
        help="Store documents searchable by BM25 at once and leave their leaf vectors to `longqa reindex` "
             "(default: embed as they are stored).",
    ),
) -> None:
    """Parse documents into trees and store them (unchanged files are skipped)."""
    lower_priority(nice)
    if structure not in MODES:
        raise typer.BadParameter(f"choose from {', '.join(MODES)}", param_hint="--structure")
    if edges not in ("attention", "cosine"):
        raise typer.BadParameter("choose from attention, cosine", param_hint="--edges")
    if points not in ("auto", "extractive", "generated"):
        raise typer.BadParameter("choose from auto, extractive, generated", param_hint="--points")
    if ocr not in OCR_MODES:
        raise typer.BadParameter(f"choose from {', '.join(OCR_MODES)}", param_hint="--ocr")
    if graph and not embed:  # every graph node is scored by its vector, the leaves' stored ones too
        raise typer.BadParameter("needs the leaf vectors that --no-embed leaves out; run `longqa reindex`, "
                                 "then `longqa ingest --graph`", param_hint="--graph")
    if paths == ["-"]:
        paths = read_paths(sys.stdin)
    files, failed = expand_inputs(paths, follow_links=follow_links)
    store = db_from(db)
    # Loaded at the first document that needs vectors (or, even with --no-embed, the model
    # structurer's topic shifts); refuses a store built with another embedder.
    embed_model, embed_url, llm_url = option_value(embed_model), option_value(embed_url), option_value(llm_url)
    embedder = LazyModel(lambda: load_embedder(embed_model, embed_url), on_load=lambda e: require_current(store, e.name))
    # The generator loads only for a document without headings (llm/auto) or with untitled sections.
    # It is the structurer profile (models/profiles.py) unless -m or $LONGQA_MODEL names another.
    generator = lambda: load_generator(option_value(model) or STRUCTURER.name, llm_url)  # noqa: E731
    limits = Limits(max_mb=max_mb, max_pages=max_pages, max_line_chars=max_line_chars,
                    max_headings=max_headings, llm_max_tokens=llm_max_tokens, allow_damaged=allow_damaged,
                    ocr=ocr)
    ingestor = configured_ingestor(store, generator, embedder, structure=structure, summaries=summaries,
                                   force=force, limits=limits, embed=embed)
    err = console_err()
    show_progress = interactive() and not quiet and not as_json
    if graph:
        ingestor.graph = make_graph_builder(store, embedder, generator, edges, points, option_value(model),
                                            option_value(llm_url))
    results = list(failed)
    for result in failed:  # on stderr with --json too: stdout keeps its one JSON document
        err.print(failure_line(result), markup=False, highlight=False)
    stopped: LongqaError | None = None
    stopped_at = ""  # the file the batch stopped at
    with _progress(show_progress) as progress:
        tally = {"pages": 0, "worked": 0, "worked_seconds": 0.0}  # what the columns below show
        task = progress.add_task("ingest", total=len(files), unit="files", **tally)

        def count_pages(pages: int) -> None:  # as each file is parsed, before its embedding
            tally["pages"] += pages
            progress.update(task, **tally)

        ingestor.on_pages = count_pages
        current: dict[str, Path | None] = {"path": None}

        def page_read(by_ocr: bool) -> None:  # a scan's pages take seconds each: say what is going on
            if by_ocr and current["path"] is not None:
                progress.update(task, description=_short(current["path"], NAME_WIDTH - 6) + " (OCR)")

        ingestor.on_page = page_read
        if ingestor.graph is not None:  # a second bar: the graph's input tokens, with its own ETA
            graph_task = progress.add_task("  graph", total=None, unit="tokens", visible=False)

            def graph_progress(done: int, expected: int) -> None:
                progress.update(graph_task, completed=done, total=expected, visible=done < expected)

            ingestor.graph.on_progress = graph_progress
        for path in files:
            if stopped is not None:  # each file the batch did not reach is still named, and said not stored
                # Only the problem: "the document is stored" in the stopping file's error is true of it alone.
                why = getattr(stopped, "problem", None) or str(stopped)
                result = IngestResult(path=as_text(str(path)), status="failed",
                                      error=f"not stored: the batch stopped at {shown(stopped_at)} ({shown(why)})")
            else:
                current["path"] = path
                progress.update(task, description=_short(path))
                try:
                    result = ingestor.ingest(path)
                except LongqaError as exc:  # the store or a model: no later file could succeed
                    if not any(r.status != "failed" for r in results):
                        raise  # nothing done: the command failed (exit 1), as one error line
                    stopped, stopped_at = exc, as_text(str(path))
                    result = IngestResult(path=as_text(str(path)), status="failed", error=shown(exc))
            results.append(result)
            if result.status == "failed":
                progress.console.print(failure_line(result), markup=False, highlight=False)
            for warning in result.warnings:
                progress.console.print(f"longqa: {shown(result.path)}: warning: {shown(warning)}",
                                       markup=False, highlight=False)
            structurer = ingestor.llm_structurer
            if result.structure == "llm" and result.status != "skipped" and structurer and not quiet:
                report = structurer.report  # what dividing it with the model cost
                kind = "a collection of articles, one section each" if report.collection else "running text"
                progress.console.print(
                    f"{shown(result.path)}: divided by the local model into {report.sections} sections "
                    f"and {report.subsections} subsections, read as {kind} ({report.input_tokens:,} tokens, "
                    f"{report.model_calls} model calls, {report.seconds:.1f} s)",
                    markup=False, highlight=False,
                )
            if not _already_done(result):
                tally["worked"] += 1
                tally["worked_seconds"] += result.seconds
            progress.update(task, advance=1, **tally)
    if embed and embedder.is_loaded and any(r.status in ("added", "updated") for r in results):
        _map_vectors(store, embedder.loaded.name, err)
    n_failed = sum(1 for r in results if r.status == "failed")
    without_vectors = sum(r.leaves_without_vectors for r in results)
    if as_json:
        print_json({"documents": [r.as_dict() for r in results], "failed": n_failed,
                    "leaves_without_vectors": without_vectors})
    elif not quiet:
        counts = {s: sum(1 for r in results if r.status == s) for s in ("added", "updated", "skipped", "failed")}
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "nothing to ingest"
        read = sum(len(r.ocr_pages) for r in results if r.status in ("added", "updated"))
        if read:
            summary += f" ({read:,} page{'s' if read != 1 else ''} read by OCR)"
        err.print(summary)
        if without_vectors:
            leaves = "1 leaf is" if without_vectors == 1 else f"{without_vectors:,} leaves are"
            err.print(f"{leaves} stored without vectors, so BM25 alone finds them: `longqa reindex` embeds them",
                      markup=False, highlight=False)
    raise typer.Exit(exit_code(results))


def _map_vectors(store, model: str, err) -> None:
    """Write the memory-mapped vectors file beside the store now, while the user waits for the
    ingest anyway: the first `ask` after it would write it otherwise (14 s and 1.7 GB at a million
    leaves). The store holds every vector already, so a failure here only leaves that to the ask."""
    from longqa.store.vectors import load_vectors

    try:
        load_vectors(store, model)
    except (OSError, LongqaError) as exc:
        err.print(f"longqa: warning: the vectors file was not written ({shown(str(exc))}); "
                  "the next ask writes it", markup=False, highlight=False)


def make_graph_builder(store, embedder, generator, edges: str, points: str, model: str | None,
                       llm_url: str | None):
    """The graph builder: attention edges from a local generator, the cosine proxy for a server;
    generated points for a model the user chose (the default's are not faithful enough)."""
    from longqa.graph.build import GraphBuilder
    from longqa.graph.settings import DEFAULT

    if points == "auto":
        points = "generated" if (model or llm_url) else "extractive"
    attention = edges == "attention" and not llm_url
    return GraphBuilder(store, embedder, generator, DEFAULT.but(edges="attention" if attention else "cosine",
                                                                points=points))


def exit_code(results: list[IngestResult]) -> int:
    """0: nothing failed; 3: some inputs failed, others were stored or are unchanged; 1: every
    input failed, so nothing was done."""
    failed = sum(1 for r in results if r.status == "failed")
    if not failed:
        return EXIT_OK
    return EXIT_PARTIAL if failed < len(results) else EXIT_ERROR


def failure_line(result: IngestResult) -> str:
    """`longqa: NAME: reason` on one line, the name escaped (see longqa.names)."""
    return f"longqa: {shown(result.path)}: {shown(result.error)}"


def read_paths(stream) -> list[str]:
    """Paths from stdin, one per line, as bytes where possible so any file name survives."""
    raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8", "surrogateescape")
    return [os.fsdecode(line.strip()) for line in raw.splitlines() if line.strip()]


NAME_WIDTH = 18  # the file name's share of the progress line: 80 columns hold it, a bar and the figures


def _short(path: Path, width: int = NAME_WIDTH) -> str:
    name = shown(path.name)
    return name if len(name) <= width else name[:width - 3] + "..."


def _already_done(result: IngestResult) -> bool:
    """Stored by an earlier run, nothing left to do: such files take no time, so they do not count
    toward the time a file takes (a resumed batch skips its first files in a blink)."""
    return result.status == "skipped" and not result.embedded and result.graph != "built"


def eta_seconds(remaining: int, worked: int, worked_seconds: float) -> float | None:
    """Time left for `remaining` files at the mean time of the files this run had to work on;
    None before the first of them is done."""
    if remaining <= 0:
        return 0.0
    if worked <= 0:
        return None
    return remaining * worked_seconds / worked


def clock(seconds: float | None) -> str:
    """h:mm:ss, or -:--:-- when not known yet."""
    if seconds is None:
        return "-:--:--"
    whole = int(seconds + 0.5)
    return f"{whole // 3600}:{whole % 3600 // 60:02}:{whole % 60:02}"


def pages_text(pages: int, elapsed: float | None) -> str:
    """Pages parsed by this run and their rate over its whole time so far."""
    rate = pages / elapsed if elapsed else 0.0
    shown_rate = f"{rate:.1f}" if rate < 10 else f"{rate:.0f}"
    return f"{pages:,} pages, {shown_rate} pages/s"


class _NameColumn(ProgressColumn):
    """The file being read, as written (not read as markup), on one line; on a narrow terminal it
    is cut short before the figures are."""

    def __init__(self) -> None:
        super().__init__(table_column=Column(max_width=NAME_WIDTH))

    def render(self, task: Task) -> Text:
        return Text(task.description, no_wrap=True, overflow="ellipsis")


class _BatchColumn(ProgressColumn):
    """Files done/total, pages and pages/s (recomputed at each refresh) and the ETA from the files
    this run worked on (see eta_seconds), as one unbroken text. The graph's bar shows its tokens
    and rich's estimate from them instead."""

    def __init__(self) -> None:
        super().__init__(table_column=Column(no_wrap=True))

    def render(self, task: Task) -> Text:
        done = f"{int(task.completed):,}/{int(task.total or 0):,} {task.fields['unit']}"
        if "worked" not in task.fields:
            return Text(f"{done}, ETA {clock(task.time_remaining)}", style="progress.remaining")
        remaining = int((task.total or 0) - task.completed)
        eta = eta_seconds(remaining, task.fields["worked"], task.fields["worked_seconds"])
        return Text(f"{done}, {pages_text(task.fields['pages'], task.elapsed)}, ETA {clock(eta)}",
                    style="progress.remaining")


def _progress(enabled: bool, console: Console | None = None) -> Progress:
    """One line for the batch: current file, bar, files done/total, pages, pages/s, ETA."""
    return Progress(
        _NameColumn(),
        BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=3)),
        _BatchColumn(),
        console=console or console_err(),
        disable=not enabled,
        transient=True,
        expand=True,  # the bar takes what the name and the figures leave of the line
    )
