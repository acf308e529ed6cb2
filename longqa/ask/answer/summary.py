"""Broad questions ("Summarise section 3", "What does the warranty clause say about repairs?", "List
the requirements for redistribution"): an extractive summary, each point an exact quote.

The sentences of the chosen passages (of the named section, when the question names one by number)
are ranked by Maximal Marginal Relevance: each pick maximises its relevance to the question and its
centrality in the passage (how much of the other sentences' words it shares), less its overlap with
the points already picked. Three to seven points, in document order, each with its passage number.
"""

from __future__ import annotations

import re

from longqa.ask.analysis.asked import Asked
from longqa.ask.answer.focus import Sentence
from longqa.ask.answer.grounded import NO_ANSWER, Grounding, quote_of
from longqa.ask.settings import in_effect
from longqa.text.words import STOPWORDS, words

MIN_POINTS, MAX_POINTS = 3, 7
MIN_WORDS = 5  # a shorter line is a heading or a label, not a point


def summarise(asked: Asked, sentences: list[Sentence]) -> tuple[str, Grounding]:
    """The summary's text ("- point [n]" lines) and its grounding (one quote per point)."""
    pool = _once([s for s in in_section(sentences, asked.section) if len(s.text.split()) >= MIN_WORDS])
    if not pool:
        return NO_ANSWER, Grounding(mode="none")
    bags = [set(words(s.text)) - STOPWORDS for s in pool]
    best = max(s.score for s in pool) or 1.0
    relevance = [s.score / best for s in pool]
    centrality = [_mean_overlap(bag, bags) for bag in bags]
    top_centrality = max(centrality) or 1.0
    value = [r + c / top_centrality for r, c in zip(relevance, centrality)]
    size = size_of(len(pool))
    trade = in_effect().answer.summary_diversity
    chosen: list[int] = []
    while len(chosen) < min(size, len(pool)):
        def marginal(i: int) -> float:
            redundancy = max((_jaccard(bags[i], bags[j]) for j in chosen), default=0.0)
            return (1 - trade) * value[i] / 2 - trade * redundancy
        chosen.append(max((i for i in range(len(pool)) if i not in chosen), key=marginal))
    points = sorted((pool[i] for i in chosen), key=lambda s: s.order)
    text = "\n".join(f"- {' '.join(s.text.split())} [{s.passage.n}]" for s in points)
    return text, Grounding(mode="summary", quotes=[quote_of(s) for s in points], focused=points)


def size_of(candidates: int) -> int:
    """How many points a summary of `candidates` sentences has: about their square root, three to
    seven (never more than there are)."""
    return min(candidates, max(MIN_POINTS, min(MAX_POINTS, round(candidates ** 0.5))))


def in_section(sentences: list[Sentence], number: str) -> list[Sentence]:
    """The sentences under a section numbered `number` ("3" takes 3, 3.1 and 3.2); all of them
    when no section is named or none carries that number."""
    if not number:
        return sentences
    keyword = r"(?:section|chapter|clause|part|article|appendix|annex)\s+"
    if number.isalpha():  # "appendix A": the letter alone opens many a title ("A Note on Safety")
        letter = re.escape(number.upper())
        opening = re.compile(rf"^(?:(?i:{keyword}{letter})(?:[.):\s]|$)|{letter}(?:[.):]|$))")
    else:
        opening = re.compile(rf"^(?:{keyword})?{re.escape(number)}(?:[.):\s]|$)", re.I)

    def under(sentence: Sentence) -> bool:
        titles = [part.strip() for part in (sentence.leaf.path or sentence.passage.section).split(" > ")]
        return any(opening.match(title) for title in titles)

    inside = [s for s in sentences if under(s)]
    return inside or sentences


def _once(sentences: list[Sentence]) -> list[Sentence]:
    """The first of each sentence a document prints more than once (a repeated warning): a
    summary quotes it once."""
    seen: set[str] = set()
    kept = []
    for sentence in sentences:
        key = " ".join(sentence.text.split()).casefold()
        if key not in seen:
            seen.add(key)
            kept.append(sentence)
    return kept


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _mean_overlap(bag: set[str], bags: list[set[str]]) -> float:
    others = [_jaccard(bag, other) for other in bags if other is not bag]
    return sum(others) / len(others) if others else 0.0
