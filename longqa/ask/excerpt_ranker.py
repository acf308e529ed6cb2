"""The learned sentence score of a tight-budget context (ask/excerpt.py): which sentences of the
search's larger pool are kept.

Each sentence gets a few named features: its focus score against the question (and the search's
own further queries) and its rank; its paragraph's search score; how well its section path names
the question's words; and what each of the excerpt's readings of the question added to it —
holding a span of the asked kind (a date, a figure), being the value of the asked field, naming the first hop's bridge entity. A linear model over them, fitted as a
softmax over each question's sentences on the tune half (`bench/excerpt_ranker.py`,
cross-validated by question), orders the sentences; the weights and the command that produced
them are in excerpt_ranker.json beside this file. No weight is set by hand. Off by default
(`search.learned_excerpt`): it did not beat the hand-weighted excerpt score (bench/RESULTS.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from longqa import tokens
from longqa.linear import Stage, read_stage
from longqa.text.words import content_terms

WEIGHTS_FILE = Path(__file__).with_name("excerpt_ranker.json")

# name -> why it may tell a sentence that answers from one that does not
FEATURES: dict[str, str] = {
    "focus": "term coverage and cosine against the question or a further query, relative to the best sentence",
    "focus_rank": "1 / (1 + the sentence's rank by focus)",
    "leaf": "its paragraph's search score relative to the best paragraph (titles, hops, the whole document)",
    "title_match": "share of the question's content words in the paragraph's section path",
    "kind_fit": "1 when it holds a span of the kind the question asks for (a date, a figure, a duration)",
    "field": "1 when it is the label or value of the field the question asks for",
    "hop": "what naming the first hop's bridge entity added, relative to the best sentence",
    "first_of_paragraph": "1 for a paragraph's first sentence (topic sentences state, later ones elaborate)",
    "pronoun_start": "1 when it opens on a pronoun: it leans on the sentence before",
    "length": "log of its token count (a long sentence matches more words by chance)",
}

_PRONOUN_START = re.compile(r"^\W*(?:he|she|it|they|this|these|those|his|her|its|their)\b", re.I)


@dataclass
class Readings:
    """What the excerpt's steps added to each sentence's score, in the sentences' order."""

    focus: list[float]
    leaf: list[float]
    kind_fit: list[float] = field(default_factory=list)
    asked_field: list[float] = field(default_factory=list)
    hop: list[float] = field(default_factory=list)


def features(question: str, found: list, readings: Readings) -> list[dict[str, float]]:
    """Each sentence's named features (FEATURES), in the order of `found` (focus.Sentence)."""
    top = max(readings.focus, default=0.0) or 1.0
    best_leaf = max(readings.leaf, default=0.0) or 1.0
    rank = {i: r for r, i in enumerate(sorted(range(len(found)), key=lambda i: (-readings.focus[i], i)))}
    terms = set(content_terms(question))
    path_terms: dict[str, set[str]] = {}
    out, seen_leaves = [], set()
    for i, sentence in enumerate(found):
        path = sentence.leaf.path
        if path not in path_terms:
            path_terms[path] = set(content_terms(path))
        first = sentence.leaf.id not in seen_leaves
        seen_leaves.add(sentence.leaf.id)
        out.append({
            "focus": readings.focus[i] / top,
            "focus_rank": 1.0 / (1 + rank[i]),
            "leaf": max(0.0, readings.leaf[i]) / best_leaf,
            "title_match": len(terms & path_terms[path]) / len(terms) if terms else 0.0,
            "kind_fit": _at(readings.kind_fit, i),
            "field": _at(readings.asked_field, i),
            "hop": _at(readings.hop, i),
            "first_of_paragraph": float(first),
            "pronoun_start": float(bool(_PRONOUN_START.match(sentence.text))),
            "length": math.log1p(tokens.count(sentence.text)),
        })
    return out


def _at(values: list[float], i: int) -> float:
    return values[i] if i < len(values) else 0.0


@dataclass(frozen=True)
class ExcerptRanker:
    stage: Stage
    provenance: dict = field(default_factory=dict)

    def score(self, values: dict[str, float]) -> float:
        return self.stage.score(values)


@lru_cache(maxsize=4)
def load(path: Path = WEIGHTS_FILE) -> ExcerptRanker | None:
    """The shipped sentence ranker (None when no weights file ships: the hand-weighted score is used); a file that
    cannot be read as one is a one-line error naming it."""
    shipped = read_stage(path, set(FEATURES), "an excerpt ranker weights file")
    return ExcerptRanker(*shipped) if shipped is not None else None
