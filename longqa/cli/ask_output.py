"""How `ask` prints: sources after the answer, the context for --context-only, --explain tables."""

from __future__ import annotations

import sys

from rich.table import Table

from longqa.ask.answer.citations import source_lines
from longqa.ask.answer.grounded import quote_of
from longqa.ask.result import AskResult, Refined
from longqa.names import for_terminal
from longqa.ask.settings import AskSettings
from longqa.cli.app import console_err


def print_sources(result: AskResult, paged: set[int] | None = None) -> None:
    """The quotes the answer rests on (verbatim, with where they are), then, when the answer is
    unsure, the next candidates with theirs, then the sources; pages are named for the documents
    in `paged` (every document when None), the rest by section alone."""
    out = sys.stdout
    for quote in result.quotes:
        _print_quote(quote, paged)
    grounding = result.grounding
    if grounding is not None and grounding.unsure and grounding.confidence is not None:
        out.write(f"\nUnsure (confidence {grounding.confidence:.2f}). Other candidates:\n")
        _print_candidates(grounding.alternatives, paged)
    out.write("\nSources:\n")
    for line in source_lines(result.passages, result.cited, paged=paged):
        out.write(for_terminal(f"  {line}\n", out))
    out.flush()


def print_declined(result: AskResult, paged: set[int] | None = None) -> None:
    """After "The documents do not say.": the nearest candidates the answer stage found, with their
    quotes, so a reader can judge for themselves (none when it found nothing at all)."""
    grounding = result.grounding
    shown = [c for c in (grounding.alternatives if grounding is not None else []) if c.sentence is not None]
    if not shown:
        return
    sys.stdout.write("\nNearest candidates (not shown as the answer):\n")
    _print_candidates(shown, paged)
    sys.stdout.flush()


def _print_candidates(candidates, paged: set[int] | None) -> None:
    """Each candidate with its probability, then the sentence it stands in and where."""
    out = sys.stdout
    for candidate in candidates:
        quote = quote_of(candidate.sentence)
        out.write(for_terminal(f"  {candidate.text} [{quote.passage.n}] ({candidate.probability:.2f})\n", out))
        _print_quote(quote, paged, indent="  ")


def _print_quote(quote, paged: set[int] | None, indent: str = "") -> None:
    p = quote.passage
    where = " > ".join(part for part in (p.doc, quote.section) if part)
    if paged is None or p.doc_id in paged:
        where = f"{where}, {quote.pages}"
    text = " ".join(quote.text.split())
    shown = f"\n{indent}  \u201c{text}\u201d\n{indent}    [{p.n}] {where}\n"
    sys.stdout.write(for_terminal(shown, sys.stdout))


def print_context(refined: Refined) -> None:
    """The numbered passages under their documents' titles (context.render), for piping elsewhere."""
    sys.stdout.write(for_terminal(refined.context, sys.stdout) + "\n")
    sys.stdout.flush()


def answerer(generator, settings: AskSettings | None) -> str:
    """Who answers and whether it may decline, in one line (`ask --explain`): a reader (its chat
    prompt, or the chat template of a GGUF no profile declares, its decisions unmeasured) or a
    chooser (a completion model whose candidates the rules rank)."""
    from longqa.ask.answer import reader_confidence
    from longqa.ask.answer.outcome import declining_below
    from longqa.models import profiles

    name = getattr(generator, "name", None) or "?"
    if not profiles.is_reader(generator):
        return f"answered by: {name}, a chooser (completion prompt; the ranker picks among its candidates)"
    profile = profiles.profile_of(generator)
    setting = settings.answer.reader_decline if settings is not None else -1.0
    threshold = declining_below(setting, reader_confidence.decline_below(profile.name) if profile else None)
    if profile is None or reader_confidence.table_of(profile.name) is None:
        declines = "no fitted confidence, so it never declines on confidence"
    elif threshold:
        source = "answer.reader_decline" if setting >= 0 else "chosen for its confidence table"
        declines = f"declines below calibrated confidence {threshold:g} ({source})"
    else:
        declines = "confidence fitted; declining on it is off (no threshold chosen, or answer.reader_decline 0)"
    how = "its own chat prompt" if profile is not None else "the GGUF's chat template, its decisions unmeasured"
    return f"answered by: {name}, a reader ({how}); {declines}"


def print_explain(refined: Refined, grounding=None, settings: AskSettings | None = None,
                  answered_by: str | None = None) -> None:
    """Per passage BM25 / dense / fused scores, then the analysis and the steps, who answered
    (`answerer`), then the settings in effect (`name = value`, one per line); all on stderr."""
    err = console_err()
    a = refined.analysis
    evidence = "n/a" if a.evidence is None else f"{a.evidence:.2f}"
    err.print(
        f"R_q {a.scope:.2f}  type {a.type} ({a.decided_by.get('type', '?')})  pattern {a.pattern}  "
        f"evidence p(yes) {evidence}", markup=False, highlight=False,
    )
    e = refined.evidence
    cosine = "n/a" if e.max_cosine is None else f"{e.max_cosine:.2f}"
    err.print(
        f"relevant: {'yes' if e.found else 'no'} (term coverage {e.coverage:.2f}, best cosine {cosine}"
        + (f", missing words: {', '.join(e.missing)}" if e.missing else "") + ")",
        markup=False, highlight=False,
    )
    for note in refined.notes + refined.explained:
        err.print(f"note: {note}", markup=False, highlight=False)
    if refined.passages:
        table = Table(box=None, header_style="bold", title=f"context: {refined.context_tokens} of "
                      f"{refined.budget} tokens", title_justify="left")
        for column in ("n", "bm25", "dense", "fused", "score", "tokens", "pages", "section"):
            table.add_column(column, justify="right" if column not in ("section", "pages") else "left")
        for p in refined.passages:
            best = max((refined.fused[i] for i in p.leaf_ids if i in refined.fused),
                       key=lambda f: f.score, default=None)
            raw_b = "-" if best is None or best.bm25_raw is None else f"{best.bm25_raw:.2f}"
            raw_d = "-" if best is None or best.dense_raw is None else f"{best.dense_raw:.2f}"
            fused = "-" if best is None else f"{best.score:.2f}"
            table.add_row(str(p.n), raw_b, raw_d, fused, f"{p.score:.2f}", str(p.tokens), p.pages,
                          f"{p.doc} > {p.section}" if p.section else p.doc)
        err.print(table)
    if grounding is not None and grounding.candidates:
        confidence = "" if grounding.confidence is None else f" (confidence {grounding.confidence:.2f})"
        err.print(f"answer {grounding.mode}{confidence}:", markup=False, highlight=False)
        for c in grounding.candidates[:5]:
            line = f"  {c['text'][:60]!r} score {c['score']:.2f}"
            if "probability" in c:
                line += f" p {c['probability']:.2f} [{c.get('structure', '')}]"
            shares = c.get("contributions") or {}
            if shares:  # what each feature added to the ranker's final score
                line += "  " + ", ".join(f"{name} {value:+.2f}" for name, value in list(shares.items())[:6])
            elif "model" in c:
                line += f" (model {c['model']:.2f})"
            err.print(line, markup=False, highlight=False)
    for step in refined.steps:
        detail = {k: v for k, v in step.details.items() if k != "added"}
        added = len(step.details.get("added", []))
        err.print(f"step {step.number}: {step.action} (+{added} leaves) {detail}", markup=False, highlight=False)
    timings = "  ".join(f"{k} {v}" if isinstance(v, int) else f"{k} {v:.2f}s" for k, v in refined.timings.items())
    err.print(f"timings: {timings}", markup=False, highlight=False)
    if answered_by:
        err.print(answered_by, markup=False, highlight=False)
    if settings is not None:
        err.print("settings:", markup=False, highlight=False)
        for line in settings.lines():
            err.print(f"  {line}", markup=False, highlight=False)
