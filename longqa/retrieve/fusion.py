"""Hybrid score fusion (OkraLong's assembled retriever): min-max each list, weight, add, cut.

Each retriever's top-k scores are min-max normalised to [0, 1] on their own (BM25 and cosine live
on unrelated scales), combined with weights that lean 3:2 toward the side the question's
information pattern favours (1:1 when it favours both), and candidates below 0.1 x the best fused
score are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from longqa.retrieve.bm25 import Hit

PATTERNS = ("exact", "semantic", "both")
RELATIVE_CUTOFF = 0.1


@dataclass
class Fused:
    node_id: int
    score: float  # weighted sum of the normalised scores
    bm25: float = 0.0  # normalised BM25 (0 when BM25 did not return the leaf)
    dense: float = 0.0  # normalised cosine
    bm25_raw: float | None = None
    dense_raw: float | None = None


def weights(pattern: str) -> tuple[float, float]:
    """(BM25 weight, dense weight) for an information pattern: exact, semantic or both."""
    if pattern == "exact":
        return 0.6, 0.4
    if pattern == "semantic":
        return 0.4, 0.6
    return 0.5, 0.5


def min_max(hits: list[Hit]) -> dict[int, float]:
    """Scores rescaled to [0, 1] over this list; a list whose scores are all equal maps to 1."""
    if not hits:
        return {}
    low = min(h.score for h in hits)
    high = max(h.score for h in hits)
    if high - low <= 1e-12:
        return {h.node_id: 1.0 for h in hits}
    return {h.node_id: (h.score - low) / (high - low) for h in hits}


def fuse(
    bm25_hits: list[Hit],
    dense_hits: list[Hit],
    pattern: str = "both",
    cutoff: float = RELATIVE_CUTOFF,
) -> list[Fused]:
    """Fused candidates, best first, without those under `cutoff` x the best fused score."""
    w_bm25, w_dense = weights(pattern)
    if not dense_hits:  # one retriever only: its normalised score is the fused score
        w_bm25, w_dense = 1.0, 0.0
    elif not bm25_hits:
        w_bm25, w_dense = 0.0, 1.0
    norm_bm25, norm_dense = min_max(bm25_hits), min_max(dense_hits)
    raw_bm25 = {h.node_id: h.score for h in bm25_hits}
    raw_dense = {h.node_id: h.score for h in dense_hits}
    fused = []
    for node_id in dict.fromkeys([*raw_bm25, *raw_dense]):
        b, d = norm_bm25.get(node_id, 0.0), norm_dense.get(node_id, 0.0)
        fused.append(
            Fused(node_id, w_bm25 * b + w_dense * d, b, d, raw_bm25.get(node_id), raw_dense.get(node_id))
        )
    fused.sort(key=lambda f: (-f.score, f.node_id))
    if not fused:
        return []
    best = fused[0].score
    return [f for f in fused if f.score >= cutoff * best and f.score > 0]
