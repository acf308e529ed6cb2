"""Answer-quality and context measures, all pure functions over strings.

Normalisation follows SQuAD: lowercase, drop punctuation, drop the articles a/an/the, collapse
whitespace. Answer recall asks whether a normalised gold answer occurs, on word boundaries, in the
normalised context. Evidence coverage is measured in a *contiguous window*: the share of the
evidence's tokens (as a multiset) found inside the best window of the context that is as long as the
evidence. A window rather than the whole context, because a 2,000-token context contains most
common words somewhere and would cover short evidence passages by accident.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable, Sequence

EVIDENCE_THRESHOLD = 0.8  # a gold passage counts as covered at this share of its tokens

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "‘’“”–—…")


def normalize(text: str) -> str:
    """SQuAD answer normalisation."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def tokens_of(text: str) -> list[str]:
    return normalize(text).split()


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals any normalised gold answer."""
    norm = normalize(prediction)
    return float(any(norm == normalize(gold) for gold in golds))


def _f1(prediction: list[str], gold: list[str]) -> float:
    if not prediction or not gold:
        return float(prediction == gold)
    common = sum((Counter(prediction) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(prediction), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """SQuAD token F1, the best over the gold answers."""
    pred = tokens_of(prediction)
    return max((_f1(pred, tokens_of(gold)) for gold in golds), default=0.0)


UNLOCATABLE = {"yes", "no"}  # verdicts, not spans: a context never "contains" them meaningfully


def answer_in_context(golds: Iterable[str], context: str) -> bool | None:
    """Whether any normalised gold answer appears in the normalised context on word boundaries.

    None when no gold answer is left to look for (none given, or only yes/no)."""
    needles = [normalize(gold) for gold in golds]
    needles = [n for n in needles if n and n not in UNLOCATABLE]
    haystack = f" {normalize(context)} " if needles else ""
    if not needles:
        return None
    return any(f" {needle} " in haystack for needle in needles)


def window_coverage(evidence: Sequence[str], context: Sequence[str]) -> float:
    """Largest share of the evidence's tokens (multiset) inside one context window of equal length.

    Slides the window once over the context, updating matched counts incrementally: O(len(context))."""
    need = Counter(evidence)
    size = len(evidence)
    if size == 0:
        return 0.0
    if not context:
        return 0.0
    have: Counter[str] = Counter()
    matched = best = 0
    for i, token in enumerate(context):
        if have[token] < need[token]:
            matched += 1
        have[token] += 1
        if i >= size:  # drop the token that left the window
            old = context[i - size]
            have[old] -= 1
            if have[old] < need[old]:
                matched -= 1
        if matched > best:
            best = matched
            if best == size:
                break
    return best / size


def evidence_recall(evidence_texts: Sequence[str], context: str) -> tuple[float | None, list[float]]:
    """Share of evidence passages covered (coverage ≥ EVIDENCE_THRESHOLD), and each coverage.

    None when the record has no usable evidence."""
    passages = [tokens_of(text) for text in evidence_texts]
    passages = [p for p in passages if p]
    if not passages:
        return None, []
    context_tokens = tokens_of(context)
    coverages = [window_coverage(p, context_tokens) for p in passages]
    covered = sum(1 for c in coverages if c >= EVIDENCE_THRESHOLD)
    return covered / len(passages), coverages


def page_hit(
    gold_pages: Iterable[int], spans: Iterable[tuple[int, int]]
) -> bool | None:
    """Whether any context passage's page span [start, end] includes a gold evidence page.

    `spans` must already be limited to passages from the question's own documents. None when the
    record has no evidence page."""
    pages = {p for p in gold_pages if p}
    if not pages:
        return None
    return any(start <= page <= end for start, end in spans for page in pages)
