"""Sentence-level focus: the few sentences of the refined context that the generator reads.

A 270M model reads a 2,000-token context slowly and badly; it reads a few sentences quickly and
chooses well among them. After the tree refinement, every sentence of the selected passages is
scored against the question and only the best are handed to the answer stage (the full context
stays in `--context-only` and `--json`'s `context`). Training-free extractive compression:

  score = in_effect().answer.focus_weights[0] * term coverage (idf-weighted over the context's sentences)
        + in_effect().answer.focus_weights[1] * cosine to the question (the top sentences only, when an embedder is loaded)
        + in_effect().answer.focus_weights[2] * the passage's refinement score (normalised)
  then a sentence borrows in_effect().answer.neighbour_share of its better neighbour's score (pronouns, "it", "this").

Short questions (extractive, arithmetic, bridge) get the best sentences in ~in_effect().answer.focus_tokens; broad ones
(abstractive, or a high R_q) get sentences spread over the selected passages in ~in_effect().answer.spread_tokens.
"""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from longqa import tokens
from longqa.text import sentences
from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import span_fit
from longqa.ask.context import Passage
from longqa.ask.settings import in_effect
from longqa.text.table_rows import row_header
from longqa.text.words import content_terms, words
from longqa.structure.tree import Node, walk



@dataclass
class Sentence:
    passage: Passage
    leaf: Node
    start: int  # offsets into leaf.text: the quote is leaf.text[start:end]
    end: int
    order: int  # position in the context (document order)
    score: float = 0.0
    first_hop: bool = False  # names what a multi-hop question starts from (hops.second_hop)

    @property
    def text(self) -> str:
        return self.leaf.text[self.start:self.end]


def context_sentences(passages: list[Passage]) -> list[Sentence]:
    """Every sentence of the passages in context order (an excerpt's kept sentences only)."""
    found: list[Sentence] = []
    for passage in passages:
        leaves = [n for n in walk(passage.node) if n.is_leaf] if passage.node is not None else []
        for leaf in leaves:
            if passage.spans is None:
                kept = sentences.split(leaf.text, in_effect().answer.max_sentence_chars)
            else:
                kept = [(start, end) for leaf_id, start, end in passage.spans if leaf_id == leaf.id]
            for start, end in kept:
                found.append(Sentence(passage, leaf, start, end, len(found)))
    return found


def score_for(asked: Asked, found: list[Sentence], embedder=None, query_vector=None) -> None:
    """`score` against what the question asks: a lettered question's stem without its options, a
    question's core without its role-play lead-in ("You are asked to act as ..."), else the whole
    question (whose vector the caller may already have)."""
    if asked.letters:
        score(asked.stem, found, embedder)
    elif asked.core != asked.question:
        score(asked.core, found, embedder)
    else:
        score(asked.question, found, embedder, query_vector)


def score(question: str, found: list[Sentence], embedder=None, query_vector=None) -> None:
    """Set `.score` on every sentence (higher is more relevant to the question)."""
    if not found:
        return
    terms = content_terms(question)
    bags = [set(words(s.text)) for s in found]
    n = len(found)
    idf = {t: math.log(1 + n / (1 + sum(1 for bag in bags if t in bag))) for t in terms}
    total = sum(idf.values()) or 1.0
    lexical = [sum(idf[t] for t in terms if t in bag) / total for bag in bags]
    best_passage = max((s.passage.score for s in found), default=0.0) or 1.0
    base = [in_effect().answer.focus_weights[0] * lex + in_effect().answer.focus_weights[2] * max(0.0, s.passage.score) / best_passage
            for lex, s in zip(lexical, found)]
    dense = _dense(question, found, base, embedder, query_vector)
    raw = [b + in_effect().answer.focus_weights[1] * d for b, d in zip(base, dense)]
    for i, sentence in enumerate(found):
        neighbours = [raw[j] for j in (i - 1, i + 1)
                      if 0 <= j < n and found[j].leaf.id == sentence.leaf.id]
        sentence.score = raw[i] + in_effect().answer.neighbour_share * max(neighbours, default=0.0)


def _dense(question, found, base, embedder, query_vector) -> list[float]:
    """Cosine to the question for the in_effect().answer.dense_top sentences the cheap signals rank best; 0 elsewhere."""
    out = [0.0] * len(found)
    if embedder is None:
        return out
    top = sorted(range(len(found)), key=lambda i: -base[i])[:in_effect().answer.dense_top]
    vectors = embedded(embedder, [found[i].text for i in top])
    query = query_vector if query_vector is not None else embedded(embedder, [question])[0]
    for i, cosine in zip(top, vectors @ np.asarray(query)):
        out[i] = max(0.0, float(cosine))
    return out


# Sentence vectors by embedder, most recent last. A tight budget scores the same sentences for its
# excerpt, once per bridge query and again for the answer's focus: each is embedded once.
_VECTORS: "weakref.WeakKeyDictionary[object, OrderedDict[str, np.ndarray]]" = weakref.WeakKeyDictionary()
VECTOR_CACHE = 4096


def embedded(embedder, texts: list[str]) -> np.ndarray:
    """The texts' vectors, each text embedded by `embedder` at most once while it stays among the
    VECTOR_CACHE most recently used."""
    try:
        cache = _VECTORS.setdefault(embedder, OrderedDict())
    except TypeError:  # an embedder that cannot be weakly referenced: no cache
        return np.asarray(embedder.embed(texts))
    missing = [text for text in dict.fromkeys(texts) if text not in cache]
    if missing:
        for text, vector in zip(missing, np.asarray(embedder.embed(missing))):
            cache[text] = vector
    for text in texts:
        cache.move_to_end(text)
    out = np.stack([cache[text] for text in texts])
    while len(cache) > VECTOR_CACHE:
        cache.popitem(last=False)
    return out


def ranked(found: list[Sentence], spread: bool, part=lambda s: s.passage.node_id) -> list[Sentence]:
    """Best first. With `spread`, the parts (passages, unless `part` says otherwise) take turns,
    each its best first, so a broad question sees every selected section."""
    order = sorted(found, key=lambda s: (-s.score, s.order))
    if not spread:
        return order
    queues: dict[int, list[Sentence]] = {}
    for s in order:
        queues.setdefault(part(s), []).append(s)
    order = []
    while any(queues.values()):
        for queue in queues.values():
            if queue:
                order.append(queue.pop(0))
    return order


def select(found: list[Sentence], max_tokens: int, spread: bool) -> list[Sentence]:
    """The best sentences under `max_tokens`, in context order (`ranked` decides which)."""
    chosen = _filled(ranked(found, spread), max_tokens, set(), 0)
    return sorted((s for s in found if s.order in chosen), key=lambda s: s.order)


def _filled(order: list[Sentence], max_tokens: int, chosen: set[int], used: int) -> set[int]:
    """`chosen` (sentence orders, `used` tokens) with the sentences of `order` that still fit added,
    in that order; the first sentence is kept however long when nothing is chosen yet."""
    for s in order:
        if s.order in chosen:
            continue
        cost = tokens.count(s.text) + 1
        if used + cost > max_tokens:
            if chosen:
                continue
            cost = 0  # the single best sentence is always kept, however long
        chosen.add(s.order)
        used += cost
    return chosen


def select_leaves(found: list[Sentence], max_tokens: int) -> list[Sentence]:
    """Whole paragraphs under `max_tokens`, best paragraph (by its best sentence) first, in context
    order: a reader follows a paragraph's own text better than sentences picked out of several.
    A paragraph that does not fit is passed over; the room left goes to the best sentences not yet
    chosen, as in `select`."""
    by_leaf: dict[tuple[int, int], list[Sentence]] = {}
    for s in found:
        by_leaf.setdefault((id(s.passage), s.leaf.id), []).append(s)
    leaves = sorted(by_leaf.values(), key=lambda group: (-max(s.score for s in group), group[0].order))
    chosen: set[int] = set()
    used = 0
    for group in leaves:
        cost = sum(tokens.count(s.text) + 1 for s in group)
        if used + cost <= max_tokens:
            chosen.update(s.order for s in group)
            used += cost
    chosen = _filled(ranked(found, False), max_tokens, chosen, used)
    return [s for s in found if s.order in chosen]


def render(chosen: list[Sentence], as_paragraphs: bool = False) -> str:
    """Focused context: each passage's header ([n] doc > section (pages)) and its chosen sentences,
    one a line; `as_paragraphs` runs on a sentence that follows the one before it in the same
    paragraph's text without a line break. A table row goes under its table's column headers when
    the header row was not chosen itself (a row of figures says nothing without its columns' names)."""
    blocks: list[str] = []
    current = None
    before = None
    said = {" ".join(s.text.split()) for s in chosen}
    for s in chosen:
        if s.passage is not current:
            blocks.append(s.passage.header())
            current = s.passage
            before = None
        columns = row_header(s.leaf, s.start)
        columns = " ".join(columns.split()) if columns else None
        if columns and columns not in said:
            blocks.append(columns)
            said.add(columns)
            before = None
        text = " ".join(s.text.split())
        if as_paragraphs and before is not None and before.leaf is s.leaf and before.order == s.order - 1 \
                and "\n" not in s.leaf.text[before.end:s.start]:
            blocks[-1] += " " + text
        else:
            blocks.append(text)
        before = s
    return "\n".join(blocks)


def reads_paragraphs(form: str) -> bool:
    """Whether a reader's window for a reply of `form` holds whole paragraphs (answer.reader_window):
    a fact's may; a verdict's stays sentences: the paragraph window was measured on facts (too few
    yes/no questions in a 60-question half to say), and the default reader leans to "Yes"."""
    return form == "short" and in_effect().answer.reader_window == "paragraphs"


def reader_text(chosen: list[Sentence], form: str) -> str:
    """The window as a reader reads it for a reply of `form` ("short" or "verdict"): every turn of
    one conversation shows the same text, so the states of its first reading are reused."""
    return render(chosen, as_paragraphs=reads_paragraphs(form))


# Answer kinds a sentence can be checked for: a "when" question's sentence holds a date.
# The answer kinds a figure, a date or a duration answers (rules know them better than a small model).
TYPED = ("date", "month", "quantity", "duration", "frequency")


def raise_fitting(asked: Asked, found: list[Sentence], weight: float) -> None:
    """When the question wants a date, a figure, a duration or a frequency (Asked.core_want), each
    sentence holding a candidate span of that kind gains `weight` x the best score: a sentence
    without one cannot answer it, however many of the question's words it says (answer-type
    matching, as factoid QA systems have long done)."""
    want = asked.core_want
    if weight <= 0 or want not in TYPED or not found:
        return
    top = max(s.score for s in found)
    if top <= 0:
        return
    for sentence in found:
        if any(span_fit.standing(span, want) == span_fit.FIT for span in span_fit.candidates(sentence.text)):
            sentence.score += weight * top
