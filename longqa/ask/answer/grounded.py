"""Grounded answers: the quote that proves an answer, and the pieces the answer stage is built of.

- `Quote` and `Grounding`: what an answer rests on (verbatim offsets into the stored text).
- Lettered options and quoted sentences: chosen by the model's probability and the sentences' focus.
- The helpers the short-answer ranker reads (choose.py): the model's draft and its log-probabilities,
  the yes/no word rule, options compared by their years.
- Broad questions: the best focused sentences quoted, or a free-text answer traced sentence by
  sentence to its closest source sentence.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import focus
from longqa.text import spans
from longqa.ask.answer.citations import strip_markers
from longqa.ask.context import Quote
from longqa.ask.settings import in_effect
from longqa.probabilities import softmax
from longqa.models.base import SCORES_OPTIONS, supports
from longqa.text.stems import short_stem
from longqa.text.words import STOPWORDS, content_terms, overlap, words

NO_ANSWER = "The documents do not say."


@dataclass
class Grounding:
    """What the answer stage decided, beside the answer text itself."""

    mode: str  # read | verdict | selection | letter | computed | span | yesno | sentence | free | quoted | summary | none
    quotes: list[Quote] = field(default_factory=list)
    candidates: list[dict] = field(default_factory=list)  # the scored candidates, best first
    focused: list[focus.Sentence] = field(default_factory=list)
    draft: str = ""  # the model's own short answer, one of the ranker's features
    confidence: float | None = None  # the ranker's calibrated probability that the answer is right
    unsure: bool = False  # the confidence is below the ranker's threshold
    alternatives: list = field(default_factory=list)  # the next candidates (choose.Candidate), best first
    ranked: list = field(default_factory=list)  # the ranker's answers in its order, its pick first (a reader's alternatives)
    pool: list = field(default_factory=list)  # every candidate read, with its features (for the bench)
    # What a reader's confidence was computed from (reader_confidence.SIGNALS; the eval records them)
    signals: dict = field(default_factory=dict)
    # A reader's answer as a candidate (text without its citation, the sentence proving it): what
    # the alternatives start with when the outcome declines it (outcome.py)
    shown: object = None
    declined: str = ""  # why the outcome gives no answer ("" when it gives one)
    calibrated: bool = False  # the confidence is a reader's fitted table's (it may decline the answer)
    decline_below: float | None = None  # the threshold chosen with that table (reader_confidence.decline_below)
    answered_as: str = ""  # the mode of an answer the outcome declined
    # The threshold the outcome was first settled at (the settings in effect then): a later settle
    # of the same answer (the command's result, outside the answer's settings) keeps it.
    settled_below: float | None = None


def quote_of(sentence: focus.Sentence) -> Quote:
    leaf = sentence.leaf
    return Quote(sentence.text, sentence.passage, leaf.id, sentence.start, sentence.end,
                 leaf.page_start, leaf.page_end, leaf)


# -- lettered options and quoted sentences ---------------------------------------------------------------------------------
@dataclass
class _Candidate:
    text: str
    kind: str
    sentence: focus.Sentence | None
    prior: float
    model: float = 0.0
    final: float = 0.0


_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none|without|cannot)\b|n['’]t\b", re.I)
_VERDICT_FILLER = {"both", "same", "also", "either", "each", "one", "ever", "really", "actually"}


def verdict_rule(asked: Asked, sentences: list[focus.Sentence]) -> tuple[str, focus.Sentence | None]:
    """A yes/no verdict from the words alone: "Yes" when the best sentences say every content word
    of the question (by stem) and the sentence saying most of them is not negated, else "No";
    with the sentence that says most of them. A rule, not a reading: the ranker learns how far to
    trust it (features.verdict_rule)."""
    stems = {stem for stem in _question_stems(asked.core) if stem not in _VERDICT_FILLER}
    if not stems or not sentences:
        return "No", None
    said = [{word_stem(w) for w in words(s.text)} & stems for s in sentences]
    best = max(range(len(sentences)), key=lambda i: (len(said[i]), sentences[i].score))
    covered = set().union(*said) == stems
    return ("Yes" if covered and not _NEGATION.search(sentences[best].text) else "No"), sentences[best]


def verdict_quote(verdict: str, asked: Asked, sentences: list[focus.Sentence]) -> focus.Sentence | None:
    """The sentence to quote for a yes/no verdict, never one that contradicts it: of the best
    sentences, the one saying most of the question's words whose negation agrees with the verdict
    (a negated sentence for "No", an affirmative one for "Yes"); None when none agrees."""
    stems = {stem for stem in _question_stems(asked.core) if stem not in _VERDICT_FILLER}
    agreeing = [s for s in sentences if bool(_NEGATION.search(s.text)) == (verdict == "No")]
    if not agreeing:
        return None
    return max(agreeing, key=lambda s: (len({word_stem(w) for w in words(s.text)} & stems), s.score))


def by_dates(asked: Asked, options: list[str], sentences: list[focus.Sentence]) -> dict:
    """For "which came first, A or B" and "which edition is newer, A or B": each option's year, the first
    one stated after its name in the best sentence naming it, and which option the comparison
    picks. {option: (won, sentence)}; empty when the question compares no dates or a year is missing."""
    if len(options) != 2 or not asked.order:
        return {}
    found: dict[str, tuple[int, focus.Sentence]] = {}
    for option in options:
        best = None
        for sentence in sentences:
            if overlap(option, sentence.text) < 0.99:
                continue
            year = _year_after(option, sentence.text)
            if year is not None and (best is None or sentence.score > best[1].score):
                best = (year, sentence)
        if best is None:
            return {}
        found[option] = best
    (a, (year_a, _)), (b, (year_b, _)) = found.items()
    if year_a == year_b:
        return {}
    # "older", "first", "earlier": the earlier year; "younger", "later", "newer": the later one
    winner = (a if year_a < year_b else b) if asked.order == "earlier" else (a if year_a > year_b else b)
    return {option: (option == winner, sentence) for option, (_, sentence) in found.items()}


def _year_after(option: str, text: str) -> int | None:
    """The first year stated at or after the option's first word in `text`."""
    first = option.split()[0].lower() if option.split() else ""
    at = text.lower().find(first) if first else -1
    match = spans.YEAR.search(text, at) if at >= 0 else None
    return int(match.group()) if match else None


def draft_answer(generator, prompt: str, max_tokens: int) -> str:
    """A short greedy completion of the focused prompt, citation marks and end punctuation cut."""
    if generator is None:
        return ""
    # No grammar: the line end stops it as well, at half the cost per token (answer.stream_free).
    text = generator.complete(prompt, max_tokens=max_tokens, stop=["\n"], temperature=0.0)
    return strip_markers(text).rstrip(".;,: ").strip("\"'“”")


def verbatim(draft: str, sentences: list[focus.Sentence]) -> tuple[str, focus.Sentence] | None:
    """The draft as it stands in a sentence (case-insensitive), with the sentence's own spelling."""
    if len(draft) < 2 or len(draft.split()) > in_effect().answer.max_draft_words:
        return None
    for sentence in sorted(sentences, key=lambda s: -s.score):
        at = sentence.text.lower().find(draft.lower())
        if at >= 0:
            text = sentence.text[at:_word_end(sentence.text, at + len(draft))]
            text = text.split(" | ")[0]  # one table cell, not "1,512 | 1,386" across a row
            # a draft cut by its token limit mid-phrase ("when the river authority reports a")
            # ends at its last content word
            content = [m for m in re.finditer(r"\S+", text) if m.group().lower().strip(",;:") not in STOPWORDS]
            if not content:
                return None
            if content[-1].end() < len(text.rstrip()):
                text = text[:content[-1].end()].rstrip(" ,;:")
            return text, sentence
    return None


def _word_end(text: str, end: int) -> int:
    """`end` moved to the end of the word or figure it falls in: a draft cut by its token limit
    ("$60,00") is completed from the sentence ("$60,000")."""
    while end < len(text) and (text[end].isalnum() or (text[end] in ",." and end + 1 < len(text)
                                                        and text[end - 1].isdigit() and text[end + 1].isdigit())):
        end += 1
    return end


def choose_letter(generator, question, letters, focused, prompt) -> tuple[str, Grounding]:
    """Lettered options: the model's letter probability plus each option's support in the text."""
    listed = list(letters.items())
    probabilities = _model_probabilities(generator, prompt, [f"({letter})" for letter, _ in listed])
    shortlist = []
    for (letter, text), probability in zip(listed, probabilities):
        support = best_support(text, focused)
        said = overlap(text, support.text) if support else 0.0
        shortlist.append(_Candidate(f"({letter}) {text}", "letter", support, said, probability,
                                    said + in_effect().answer.w_model * probability))
    shortlist.sort(key=lambda c: -c.final)
    winner = shortlist[0]
    grounding = Grounding(mode="letter", candidates=[_as_dict(c) for c in shortlist], focused=focused)
    if winner.sentence is not None:
        grounding.quotes = [quote_of(winner.sentence)]
        return f"{winner.text} [{winner.sentence.passage.n}]", grounding
    return winner.text, grounding


def choose_sentence(generator, question: str, focused: list[focus.Sentence], prompt: str) -> tuple[str, Grounding]:
    """A passage to quote ("Quote the clause on termination"): the best few sentences by focus,
    and the model's probability of copying each one after the question (a whole sentence)."""
    settings = in_effect().answer
    top = sorted(answering(focused, question), key=lambda s: -s.score)[:settings.sentence_choices]
    probabilities = _model_probabilities(generator, prompt, [" ".join(s.text.split()) for s in top],
                                         max_tokens=settings.sentence_tokens) if len(top) > 1 else [0.0]
    scored = [(s.score / (top[0].score or 1.0) + settings.w_sentence_model * p, s, p) for s, p in zip(top, probabilities)]
    scored.sort(key=lambda x: -x[0])
    best = scored[0][1]
    grounding = Grounding(mode="sentence", quotes=[quote_of(best)], focused=focused,
                          candidates=[{"text": s.text, "kind": "sentence", "prior": round(s.score, 4),
                                       "model": round(p, 4), "score": round(final, 4)} for final, s, p in scored])
    return f"{' '.join(best.text.split())} [{best.passage.n}]", grounding


def computed_answer(computed, focused: list[focus.Sentence]) -> tuple[str, Grounding]:
    """A figure computed over one table row (tables.py), quoted with the row and its header."""
    shown = ", ".join(f"{year}: {cell.strip()}" for year, cell in computed.cells)
    grounding = Grounding(mode="computed", quotes=[quote_of(s) for s in computed.sources], focused=focused,
                          candidates=[{"text": computed.text, "kind": computed.operation, "prior": 1.0,
                                       "model": 0.0, "score": 1.0, "cells": shown}])
    return f"{computed.text} [{computed.row.passage.n}]", grounding


def model_logprobs(generator, prompt: str, options: list[str], max_tokens: int | None = None) -> list[float]:
    """The generator's mean log-probability per token of each option as the continuation of
    `prompt` ([] without a generator)."""
    if generator is None or not options:
        return []
    continuations = [" " + option for option in options]
    if supports(generator, SCORES_OPTIONS):
        return generator.option_logprobs(prompt, continuations, max_tokens=max_tokens or in_effect().answer.max_option_tokens)
    probs = generator.label_probs(prompt, continuations)  # servers and test fakes: label probabilities
    return [math.log(max(probs.get(c, 0.0), 1e-12)) for c in continuations]


def _model_probabilities(generator, prompt: str, options: list[str], max_tokens: int | None = None) -> list[float]:
    """The generator's distribution over `options` as continuations of `prompt` (sums to 1)."""
    logprobs = model_logprobs(generator, prompt, options, max_tokens)
    if not logprobs:
        return [0.0] * len(options)
    return softmax(logprobs)


def word_stem(word: str) -> str:
    """A word's short stem as the answer stage compares question and sentence words."""
    return short_stem(word, in_effect().answer.stem_chars)


def _question_stems(question: str) -> dict[str, set[str]]:
    """The question's content words by stem."""
    stems: dict[str, set[str]] = {}
    for term in content_terms(question):
        stems.setdefault(word_stem(term), set()).add(term)
    return stems


def best_support(text: str, sentences: list[focus.Sentence]) -> focus.Sentence | None:
    scored = [(overlap(text, s.text), s.score, s) for s in sentences]
    scored = [t for t in scored if t[0] > 0]
    return max(scored, key=lambda t: (t[0], t[1]))[2] if scored else None


def _as_dict(c: _Candidate) -> dict:
    return {"text": c.text, "kind": c.kind, "prior": round(c.prior, 4), "model": round(c.model, 4),
            "score": round(c.final, 4)}


# -- free-text answers -----------------------------------------------------------------------------
def answering(focused: list[focus.Sentence], question: str) -> list[focus.Sentence]:
    """The sentences that could be quoted as an answer: those saying in_effect().answer.min_new_words content words
    the question does not. A heading that repeats the question ("VA claim exam (C&P exam)" for
    "what happens after I take the VA claim exam (C&P exam)?") scores high and answers nothing.
    All of them when none does."""
    asked = set(words(question))
    saying = [s for s in focused
              if len({w for w in words(s.text) if w not in STOPWORDS} - asked) >= in_effect().answer.min_new_words]
    return saying or focused


def quote_answer(focused: list[focus.Sentence], question: str = "") -> tuple[str, Grounding]:
    """A broad question's answer in the documents' own words: the in_effect().answer.quote_sentences best focused
    sentences that say more than the question, in the order they were shown, each with its
    passage number."""
    best = {id(s) for s in sorted(answering(focused, question), key=lambda s: -s.score)[:in_effect().answer.quote_sentences]}
    chosen = [s for s in focused if id(s) in best]
    if not chosen:
        return NO_ANSWER, Grounding(mode="none", focused=focused)
    text = " ".join(f"{' '.join(s.text.split())} [{s.passage.n}]" for s in chosen)
    return text, Grounding(mode="quoted", quotes=[quote_of(s) for s in chosen], focused=focused)


def trace(answer: str, focused: list[focus.Sentence]) -> list[Quote]:
    """Each answer sentence's closest source sentence (by content-word overlap), in answer order."""
    quotes: list[Quote] = []
    seen: set[tuple[int, int]] = set()
    for claim in re.split(r"(?<=[.!?])\s+", answer):
        claim = strip_markers(claim)
        if not claim:
            continue
        best = max(focused, key=lambda s: (overlap(claim, s.text), s.score), default=None)
        if best is None or overlap(claim, best.text) < in_effect().answer.min_trace_overlap:
            continue
        key = (best.leaf.id, best.start)
        if key not in seen:
            seen.add(key)
            quotes.append(quote_of(best))
    return quotes

