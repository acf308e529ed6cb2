"""Hybrid score fusion (OkraLong's assembled retriever): normalise, weight, name prior, cut.

The one scoring path of first-stage retrieval, in this order:
1. each retriever's top-k scores are min-max normalised to [0, 1] on their own (BM25 and cosine
   live on unrelated scales);
2. they are combined with weights that lean 3:2 toward the side the question's information
   pattern favours (1:1 when it favours both);
3. when the question names some documents (docnames.py), a leaf's score is multiplied by
   (1 + name_boost x its document's name match) / (1 + name_boost), so leaves of documents the
   question does not name count 1 / (1 + name_boost) as much;
4. candidates below relative_cutoff (0.1) x the best score are dropped.
The numbers are retrieve/settings.py's.
"""

from __future__ import annotations

from dataclasses import dataclass

from longqa.retrieve.bm25 import Hit
from longqa.retrieve.settings import RetrievalSettings

PATTERNS = ("exact", "semantic", "both")


@dataclass
class Fused:
    node_id: int
    score: float  # weighted sum of the normalised scores
    bm25: float = 0.0  # normalised BM25 (0 when BM25 did not return the leaf)
    dense: float = 0.0  # normalised cosine
    bm25_raw: float | None = None
    dense_raw: float | None = None


def weights(pattern: str, lean: float) -> tuple[float, float]:
    """(BM25 weight, dense weight) for an information pattern: exact, semantic or both; `lean` is
    the call's `retrieval.pattern_lean`."""
    if pattern == "exact":
        return lean, 1 - lean
    if pattern == "semantic":
        return 1 - lean, lean
    return 0.5, 0.5


def min_max(values: dict[int, float], floor: float | None = None) -> dict[int, float]:
    """Rescale to [0, 1] over `values`; `floor` (if given) is the value that maps to 0 when it is
    lower than every value (BM25: a leaf without any query word scores 0, so 0 is the floor).
    Values all equal map to 1 (to 0 when they sit on the floor)."""
    if not values:
        return {}
    low = min(values.values()) if floor is None else min(floor, min(values.values()))
    high = max(values.values())
    if high - low <= 1e-12:
        return {k: (1.0 if high > 0 or floor is None else 0.0) for k in values}
    return {k: (v - low) / (high - low) for k, v in values.items()}


def fuse(
    bm25_hits: list[Hit],
    dense_hits: list[Hit],
    pattern: str = "both",
    name_match: dict[int, float] | None = None,
    doc_of: dict[int, int] | None = None,
    *,
    settings: RetrievalSettings,
) -> list[Fused]:
    """Fused candidates, best first, without those under `cutoff` x the best score.

    `name_match` (document id -> how well the question names it, in [0, 1]) and `doc_of` (leaf
    id -> document id) give the document-name prior; without them no leaf is down-weighted.
    `settings` is the call's retrieval section: its name_boost, relative_cutoff and pattern_lean."""
    name_boost, cutoff = settings.name_boost, settings.relative_cutoff
    w_bm25, w_dense = weights(pattern, settings.pattern_lean)
    if not dense_hits:  # one retriever only: its normalised score is the fused score
        w_bm25, w_dense = 1.0, 0.0
    elif not bm25_hits:
        w_bm25, w_dense = 0.0, 1.0
    norm_bm25 = min_max({h.node_id: h.score for h in bm25_hits})
    norm_dense = min_max({h.node_id: h.score for h in dense_hits})
    raw_bm25 = {h.node_id: h.score for h in bm25_hits}
    raw_dense = {h.node_id: h.score for h in dense_hits}
    fused = []
    for node_id in dict.fromkeys([*raw_bm25, *raw_dense]):
        b, d = norm_bm25.get(node_id, 0.0), norm_dense.get(node_id, 0.0)
        score = w_bm25 * b + w_dense * d
        if name_match:
            prior = name_match.get((doc_of or {}).get(node_id, -1), 0.0)
            score *= (1 + name_boost * prior) / (1 + name_boost)
        fused.append(Fused(node_id, score, b, d, raw_bm25.get(node_id), raw_dense.get(node_id)))
    fused.sort(key=lambda f: (-f.score, f.node_id))
    if not fused:
        return []
    best = fused[0].score
    return [f for f in fused if f.score >= cutoff * best and f.score > 0]
