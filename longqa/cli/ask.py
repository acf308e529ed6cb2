"""`longqa ask QUESTION`: a cited answer streamed from the refined context (exit 4: nothing relevant)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import List, Optional

import typer

from longqa.cli.app import DbOption, JsonOption, app, console_err, db_from, print_json
from longqa.cli.ask_output import answerer, print_context, print_declined, print_explain, print_sources
from longqa.cli.clock import since_start
from longqa.cli.draft import Draft
from longqa.cli.question import read_question
from longqa.cli.models import EmbedModelOption, EmbedUrlOption, LlmUrlOption, ModelOption, option_value
from longqa.cli.settings_options import SetOption, SettingsFileOption, settings_from
from longqa.errors import EXIT_NO_EVIDENCE, EXIT_OK, LongqaError
from longqa.names import for_terminal
from longqa.ask.settings import BUDGET_TOKENS, DEFAULTS, MAX_STEPS

SEARCH = DEFAULTS.search
from longqa.ask.settings import ROUTER_MODES
from longqa.retrieve.hybrid import MODES

NO_EVIDENCE_MESSAGE = "longqa: nothing in the store is relevant to this question (no answer given)"
NO_ANSWER_MESSAGE = "longqa: the passages found do not answer this question (exit 4)"


@app.command()
def ask(
    question: str = typer.Argument(
        ..., help="The question; '-' reads it from stdin. One that starts with '-' goes after `--`: longqa ask -- \"-x?\"",
    ),
    doc: Optional[List[str]] = typer.Option(None, "--doc", help="Only these documents (id, path or name); repeatable."),
    budget: int = typer.Option(BUDGET_TOKENS, "--budget", min=50, help="Tokens (cl100k) of passage text in the context; "
                               "its headings (document titles, section paths, pages) are not counted."),
    max_steps: int = typer.Option(MAX_STEPS, "--max-steps", min=0, help="Cap on expansion steps."),
    confidence: Optional[float] = typer.Option(None, "--confidence", min=0.0, max=1.0,
                                     help=f"Search stops when evidence sufficiency reaches this (PECAN's t_p) [default: {SEARCH.confidence}]."),
    patience: Optional[int] = typer.Option(None, "--patience", min=1,
                                           help=f"...after this many steps judged sufficient (PECAN's t_n) "
                                                f"[default: {SEARCH.patience}]."),
    max_nodes: Optional[int] = typer.Option(None, "--max-nodes", min=0,
                                            help=f"Cap on nodes the search adds [default: {SEARCH.max_nodes}]."),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", min=0.0,
                                                help=f"Cap on seconds the search spends (the budget fills after "
                                                     f"it) [default: {SEARCH.max_seconds}]."),
    router: Optional[str] = typer.Option(None, "--router",
                               help="RDR2's router picks each search step: auto (only when the model's measured "
                                    "router skill is above chance, the default) | on | off."),
    search: Optional[str] = typer.Option(None, "--search",
                               help="tree | graph (the information-point graph of `ingest --graph`) | auto "
                                    "(graph when every candidate document has one, else tree) [default: tree]."),
    context_only: bool = typer.Option(False, "--context-only", help="Print the cited context and stop."),
    no_stream: bool = typer.Option(False, "--no-stream", help="Print the answer when complete."),
    explain: bool = typer.Option(False, "--explain", help="Scores, R_q and the path taken, on stderr."),
    retrieval: str = typer.Option("hybrid", "--retrieval", help="hybrid | bm25 | dense."),
    no_analysis: bool = typer.Option(False, "--no-analysis", help="Skip query analysis (ablation)."),
    no_tree: bool = typer.Option(False, "--no-tree", help="Flat leaves, no tree refinement (ablation)."),
    no_expansion: bool = typer.Option(False, "--no-expansion", help="No step-wise expansion (ablation)."),
    db: Optional[Path] = DbOption,
    as_json: bool = JsonOption,
    model: Optional[str] = ModelOption,
    embed_model: Optional[str] = EmbedModelOption,
    llm_url: Optional[str] = LlmUrlOption,
    embed_url: Optional[str] = EmbedUrlOption,
    assignments: Optional[List[str]] = SetOption,
    settings_file: Optional[Path] = SettingsFileOption,
) -> None:
    """Answer a question from the stored documents, with numbered citations."""
    question, warnings = read_question(question)
    for warning in warnings:
        console_err().print(f"longqa: warning: {warning}", markup=False, highlight=False)
    if search is not None and search not in ("tree", "graph", "auto"):
        raise typer.BadParameter("choose from tree, graph, auto", param_hint="--search")
    if retrieval not in MODES:
        raise typer.BadParameter(f"choose from {', '.join(MODES)}", param_hint="--retrieval")
    if router is not None and router not in ROUTER_MODES:
        raise typer.BadParameter(f"choose from {', '.join(ROUTER_MODES)}", param_hint="--router")
    from longqa import tokens
    from longqa.cli.lazy import warm_up
    from longqa.models.resolve import lazy_generator
    from longqa.store.documents import document_count, resolve

    warm_up(tokens.encoding)  # the budget is counted in cl100k tokens; load the ranks meanwhile
    store = db_from(db, readonly=True)
    if document_count(store) == 0:
        raise LongqaError("the store is empty: add documents with `longqa ingest PATH`")
    doc_ids = [resolve(store, ref)["id"] for ref in doc] if doc else None
    model, embed_model, llm_url = option_value(model), option_value(embed_model), option_value(llm_url)
    embed_url = option_value(embed_url)
    given = {"confidence": confidence, "patience": patience, "max_nodes": max_nodes, "max_seconds": max_seconds,
             "router": router, "search": search}  # the search options named on the command line win
    # ... checked as --set and a settings file are (a range, a choice; NaN is no number)
    settings = settings_from(assignments, settings_file, options={f"search.{k}": v for k, v in given.items()})
    with _server_deadline(llm_url or embed_url):
        needs_generator = not (context_only and no_analysis)
        # Loaded only when a step calls it: --context-only on a question the rules analyse loads none.
        generator = lazy_generator(model, llm_url) if needs_generator else None
        embedder = _store_embedder(store, embed_model, embed_url) if retrieval != "bm25" else None
        try:
            _answer(question, doc_ids, store, generator, embedder, context_only=context_only,
                    prefetch=not context_only and not llm_url, no_stream=no_stream, explain=explain,
                    as_json=as_json, retrieval=retrieval, budget=budget, max_steps=max_steps,
                    no_analysis=no_analysis, no_tree=no_tree, no_expansion=no_expansion, settings=settings)
        finally:
            if generator is not None:
                generator.settle()


def _server_deadline(url: Optional[str]):
    """Every call to a named server during this question shares one deadline ($LONGQA_LLM_TIMEOUT)."""
    if not url:
        return contextlib.nullcontext()
    from longqa.models.http import question_deadline

    return question_deadline()


def _store_embedder(store, embed_model: Optional[str], embed_url: Optional[str]):
    """The embedder the user named, else the default; refused in one line when the store's vectors
    come from another (their cosines would not compare), naming both and `longqa reindex`."""
    from longqa.models.resolve import load_embedder
    from longqa.store.vectors import require_current

    embedder = load_embedder(embed_model, embed_url)
    require_current(store, embedder.name)
    return embedder


def _answer(question, doc_ids, store, generator, embedder, *, context_only, prefetch, no_stream, explain,
            as_json, retrieval, budget, max_steps, no_analysis, no_tree, no_expansion, settings) -> None:
    from longqa.ask.pipeline import Pipeline

    # Once something relevant is found an answer will need the generator: it is read from disk on
    # a thread while the search and the answer's focus run (a question about something absent
    # never loads it). Not for a server (its calls share this thread's deadline), and only after
    # the embedder has loaded: two llama.cpp loads at once are not safe.
    background = generator is not None and prefetch
    pipeline = Pipeline(
        store, generator, embedder, budget=budget, max_steps=max_steps, use_analysis=not no_analysis,
        use_tree=not no_tree, use_expansion=not no_expansion, retrieval=retrieval, settings=settings,
        on_relevant=generator.start if background else None,
    )
    startup = since_start()
    if context_only:
        refined = pipeline.retrieve_context(question, doc_ids)
        _note_times(refined, generator, startup)
        _report(refined, explain, settings=pipeline.settings_in_effect())
        if as_json:
            print_json(refined.as_json())
        elif refined.found:
            print_context(refined)
        raise typer.Exit(_exit_code(refined.found))

    out = sys.stdout
    streaming = not (no_stream or as_json)
    draft = Draft(out if streaming and out.isatty() else None)
    stream = pipeline.stream(question, doc_ids, on_draft=draft.show)
    if generator is not None:
        # llama.cpp's loader points stdout and stderr at /dev/null while it reads a model, for the
        # whole process: nothing may be written (or sys.stdout taken) before the load has ended.
        generator.settle()
    shown = streaming and stream.refined.found
    first_piece = None
    for piece in stream:
        if shown:
            draft.clear()
            out.write(for_terminal(piece, out))
            out.flush()
        if first_piece is None:
            first_piece = since_start()
    if shown:
        out.write("\n")
    result = stream.result
    assert result is not None
    draft.clear()
    _note_times(result.refined, generator, startup, first_piece, draft.first)
    settings_now = pipeline.settings_in_effect()
    _report(result.refined, explain, result.grounding, settings_now,
            answerer(generator, settings_now) if explain and generator is not None else None)
    if as_json:
        print_json(result.as_json())
    elif result.found:
        if not streaming:
            out.write(for_terminal(result.answer or "", out) + "\n")
        print_sources(result, _paged(store, result.passages))
    elif result.refined.found:
        if not streaming:
            out.write((result.answer or "") + "\n")
        print_declined(result, _paged(store, result.passages))
    if result.refined.found and not result.found:  # "The documents do not say." won: exit 4 as well
        console_err().print(NO_ANSWER_MESSAGE, markup=False, highlight=False)
        raise typer.Exit(EXIT_NO_EVIDENCE)
    raise typer.Exit(_exit_code(result.refined.found))


def _paged(store, passages) -> set[int]:
    """The cited documents whose citations name pages (PDFs); the others are cited by section."""
    from longqa.ask.answer.citations import cites_pages
    from longqa.store.documents import get_document

    return {doc_id for doc_id in {p.doc_id for p in passages} if cites_pages(get_document(store, doc_id))}


def _note_times(refined, generator, startup: float, first_piece: float | None = None,
                first_draft: float | None = None) -> None:
    """The timings a shell user waits by, counted from the process's start: `startup` (interpreter,
    imports, store, embedder) before the question's work begins, `first_draft` when a reader's
    first words were written (shown dimmed on a terminal before they are proven), `first_token`
    when the first answer piece was shown (or, not streaming, produced) and `total` now. The pipeline's own
    stage figures stay as they are. An in-process model adds `prompt_tokens_read` (prompt tokens it
    evaluated, those found in its KV cache or kept heads aside) and `prompt_reading` (their seconds). The generator (a LazyModel, or None) loads at its first use
    or on a thread (`generator_wait`: how long the answer waited for that load)."""
    timings = refined.timings
    timings["startup"] = startup
    if generator is not None and generator.load_seconds is not None:
        timings["generator_load"] = generator.load_seconds
        timings["generator_wait"] = generator.wait_seconds
        if getattr(generator, "read_tokens", None):  # llama.cpp in process: what reading its prompts cost
            timings["prompt_tokens_read"] = generator.read_tokens
            timings["prompt_reading"] = generator.read_seconds
    if first_draft is not None:
        timings["first_draft"] = first_draft
    if first_piece is not None:
        timings["first_token"] = first_piece
    else:
        timings.pop("first_token", None)
    timings["total"] = since_start()


def _report(refined, explain: bool, grounding=None, settings=None, answered_by: str | None = None) -> None:
    """--explain on stderr; without it, still one stderr line per degradation (e.g. no vectors)."""
    if explain:
        print_explain(refined, grounding, settings, answered_by)
        return
    for note in refined.notes:
        console_err().print(f"longqa: warning: {note}", markup=False, highlight=False)


def _exit_code(found: bool) -> int:
    if not found:
        console_err().print(NO_EVIDENCE_MESSAGE, markup=False, highlight=False)
        return EXIT_NO_EVIDENCE
    return EXIT_OK
