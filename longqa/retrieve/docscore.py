"""Document-level scores: which documents' trees are refined for a question.

A document scores its best leaf's fused first-stage score (MaxP, as LongRefiner's retriever
ranks whole documents; the fused score already carries the document-name boost of hybrid.py).
The candidates are the documents within `relative` x the best document's score, at most
`max_docs` of them: a question about one filing keeps that filing alone when it stands out, a
question whose evidence is spread over several articles keeps every article that scores close.
"""

from __future__ import annotations


def document_scores(leaf_scores: dict[int, float], doc_of: dict[int, int]) -> dict[int, float]:
    """Document id -> its best leaf score."""
    best: dict[int, float] = {}
    for leaf, score in leaf_scores.items():
        doc = doc_of.get(leaf)
        if doc is not None and score > best.get(doc, 0.0):
            best[doc] = score
    return best


def candidate_documents(doc_scores: dict[int, float], relative: float, max_docs: int) -> list[int]:
    """Best first: documents scoring at least `relative` x the best, at most `max_docs`."""
    if not doc_scores:
        return []
    top = max(doc_scores.values())
    ranked = sorted(doc_scores, key=lambda d: (-doc_scores[d], d))
    return [d for d in ranked if doc_scores[d] >= relative * top and doc_scores[d] > 0][:max(1, max_docs)]


def document_weights(doc_scores: dict[int, float], docs: list[int]) -> dict[int, float]:
    """Each candidate's score relative to the best candidate, in (0, 1]: a prior on its leaves."""
    top = max((doc_scores.get(d, 0.0) for d in docs), default=0.0)
    return {d: (doc_scores.get(d, 0.0) / top if top > 0 else 1.0) for d in docs}
