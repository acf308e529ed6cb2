"""Where sections start: a score for every gap between paragraph units, and the choice of gaps.

Two signals, each turned into a per-gap score where higher means "a new topic starts here":
- sentence-embedding similarity of the units on either side of the gap (TextTiling's depth score,
  computed on vectors instead of word counts);
- the generator's own probability of closing the section at that gap in the outline it writes.
Scores are z-normalised so they can be added with weights. Gaps are then picked from the highest
score down, as long as every section keeps a minimum size; oversized sections are split at their
best remaining gap.
"""

from __future__ import annotations

import numpy as np

BLOCK_UNITS = 2  # units averaged on each side of a gap
CUTOFF = 0.5  # a gap is a candidate when its z-score exceeds this (about the top third)


def similarity_curve(vectors: np.ndarray, block: int = BLOCK_UNITS) -> np.ndarray:
    """Cosine similarity across each gap g = 1..n-1 (between unit g-1 and unit g)."""
    n = len(vectors)
    sims = np.ones(max(n - 1, 0))
    for g in range(1, n):
        left = vectors[max(0, g - block) : g].mean(axis=0)
        right = vectors[g : g + block].mean(axis=0)
        norm = float(np.linalg.norm(left) * np.linalg.norm(right))
        sims[g - 1] = float(left @ right) / norm if norm else 1.0
    return sims


def depth_scores(sims: np.ndarray) -> np.ndarray:
    """How far each gap's similarity sits below the nearest peaks on its left and right."""
    depths = np.zeros_like(sims)
    for i, value in enumerate(sims):
        left = i
        while left > 0 and sims[left - 1] >= sims[left]:
            left -= 1
        right = i
        while right < len(sims) - 1 and sims[right + 1] >= sims[right]:
            right += 1
        depths[i] = (sims[left] - value) + (sims[right] - value)
    return depths


def zscore(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    spread = values.std()
    return (values - values.mean()) / spread if spread > 1e-9 else np.zeros_like(values)


def choose_gaps(
    scores: dict[int, float],
    unit_tokens: list[int],
    min_tokens: int,
    cutoff: float = CUTOFF,
    open_ends: tuple[bool, bool] = (False, False),
) -> list[int]:
    """Gaps (unit indexes that open a section) chosen from `scores` (gap g, 1..n-1 → z-score).

    Local maxima above `cutoff` are taken best first while both neighbouring sections keep
    `min_tokens`. An open end (a window edge inside the document) is not a section boundary, so
    the section running into it has no minimum here.
    """
    n = len(unit_tokens)
    prefix = np.concatenate([[0], np.cumsum(unit_tokens)])
    chosen: list[int] = []

    def fits(g: int) -> bool:
        bounds = sorted([0, n, *chosen])
        at = int(np.searchsorted(bounds, g))
        lo, hi = bounds[at - 1], bounds[at]
        left_ok = (lo == 0 and open_ends[0]) or prefix[g] - prefix[lo] >= min_tokens
        right_ok = (hi == n and open_ends[1]) or prefix[hi] - prefix[g] >= min_tokens
        return left_ok and right_ok

    def local_max(g: int) -> bool:
        return all(scores[g] >= scores.get(h, -np.inf) for h in (g - 1, g + 1))

    for g in sorted(scores, key=lambda g: -scores[g]):
        if scores[g] > cutoff and local_max(g) and fits(g):
            chosen.append(g)
    return sorted(chosen)


def split_oversized(
    starts: list[int], scores: dict[int, float], unit_tokens: list[int], min_tokens: int, max_tokens: int
) -> list[int]:
    """Extra section starts that cut every section longer than `max_tokens` at its best-scoring
    gap (keeping both halves at `min_tokens` where possible); `starts` must include 0."""
    n = len(unit_tokens)
    prefix = np.concatenate([[0], np.cumsum(unit_tokens)])
    bounds = sorted(set(starts) | {n})
    added: list[int] = []
    queue = list(zip(bounds, bounds[1:]))
    while queue:
        lo, hi = queue.pop()
        if prefix[hi] - prefix[lo] <= max_tokens or hi - lo < 2:
            continue
        inside = list(range(lo + 1, hi))
        roomy = [g for g in inside if min(prefix[g] - prefix[lo], prefix[hi] - prefix[g]) >= min_tokens]
        cut = max(roomy or inside, key=lambda g: (scores.get(g, 0.0), -abs(prefix[g] - (prefix[lo] + prefix[hi]) / 2)))
        added.append(cut)
        queue += [(lo, cut), (cut, hi)]
    return sorted(added)
