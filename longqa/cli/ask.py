"""`longqa ask QUESTION`: a cited answer streamed from the refined context (exit 4: nothing relevant)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from longqa.cli.app import DbOption, JsonOption, app, console_err, db_from, print_json
from longqa.cli.ask_output import print_context, print_explain, print_sources
from longqa.cli.question import read_question
from longqa.cli.models import EmbedModelOption, LlmUrlOption, ModelOption, option_value
from longqa.errors import EXIT_NO_EVIDENCE, EXIT_OK, LongqaError
from longqa.ask.settings import DEFAULT as SEARCH
from longqa.ask.settings import ROUTER_MODES
from longqa.retrieve.hybrid import MODES

NO_EVIDENCE_MESSAGE = "longqa: nothing in the store is relevant to this question (no answer given)"


@app.command()
def ask(
    question: str = typer.Argument(
        ..., help="The question; '-' reads it from stdin. One that starts with '-' goes after `--`: longqa ask -- \"-x?\"",
    ),
    doc: Optional[List[str]] = typer.Option(None, "--doc", help="Only these documents (id, path or name); repeatable."),
    budget: int = typer.Option(2000, "--budget", min=50, help="Context tokens given to the generator."),
    max_steps: int = typer.Option(3, "--max-steps", min=0, help="Cap on expansion steps."),
    confidence: float = typer.Option(SEARCH.confidence, "--confidence", min=0.0, max=1.0,
                                     help="Search stops when evidence sufficiency reaches this (PECAN's t_p)."),
    patience: int = typer.Option(SEARCH.patience, "--patience", min=1,
                                 help="...after this many steps judged sufficient (PECAN's t_n)."),
    max_nodes: int = typer.Option(SEARCH.max_nodes, "--max-nodes", min=0, help="Cap on nodes the search adds."),
    max_seconds: float = typer.Option(SEARCH.max_seconds, "--max-seconds", min=0.0,
                                      help="Cap on seconds the search spends (the budget fills after it)."),
    router: str = typer.Option(SEARCH.router, "--router",
                               help="RDR2's router picks each search step: auto (only when the model's measured "
                                    "router skill is above chance) | on | off."),
    search: str = typer.Option(SEARCH.search, "--search",
                               help="tree | graph (the information-point graph of `ingest --graph`) | auto "
                                    "(graph when every candidate document has one, else tree)."),
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
) -> None:
    """Answer a question from the stored documents, with numbered citations."""
    question, warnings = read_question(question)
    for warning in warnings:
        console_err().print(f"longqa: warning: {warning}", markup=False, highlight=False)
    if search not in ("tree", "graph", "auto"):
        raise typer.BadParameter("choose from tree, graph, auto", param_hint="--search")
    if retrieval not in MODES:
        raise typer.BadParameter(f"choose from {', '.join(MODES)}", param_hint="--retrieval")
    if router not in ROUTER_MODES:
        raise typer.BadParameter(f"choose from {', '.join(ROUTER_MODES)}", param_hint="--router")
    from longqa import tokens
    from longqa.ask.lazy import warm_up
    from longqa.models.lazy import LazyModel
    from longqa.ask.pipeline import Pipeline
    from longqa.models.resolve import load_embedder, load_generator
    from longqa.store.documents import document_count, resolve

    warm_up(tokens.encoding)  # the budget is counted in cl100k tokens; load the ranks meanwhile
    store = db_from(db, readonly=True)
    if document_count(store) == 0:
        raise LongqaError("the store is empty: add documents with `longqa ingest PATH`")
    doc_ids = [resolve(store, ref)["id"] for ref in doc] if doc else None
    model, embed_model, llm_url = option_value(model), option_value(embed_model), option_value(llm_url)
    needs_generator = not (context_only and no_analysis)
    generator = LazyModel(lambda: load_generator(model, llm_url)) if needs_generator else None
    embedder = load_embedder(embed_model, llm_url) if retrieval != "bm25" else None
    pipeline = Pipeline(
        store, generator, embedder, budget=budget, max_steps=max_steps, use_analysis=not no_analysis,
        use_tree=not no_tree, use_expansion=not no_expansion, retrieval=retrieval,
        settings=SEARCH.but(confidence=confidence, patience=patience, max_nodes=max_nodes, max_seconds=max_seconds,
                            router=router, search=search),
    )
    if context_only:
        refined = pipeline.retrieve_context(question, doc_ids)
        _note_load(refined, generator)
        _report(refined, explain, settings=pipeline.settings_in_effect())
        if as_json:
            print_json(refined.as_json())
        elif refined.found:
            print_context(refined)
        raise typer.Exit(_exit_code(refined.found))

    stream = pipeline.stream(question, doc_ids)
    streaming = not (no_stream or as_json)
    out = sys.stdout
    if streaming and stream.refined.found:
        for piece in stream:
            out.write(piece)
            out.flush()
        out.write("\n")
    else:
        for _ in stream:
            pass
    result = stream.result
    assert result is not None
    _note_load(result.refined, generator)
    _report(result.refined, explain, result.grounding, pipeline.settings_in_effect())
    if as_json:
        print_json(result.as_json())
    elif result.refined.found:
        if not streaming:
            out.write((result.answer or "") + "\n")
        print_sources(result, _paged(store, result.passages))
    raise typer.Exit(_exit_code(result.refined.found))


def _paged(store, passages) -> set[int]:
    """The cited documents whose citations name pages (PDFs); the others are cited by section."""
    from longqa.ask.citations import cites_pages
    from longqa.store.documents import get_document

    return {doc_id for doc_id in {p.doc_id for p in passages} if cites_pages(get_document(store, doc_id))}


def _note_load(refined, generator) -> None:
    """The generator loads at its first use, inside some pipeline stage: say how long it took."""
    seconds = getattr(generator, "load_seconds", None)
    if seconds is not None:
        refined.timings["generator_load"] = seconds


def _report(refined, explain: bool, grounding=None, settings=None) -> None:
    """--explain on stderr; without it, still one stderr line per degradation (e.g. no vectors)."""
    if explain:
        print_explain(refined, grounding, settings)
        return
    for note in refined.notes:
        console_err().print(f"longqa: warning: {note}", markup=False, highlight=False)


def _exit_code(found: bool) -> int:
    if not found:
        console_err().print(NO_EVIDENCE_MESSAGE, markup=False, highlight=False)
        return EXIT_NO_EVIDENCE
    return EXIT_OK
