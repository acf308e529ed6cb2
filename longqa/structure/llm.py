"""Structure a document that has no headings of its own with the local model.

The document is cut into paragraph units. An outline is written in the markup of `markup.py`
(sections and subsections with titles, `<br>`, `<skip>`), parsed, its anchors mapped back onto the
text, and checked to cover the units exactly once, in order; the tree built from it is checked to
cover the whole body. Any failure, or a document that cannot be divided, returns None with the
reason in `report.reason` (too short, no boundary above the threshold, a malformed outline) so the
caller stores it flat and says why.

Two decoders write the outline; both produce text of the markup's grammar:
- "stepwise" (default): the anchors are fixed text, so they are written directly. Where sections
  and subsections start comes from boundaries.py (embedding and lexical-cohesion dips over the
  whole document, one embedding call); the model writes only the title of each section kept
  (an article of a collection is titled by the name it opens with, without a model call).
- "grammar": one grammar-constrained completion per window of `window_tokens` (the model writes
  every token), windows merged. Simple and server-friendly, but llama-cpp-python checks the whole
  262k vocabulary against the grammar at each step, and the 270M base model places sections no
  better than chance.
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
from longqa.models.prompt_fit import PromptTooLong
from longqa.parse.blocks import ParsedDocument
from longqa.store.cache import LlmCache, cached_complete, cached_json
from longqa.structure.boundaries import BoundarySettings, gap_scores, section_plan
from longqa.structure.markup import (
    TITLE_CHARS, MarkupError, Part, WordIndex, anchor, map_entries, parse, render, window_grammar,
)
from longqa.structure.outline_prompt import EXAMPLE_TITLES, outline_prompt
from longqa.structure.split import LEAF_TOKENS
from longqa.structure.titles import generate_title
from longqa.structure.unit_cues import opener_subject, unit_indents
from longqa.structure.unit_shape import unit_layout, unit_shapes
from longqa.structure.tree import Node
from longqa.structure.paragraph_units import (
    SectionStart, Unit, build_sections, coverage_problem, merge_windows, paragraph_units,
    plan_windows, unit_pages,
)

DECODERS = ("stepwise", "grammar")


@dataclass
class StructureOptions:
    k: int = 4  # words kept on each side of <skip>
    unit_min_tokens: int = 40  # shorter blocks join their neighbour to make one unit (80 merged short
    # paragraphs across topic changes: boundary F1 fell in bench/structure_boundaries.py)
    unit_max_tokens: int = LEAF_TOKENS  # longer blocks are split at sentence ends (a unit fits in a leaf)
    window_tokens: int = 1500  # grammar decoder: document tokens per window
    overlap_units: int = 2  # grammar decoder: units shared by neighbouring windows
    boundaries: BoundarySettings = field(default_factory=BoundarySettings)  # stepwise decoder
    decoder: str = "stepwise"
    subsections: bool = False  # grammar decoder: let the model open subsections
    titles: bool = True  # False: sections stay untitled here (boundary-only benchmark runs)
    max_leaf_tokens: int = LEAF_TOKENS


@dataclass
class StructureReport:
    valid: bool = False
    reason: str = ""
    too_short: bool = False  # the reason is the document's size: flat is simply its right tree
    units: int = 0
    windows: int = 0
    sections: int = 0
    subsections: int = 0
    collection: bool = False  # read as a collection of short articles (boundaries.py)
    input_tokens: int = 0  # cl100k tokens of the body
    generated_tokens: int = 0  # generator tokens produced by complete()
    markup_tokens: int = 0  # generator tokens of the outlines (what LongRefiner's model writes)
    model_calls: int = 0
    seconds: float = 0.0
    generator_seconds: float = 0.0  # of `seconds`, spent in the generator
    embedder_seconds: float = 0.0  # of `seconds`, spent embedding units
    outlines: list[str] = field(default_factory=list)


class LlmStructurer:
    """The `LlmStructurer` callable of tree_source.py: ParsedDocument → tree, or None to fall back."""

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
        least = 2 * opts.boundaries.min_section_tokens
        if self.report.input_tokens < least:  # flat is the right tree; no model call
            self.report.too_short = True
            raise ValueError(f"too short ({self.report.input_tokens:,} tokens; at least {least:,} needed)")
        payload = {
            "body": hashlib.sha256(body.encode("utf-8")).hexdigest(),
            "options": asdict(opts),
            "embedder": getattr(self.embedder, "name", None) if opts.decoder == "stepwise" else None,
        }
        found = cached_json(self.cache, self.generator.name, "structure", payload,
                            lambda: self._section_starts(doc, body, units, index))
        self.report.windows, self.report.outlines = found["windows"], found["outlines"]
        self.report.collection = bool(found.get("collection", False))
        self.report.markup_tokens = sum(self.generator.count_tokens(text) for text in found["outlines"])
        starts = [SectionStart(*item) for item in found["starts"]]
        root = build_sections(doc, body, units, starts, opts.max_leaf_tokens)
        problem = coverage_problem(root, body)
        if problem:
            raise ValueError(f"structured tree rejected: {problem}")
        self.report.sections = sum(1 for n in root.children if n.kind == "section")
        self.report.subsections = sum(1 for s in root.children for n in s.children if n.kind == "subsection")
        return root

    def _section_starts(self, doc: ParsedDocument, body: str, units: list[Unit], index: WordIndex) -> dict:
        if self.options.decoder == "stepwise":
            return self._stepwise_starts(doc, body, units, index)
        return self._grammar_starts(body, units, index)

    def _stepwise_starts(self, doc: ParsedDocument, body: str, units: list[Unit], index: WordIndex) -> dict:
        """Boundaries from the gap scores of the whole document, titles from the model, and the
        outline written in the markup, then mapped back and checked like a model's would be."""
        texts = [body[u.start : u.end] for u in units]
        shapes = unit_shapes(texts, unit_layout(doc, [(u.start, u.end) for u in units]))
        indents = unit_indents(doc, [u.start for u in units])
        gaps = gap_scores(self.unit_vectors(texts), texts, self.options.boundaries, unit_pages(units), shapes, indents)
        plan = section_plan(gaps, [u.tokens for u in units], self.options.boundaries)
        if len(plan) < 2:
            raise ValueError(f"no topic boundary above the threshold in {len(units)} paragraphs")
        parts = []
        for (start, level), (stop, _) in zip(plan, [*plan[1:], (len(units), 0)]):
            # An article of a collection is titled by the name it opens with (no model call).
            named = opener_subject(texts[start]) if gaps.collection else None
            title = named or (self._title("\n\n".join(texts[start:stop])) if self.options.titles else "")
            parts.append(Part(level, title, [anchor(text, self.options.k) for text in texts[start:stop]]))
        markup = render(parts)
        starts = window_starts(parse(markup), index, units, 0, len(units))
        return {"windows": 1, "outlines": [markup], "starts": [[s.unit, s.level, s.title] for s in starts],
                "collection": gaps.collection}

    def unit_vectors(self, texts: list[str]) -> np.ndarray | None:
        """One embedding call for every unit (None without an embedder: lexical cohesion only)."""
        if self.embedder is None:
            return None
        started = time.perf_counter()
        vectors = self.embedder.embed([" ".join(text.split()) for text in texts])
        self.report.embedder_seconds = round(time.perf_counter() - started, 3)
        return np.asarray(vectors)

    def _title(self, text: str) -> str:
        return generate_title(self.generator, self.cache, text)

    def _grammar_starts(self, body: str, units: list[Unit], index: WordIndex) -> dict:
        """Outline every window with the model, map and check each, and merge them."""
        windows = plan_windows(units, self._window_budget(), self.options.overlap_units)
        found, outlines = [], []
        for start, end in windows:
            markup = self._grammar_outline([body[u.start : u.end] for u in units[start:end]])
            outlines.append(markup)
            found.append(window_starts(parse(markup), index, units, start, end))
        starts = merge_windows(windows, found)
        self._retitle_copies(body, units, starts)
        return {"windows": len(windows), "outlines": outlines,
                "starts": [[s.unit, s.level, s.title] for s in starts]}

    def _window_budget(self) -> int:
        # The grammar decoder's prompt holds the window twice over (text, then its outline).
        room = self.generator.n_ctx - 700
        return max(200, min(self.options.window_tokens, int(room * 0.45)))

    def _grammar_outline(self, texts: list[str]) -> str:
        anchors = [anchor(text, self.options.k) for text in texts]
        bound = self.generator.count_tokens(render([Part(1, "x", anchors)])) + len(anchors) * (TITLE_CHARS // 2 + 12)
        return cached_complete(
            self.generator, self.cache, "outline", outline_prompt(texts, self.options.k),
            max_tokens=bound, grammar=window_grammar(anchors, self.options.subsections),
        )

    def _retitle_copies(self, body: str, units: list[Unit], starts: list[SectionStart]) -> None:
        """A small model writing the whole outline often copies the example's titles (or writes
        none with letters): those sections get a title from the title prompt instead."""
        bounds = [s.unit for s in starts] + [len(units)]
        for i, item in enumerate(starts):
            if item.title.casefold() in EXAMPLE_TITLES or not any(ch.isalpha() for ch in item.title):
                text = "\n\n".join(body[u.start : u.end] for u in units[item.unit : max(bounds[i + 1], item.unit + 1)])
                item.title = generate_title(self.generator, self.cache, text)


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
