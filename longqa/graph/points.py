"""Extractive information points: a group's key sentences, chosen by centrality and coverage.

GARLIC has an LLM write one bullet per event or fact. The default gemma-3-270m is not faithful
enough for that (bench/graph.py measures the share of a bullet's content words found in its
sources), so the default points are sentences of the sources themselves: a point is then true
to its source by construction and costs no generated token.

Choice, greedy: a sentence scores the summed group frequency of its content words not yet
covered by chosen points (centrality: words the group keeps returning to; coverage: each pick
lowers the value of what it already says), divided by the square root of its length in words
so long sentences do not win by size alone. Picks stop when the points hold the configured
share of the group's tokens. Points come back in document order.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from longqa import tokens
from longqa.text.sentences import split  # the project's one sentence splitter (offsets, no copies)
from longqa.text.words import content_terms


@dataclass
class Point:
    text: str
    member: int  # index, in the group, of the node the sentence comes from
    start: int  # character offset of the sentence in that node's text
    tokens: int


def key_sentences(texts: list[str], share: float, min_words: int) -> list[Point]:
    """The points of one group whose members' texts are `texts`."""
    candidates: list[tuple[Point, set[str]]] = []
    for member, text in enumerate(texts):
        for start, end in split(text):
            sentence = " ".join(text[start:end].split())
            words = content_terms(sentence)
            if len(words) >= min_words:
                candidates.append((Point(sentence, member, start, tokens.count(sentence)), set(words)))
    if not candidates:
        return []
    frequency = Counter(word for _, words in candidates for word in words)
    target = share * sum(tokens.count(text) for text in texts)
    covered: set[str] = set()
    chosen: list[Point] = []
    used = 0
    remaining = list(candidates)
    while remaining and (used < target or not chosen):
        def value(entry: tuple[Point, set[str]]) -> float:
            point, words = entry
            return sum(frequency[w] for w in words - covered) / math.sqrt(len(words))

        best = max(remaining, key=value)
        if chosen and value(best) <= 0:
            break
        remaining.remove(best)
        chosen.append(best[0])
        covered |= best[1]
        used += best[0].tokens
    return sorted(chosen, key=lambda p: (p.member, p.start))


def faithfulness(point: str, sources: list[str]) -> float:
    """Share of the point's content words found in its sources (1.0 for an extractive point)."""
    words = content_terms(point)
    if not words:
        return 1.0
    present = set(content_terms(" ".join(sources)))
    return sum(1 for w in words if w in present) / len(words)
