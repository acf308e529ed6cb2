"""Structure a document that has no headings of its own with the local model.

The document is cut into paragraph units and read in overlapping windows. For each window an
outline is written in the markup of `markup.py` (sections with titles, `<br>`, `<skip>`), parsed,
its anchors mapped back onto the text, and checked to cover the window's units exactly once, in
order. The windows' section starts are merged, the tree is built from them, and the tree is
checked to cover the whole body; any failure returns None so the caller falls back to flat.

Two decoders write the window outlines; both produce text of the window's grammar:
- "stepwise" (default): the anchors are fixed text, so they are written directly, and the model is
  asked only where the grammar leaves a choice: where sections start (scored per gap from
  sentence-embedding similarity and/or the model's probability of closing the section there) and
  what each is called (a short title prompt over the section's text). Generated tokens are the
  titles only, so a 270M model on 2 cores structures ~1,000 tokens in seconds.
- "grammar": one grammar-constrained completion per window (the model writes every token).
  Simple and server-friendly, but llama-cpp-python checks the whole 262k vocabulary against the
  grammar at each step, and the 270M base model places sections no better than chance.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from longqa.models.base import Embedder, Generator
from longqa.models.counting import CountingGenerator
from longqa.models.lazy import model_of
from longqa.models.window import PromptTooLong
from longqa.parse.blocks import ParsedDocument
from longqa.store.cache import LlmCache, cached_complete, cached_json
from longqa.structure.boundaries import choose_gaps, depth_scores, similarity_curve, split_oversized, zscore
from longqa.structure.markup import (
    TITLE_CHARS, MarkupError, Part, WordIndex, anchor, map_entries, parse, render, window_grammar,
)
from longqa.structure.outline_prompt import EXAMPLE_TITLES, outline_prompt
from longqa.structure.titles import generate_title
from longqa.structure.tree import Node
from longqa.structure.units import (
    SectionStart, Unit, build_sections, coverage_problem, merge_windows, owned_range, paragraph_units,
    plan_windows,
)

DECODERS = ("stepwise", "grammar")


@dataclass
class StructureOptions:
    k: int = 4  # words kept on each side of <skip>
    unit_min_tokens: int = 80  # shorter blocks join their neighbour to make one unit
    unit_max_tokens: int = 300  # longer blocks are split at sentence ends
    window_tokens: int = 1500  # document tokens per window
    overlap_units: int = 2
    min_section_tokens: int = 250
    max_section_tokens: int = 2500
    model_weight: float | None = None  # weight of the model's section-close score; None: 1 without embedder, else 0
    decoder: str = "stepwise"
    subsections: bool = False  # grammar decoder: let the model open subsections
    max_leaf_tokens: int = 300


@dataclass
class StructureReport:
    valid: bool = False
    reason: str = ""
    units: int = 0
    windows: int = 0
    sections: int = 0
    input_tokens: int = 0  # cl100k tokens of the body
    generated_tokens: int = 0  # generator tokens produced by complete()
    markup_tokens: int = 0  # generator tokens of the outlines (what LongRefiner's model writes)
    model_calls: int = 0
    seconds: float = 0.0
    generator_seconds: float = 0.0  # of `seconds`, spent in the generator
    embedder_seconds: float = 0.0  # of `seconds`, spent embedding units
    outlines: list[str] = field(default_factory=list)


class LlmStructurer:
    """The `LlmStructurer` callable of choose.py: ParsedDocument → tree, or None to fall back."""

    def __init__(
        self,
        generator: Generator | Callable[[], Generator],
        cache: LlmCache | None = None,
        embedder: Embedder | None = None,
        options: StructureOptions | None = None,
    ):
        self._generator_source = generator
        self._counting: CountingGenerator | None = None
        self.cache = cache
        self.embedder = embedder
        self.options = options or StructureOptions()
        if self.options.decoder not in DECODERS:
            raise ValueError(f"unknown decoder {self.options.decoder!r}; choose from {', '.join(DECODERS)}")
        self.report = StructureReport()

    @property
    def generator(self) -> CountingGenerator:
        """The generator, loaded at the first document that needs it (a factory is accepted)."""
        if self._counting is None:
            self._counting = CountingGenerator(model_of(self._generator_source))
        return self._counting

    def __call__(self, doc: ParsedDocument) -> Node | None:
        started = time.perf_counter()
        before = self._usage()
        self.report = StructureReport()
        try:
            root = self.structure(doc)
            self.report.valid = True
        except (MarkupError, PromptTooLong, ValueError) as exc:
            self.report.reason = str(exc)
            root = None
        after = self._usage()
        self.report.model_calls = after[0] - before[0]
        self.report.generated_tokens = after[1] - before[1]
        self.report.generator_seconds = round(after[2] - before[2], 3)
        self.report.seconds = round(time.perf_counter() - started, 3)
        return root

    def _usage(self) -> tuple[int, int, float]:
        """Calls, generated tokens and seconds so far, without loading a generator not yet used."""
        counter = self._counting
        return (counter.calls, counter.generated_tokens, counter.seconds) if counter else (0, 0, 0.0)

    # -- the pipeline ---------------------------------------------------------------------------
    def structure(self, doc: ParsedDocument) -> Node:
        opts = self.options
        body, units, index = paragraph_units(doc, opts.unit_min_tokens, opts.unit_max_tokens)
        if not units:
            raise ValueError("no text to structure")
        self.report.units = len(units)
        self.report.input_tokens = sum(unit.tokens for unit in units)
        if self.report.input_tokens < 2 * opts.min_section_tokens:
            raise ValueError("too short to divide into sections")  # flat is the right tree; no model call
        payload = {
            "body": hashlib.sha256(body.encode("utf-8")).hexdigest(),
            "options": asdict(opts),
            "embedder": getattr(self.embedder, "name", None) if opts.decoder == "stepwise" else None,
        }
        found = cached_json(self.cache, self.generator.name, "structure", payload,
                            lambda: self._section_starts(body, units, index))
        self.report.windows, self.report.outlines = found["windows"], found["outlines"]
        self.report.markup_tokens = sum(self.generator.count_tokens(text) for text in found["outlines"])
        starts = [SectionStart(*item) for item in found["starts"]]
        root = build_sections(doc, body, units, starts, opts.max_leaf_tokens)
        problem = coverage_problem(root, body)
        if problem:
            raise ValueError(f"structured tree rejected: {problem}")
        self.report.sections = sum(1 for n in root.children if n.kind == "section")
        return root

    def _section_starts(self, body: str, units: list[Unit], index: WordIndex) -> dict:
        """Outline every window, map and check each, merge them, then cut oversized sections."""
        windows = plan_windows(units, self._window_budget(), self.options.overlap_units)
        self._body, self._gap_z, self._scores = body, None, {}
        found, outlines = [], []
        for w, (start, end) in enumerate(windows):
            texts = [body[u.start : u.end] for u in units[start:end]]
            if self.options.decoder == "grammar":
                markup = self._grammar_outline(texts)
            else:
                markup = self._stepwise_outline(units, start, end, owned_range(windows, w), texts)
            outlines.append(markup)
            found.append(window_starts(parse(markup), index, units, start, end))
        starts = merge_windows(windows, found)
        if self.options.decoder == "stepwise":
            starts = self._split_oversized(body, units, starts)
        else:
            self._retitle_copies(body, units, starts)
        return {"windows": len(windows), "outlines": outlines,
                "starts": [[s.unit, s.level, s.title] for s in starts]}

    def _window_budget(self) -> int:
        # The grammar decoder's prompt holds the window twice over (text, then its outline).
        room = self.generator.n_ctx - 700
        share = 0.45 if self.options.decoder == "grammar" else 0.8
        return max(200, min(self.options.window_tokens, int(room * share)))

    def _grammar_outline(self, texts: list[str]) -> str:
        anchors = [anchor(text, self.options.k) for text in texts]
        bound = self.generator.count_tokens(render([Part(1, "x", anchors)])) + len(anchors) * (TITLE_CHARS // 2 + 12)
        return cached_complete(
            self.generator, self.cache, "outline", outline_prompt(texts, self.options.k),
            max_tokens=bound, grammar=window_grammar(anchors, self.options.subsections),
        )

    def _stepwise_outline(
        self, units: list[Unit], start: int, end: int, owned: tuple[int, int], texts: list[str]
    ) -> str:
        """The window's outline written directly: the grammar fixes every anchor, so only the
        section starts (from the gap scores) and the titles (from the model) are decided here."""
        opts = self.options
        scores = self._gap_scores(units, start, end, texts)
        self._scores.update({start + g: value for g, value in scores.items()})
        open_ends = (start > 0, end < len(units))
        opens = [0, *choose_gaps(scores, [u.tokens for u in units[start:end]], opts.min_section_tokens,
                                 open_ends=open_ends)]
        parts = []
        for i, rel in enumerate(opens):
            stop = opens[i + 1] if i + 1 < len(opens) else end - start
            section_texts = texts[rel:stop]
            mine = owned[0] <= start + rel < owned[1]  # a start outside is decided by a neighbour
            title = generate_title(self.generator, self.cache, "\n\n".join(section_texts)) if mine else "(neighbour)"
            parts.append(Part(1, title, [anchor(text, opts.k) for text in section_texts]))
        return render(parts)

    def _split_oversized(self, body: str, units: list[Unit], starts: list[SectionStart]) -> list[SectionStart]:
        opts = self.options
        tokens = [u.tokens for u in units]
        extra = split_oversized([s.unit for s in starts], self._scores, tokens, opts.min_section_tokens,
                                opts.max_section_tokens)
        bounds = sorted({s.unit for s in starts} | set(extra) | {len(units)})
        for g in extra:
            stop = bounds[bounds.index(g) + 1]
            text = "\n\n".join(body[u.start : u.end] for u in units[g:stop])
            starts.append(SectionStart(g, 1, generate_title(self.generator, self.cache, text)))
        return sorted(starts, key=lambda s: s.unit)

    def _retitle_copies(self, body: str, units: list[Unit], starts: list[SectionStart]) -> None:
        """A small model writing the whole outline often copies the example's titles (or writes
        none with letters): those sections get a title from the title prompt instead."""
        bounds = [s.unit for s in starts] + [len(units)]
        for i, item in enumerate(starts):
            if item.title.casefold() in EXAMPLE_TITLES or not any(ch.isalpha() for ch in item.title):
                text = "\n\n".join(body[u.start : u.end] for u in units[item.unit : max(bounds[i + 1], item.unit + 1)])
                item.title = generate_title(self.generator, self.cache, text)

    def _gap_scores(self, units: list[Unit], start: int, end: int, texts: list[str]) -> dict[int, float]:
        """Window-relative gap → combined z-score (embedding depth + weighted model score)."""
        gaps = range(1, end - start)
        combined = {g: 0.0 for g in gaps}
        if self.embedder is not None:
            if self._gap_z is None:
                started = time.perf_counter()
                vectors = self.embedder.embed([" ".join(self._body[u.start : u.end].split()) for u in units])
                self.report.embedder_seconds = round(time.perf_counter() - started, 3)
                self._gap_z = zscore(depth_scores(similarity_curve(vectors)))
            for g in gaps:
                combined[g] += float(self._gap_z[start + g - 1])
        weight = self.options.model_weight
        weight = (0.0 if self.embedder is not None else 1.0) if weight is None else weight
        if weight and len(texts) > 1:
            model = zscore(np.array(self._model_close_logits(texts)))
            for g in gaps:
                combined[g] += weight * float(model[g - 1])
        return combined

    def _model_close_logits(self, texts: list[str]) -> list[float]:
        """log-odds of `</section>` over `<br>` after each paragraph but the last, in an outline
        that keeps every paragraph in one section so far."""
        k = self.options.k
        prefix = outline_prompt(texts, k) + "<section: " + generate_title(self.generator, self.cache, texts[0]) + ">\n"
        logits = []
        for i in range(len(texts) - 1):
            prefix += anchor(texts[i], k) + "\n"
            probs = self.generator.label_probs(prefix, ["<br>", "</section>"])
            close = min(max(probs["</section>"], 1e-6), 1 - 1e-6)
            logits.append(float(np.log(close / (1 - close))))
            prefix += "<br>\n"
        return logits


def window_starts(parts: list[Part], index: WordIndex, units: list[Unit], start: int, end: int) -> list[SectionStart]:
    """Map a window's outline onto its units; raise MarkupError unless it covers them exactly."""
    window = units[start:end]
    by_first = {u.first_word: start + i for i, u in enumerate(window)}
    ends = {u.end_word for u in window}
    entries = [entry for part in parts for entry in part.entries]
    ranges = map_entries(entries, index, set(by_first), ends, window[0].first_word)
    if ranges[0][0] != window[0].first_word or ranges[-1][1] != window[-1].end_word:
        raise MarkupError("the outline does not cover the window from its first to its last paragraph")
    for (_, prev_end), (begin, _) in zip(ranges, ranges[1:]):
        if begin != prev_end:
            raise MarkupError("the outline skips or repeats a paragraph")
    starts, at = [], 0
    pending: list[Part] = []
    for part in parts:
        pending.append(part)
        if not part.entries:
            continue  # a section holding only subsections starts where its first subsection does
        unit = by_first[ranges[at][0]]
        starts.extend(SectionStart(unit, p.level, p.title) for p in pending)
        pending, at = [], at + len(part.entries)
    return starts


def make_llm_structurer(
    generator: Generator | Callable[[], Generator],
    db=None,
    embedder: Embedder | None = None,
    options: StructureOptions | None = None,
) -> LlmStructurer:
    """The structurer ingest passes to `structure_document(doc, mode, llm=...)`.

    `generator` may be a zero-argument factory (loaded at the first document without headings);
    `db` is the store whose `llm_cache` remembers every model output; `embedder`, when given,
    supplies the topic-shift signal (recommended: the 270M generator alone places sections
    poorly)."""
    return LlmStructurer(generator, LlmCache(db) if db is not None else None, embedder, options)
