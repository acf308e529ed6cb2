"""Where sections and subsections start: a score for every gap between paragraph units, and the
choice of gaps at two levels.

Signals, each a per-gap "depth" (how far the similarity across the gap sits below the nearest
peaks on either side, TextTiling's depth score), z-normalised within the document:
- sentence-embedding similarity of the mean vectors of k units before and after the gap, for
  several k (k = 1 sees a sharp turn, larger k a gradual one and ignores a lone odd paragraph);
- lexical cohesion: cosine of the content-word counts of the blocks either side (TextTiling's
  block comparison), which catches a change of vocabulary the small embedder blurs.
The combined score is z-normalised again, so thresholds are relative to the document's own score
distribution ("mean + c·std"); a gap between two units that are plainly unrelated (cosine below
`absolute_cosine`) is a candidate whatever the distribution. Sections take the gaps above `section_cutoff` (local maxima, best
first, every section at least `min_section_tokens`); inside each section longer than
`subsection_from_tokens` a second pass, relative to that section's own gaps, opens subsections.
The generator's probabilities of a boundary measured at chance (bench/RESULTS.md) and are not used.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np


ABOVE_ANY_CUTOFF = 3.0  # the score given to a gap between unrelated neighbours


@dataclass(frozen=True)
class BoundarySettings:
    """Every tunable of boundary choice, tuned on the tune half of bench/structure_boundaries.py."""

    embed_windows: tuple[int, ...] = (1, 2, 3)  # units averaged on each side for the vector comparison
    lexical_units: int = 2  # units pooled on each side for the word-count comparison
    lexical_weight: float = 1.0  # weight of lexical depth against the mean embedding depth
    # Neighbouring units whose vectors (MiniLM) are less similar than this are different topics
    # whatever the rest of the document looks like: in concatenated articles nearly every gap is
    # a boundary, which a threshold relative to the document cannot see. Adjacent paragraphs of
    # one text mostly measure 0.3-0.6, unrelated articles 0.0-0.3 (tune set: top F1 0.61 at 0.25, 0.62 at 0.3 with
    # a fifth more sections in the PDFs, 0.50 at 0.2).
    absolute_cosine: float = 0.25
    section_cutoff: float = 0.5  # a gap opens a section when its z-score exceeds this
    min_section_tokens: int = 60  # no section smaller than this (short articles are sections)
    subsection_cutoff: float = 1.0  # same, against the z-scores of the gaps inside one section
    min_subsection_tokens: int = 60
    subsection_from_tokens: int = 700  # sections at least this long get a second pass


# Function words carry no topic; the list is short on purpose (the signal is the content words).
_STOP = frozenset(
    "the and for that with this from are was were been have has had not but all any can its into "
    "than then they them their there these those which while who whom what when where will would "
    "shall should could may might must also such each other more most some only over under about "
    "after before between both very our your his her she him you one two per upon out off own same "
    "does did doing being because through during above below again further once here why how".split()
)
_WORD = re.compile(r"[^\W\d_]{3,}")


def content_words(text: str) -> Counter:
    """Lower-cased words of three letters or more, without function words, plural -s cut."""
    words = (w.lower() for w in _WORD.findall(text))
    return Counter(w[:-1] if w.endswith("s") and len(w) > 4 else w for w in words if w.lower() not in _STOP)


def similarity_curve(vectors: np.ndarray, block: int) -> np.ndarray:
    """Cosine similarity across each gap g = 1..n-1 (between unit g-1 and unit g) of the mean
    vectors of up to `block` units on each side."""
    n = len(vectors)
    sims = np.ones(max(n - 1, 0))
    for g in range(1, n):
        left = vectors[max(0, g - block) : g].mean(axis=0)
        right = vectors[g : g + block].mean(axis=0)
        norm = float(np.linalg.norm(left) * np.linalg.norm(right))
        sims[g - 1] = float(left @ right) / norm if norm else 1.0
    return sims


def lexical_curve(counts: list[Counter], block: int) -> np.ndarray:
    """Cosine of the pooled word counts of up to `block` units on each side of every gap."""
    sims = np.ones(max(len(counts) - 1, 0))
    for g in range(1, len(counts)):
        left, right = Counter(), Counter()
        for c in counts[max(0, g - block) : g]:
            left.update(c)
        for c in counts[g : g + block]:
            right.update(c)
        dot = sum(v * right[w] for w, v in left.items() if w in right)
        norm = np.sqrt(sum(v * v for v in left.values()) * sum(v * v for v in right.values()))
        sims[g - 1] = dot / norm if norm else 1.0
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


def gap_scores(vectors: np.ndarray | None, texts: list[str], settings: BoundarySettings) -> np.ndarray:
    """The combined, z-normalised score of every gap (index g-1 for the gap before unit g);
    without vectors, lexical cohesion alone."""
    if len(texts) < 2:
        return np.zeros(0)
    lexical = zscore(depth_scores(lexical_curve([content_words(t) for t in texts], settings.lexical_units)))
    if vectors is None:
        return lexical
    embedding = np.mean([zscore(depth_scores(similarity_curve(vectors, k))) for k in settings.embed_windows], axis=0)
    combined = zscore(embedding + settings.lexical_weight * lexical)
    unrelated = similarity_curve(vectors, 1) < settings.absolute_cosine
    return np.where(unrelated, np.maximum(combined, ABOVE_ANY_CUTOFF), combined)


def choose_gaps(
    scores: dict[int, float],
    unit_tokens: list[int],
    min_tokens: int,
    cutoff: float,
) -> list[int]:
    """Gaps (unit indexes that open a section) chosen from `scores` (gap g, 1..n-1 → z-score):
    local maxima above `cutoff`, best first, while both neighbouring parts keep `min_tokens`."""
    n = len(unit_tokens)
    prefix = np.concatenate([[0], np.cumsum(unit_tokens)])
    chosen: list[int] = []

    def fits(g: int) -> bool:
        bounds = sorted([0, n, *chosen])
        at = int(np.searchsorted(bounds, g))
        lo, hi = bounds[at - 1], bounds[at]
        return prefix[g] - prefix[lo] >= min_tokens and prefix[hi] - prefix[g] >= min_tokens

    def local_max(g: int) -> bool:
        return all(scores[g] >= scores.get(h, -np.inf) for h in (g - 1, g + 1))

    for g in sorted(scores, key=lambda g: -scores[g]):
        if scores[g] > cutoff and local_max(g) and fits(g):
            chosen.append(g)
    return sorted(chosen)


def section_plan(scores: np.ndarray, unit_tokens: list[int], settings: BoundarySettings) -> list[tuple[int, int]]:
    """(unit, level) for every section (level 1) and subsection (level 2) start; unit 0 opens the
    first section. Subsection gaps are z-scored among the gaps of their own section."""
    n = len(unit_tokens)
    everywhere = {g: float(scores[g - 1]) for g in range(1, n)}
    starts = [0, *choose_gaps(everywhere, unit_tokens, settings.min_section_tokens, settings.section_cutoff)]
    plan = [(s, 1) for s in starts]
    for lo, hi in zip(starts, [*starts[1:], n]):
        if sum(unit_tokens[lo:hi]) < settings.subsection_from_tokens or hi - lo < 3:
            continue
        inside = zscore(np.array([scores[g - 1] for g in range(lo + 1, hi)]))
        local = {g - lo: float(z) for g, z in zip(range(lo + 1, hi), inside)}
        subs = choose_gaps(local, unit_tokens[lo:hi], settings.min_subsection_tokens, settings.subsection_cutoff)
        plan += [(lo + g, 2) for g in subs]
    return sorted(plan)
