"""Where sections and subsections start: a score for every gap between paragraph units, and the
choice of gaps at two levels.

Signals, each a per-gap "depth" (how far the similarity across the gap sits below the nearest
peaks on either side, TextTiling's depth score), z-normalised within the document:
- sentence-embedding similarity of the mean vectors of k units before and after the gap, for
  several k (k = 1 sees a sharp turn, larger k a gradual one and ignores a lone odd paragraph);
- lexical cohesion: cosine of the content-word counts of the blocks either side (TextTiling's
  block comparison), which catches a change of vocabulary the small embedder blurs, and the plain
  content-word cosine of the two neighbouring units;
- layout and wording cues that survive the loss of headings (unit_cues.py): a unit that starts
  mid-sentence opens nothing; a unit that starts a new PDF page scores a little higher;
- a unit that starts flush left in a PDF whose paragraphs mostly start indented (unit_cues.py:
  typeset papers indent every paragraph but the first after a heading) scores higher;
- the units' shapes (unit_shape.py): the topic signals read prose only, passing over short runs
  of tables, small print, lists and formulas (a table scores like unrelated text against the
  paragraph before it, yet opens no section); nothing starts inside a run of one shape, and a
  long run of tables or lists after prose (a filmography, the references) scores a little higher.
The combined score is z-normalised again, so thresholds are relative to the document's own score
distribution ("mean + c·std"); a gap between two units that are plainly unrelated (cosine below
`absolute_cosine`) is a candidate whatever the distribution.

Two kinds of document are told apart:
- a collection of short articles (a share `collection_openers` of the units opens like an
  encyclopedia article): every gap before an article opener, or between neighbours less similar
  than `collection_cosine`, opens a section;
- running text: sections take the gaps above `section_cutoff` (local maxima, best first, every
  section at least `min_section_tokens`), at most one per `section_tokens` of text besides the
  clear gaps (unrelated neighbours, or a score of `clear_gap_score`): a prior on section length,
  so that the top level is not over-split; the weaker gaps become subsections. Inside each section longer than
  `subsection_from_tokens` a second pass, relative to that section's own gaps, opens more.
The generator's probabilities of a boundary measured at chance (bench/RESULTS.md) and are not used.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from longqa import tokens
from longqa.structure.unit_cues import article_opener, continues_sentence, first_lines
from longqa.structure.unit_shape import PROSE

ABOVE_ANY_CUTOFF = 3.0  # the score given to a gap between unrelated neighbours


@dataclass(frozen=True)
class BoundarySettings:
    """Every tunable of boundary choice, tuned on the tune half of bench/structure_boundaries.py."""

    embed_windows: tuple[int, ...] = (1, 2, 3)  # units averaged on each side for the vector comparison
    lexical_units: int = 2  # units pooled on each side for the word-count comparison
    lexical_weight: float = 1.0  # weight of lexical depth against the mean embedding depth
    # Weight of the neighbours' own content-word dissimilarity (z-scored); the best single signal
    # on the tune PDFs (AUC 0.67 against 0.54-0.61 for the depths), small as it is noisy.
    neighbour_lexical_weight: float = 0.5
    # Added to the z-score of a gap where a new PDF page starts (tune PDFs, any-level F1: 0.46
    # without, 0.51 at 0.5, 0.53 at 1.0; the top level unchanged).
    page_break_bonus: float = 0.5
    # Neighbouring units of running text whose vectors (MiniLM) are less similar than this are
    # different topics whatever the rest of the document looks like (adjacent paragraphs of one
    # text mostly measure 0.3-0.6). Collections of articles have their own floor below. Tune set,
    # running text: 0.25 placed 10 of 36 top-level starts right, 0.15 10 of 31 (tables and
    # formulas in PDFs measure 0.2-0.25 against their neighbours), a difference within noise; the
    # handbook's sections (a report document, seen through its test) part at 0.15-0.25, so 0.25 stays.
    absolute_cosine: float = 0.25
    section_cutoff: float = 0.5  # a gap opens a section when its z-score exceeds this
    min_section_tokens: int = 60  # no section smaller than this (short articles are sections)
    subsection_cutoff: float = 1.0  # same, against the z-scores of the gaps inside one section
    min_subsection_tokens: int = 60
    subsection_from_tokens: int = 700  # sections at least this long get a second pass
    # Running text: at most one section per this many tokens besides the unrelated-neighbour gaps
    # (the tune papers and Wikipedia pages have one top-level heading per 700-1,100 tokens); the
    # gaps over the count become subsections. 0 turns the prior off.
    section_tokens: int = 700
    # A gap scoring this much stands clear of the rest and is a section whatever the count says
    # (tune: 0.777 top F1 at 1.0-1.5, 0.779 at 2.0; at 1.25 a 1,000-token text of three topics keeps
    # its three sections without an embedder).
    clear_gap_score: float = 1.25
    # A collection of articles: at least this share of the units open like an article (tune:
    # 0.44-1.0 in the multi-article files, at most 0.08 in papers and Wikipedia pages).
    collection_openers: float = 0.3
    # In a collection, neighbours less similar than this are different articles besides the
    # openers (tune: multi-article top F1 0.914 at 0.35, 0.925 at 0.45 and 0.5).
    collection_cosine: float = 0.45
    # A unit starting mid-sentence opens nothing, unless this share of units or more starts so
    # (a text written in lower case, where the cue means nothing; tune PDFs: at most 0.28).
    mid_sentence_max_share: float = 0.5
    read_shapes: bool = True  # read the units' shapes (unit_shape.py) where the caller gives them
    # Runs of tables, small print, lists or formulas shorter than this are passed over by the
    # topic signals (unit_shape.py); longer runs are parts of their own. Tune PDFs (top / any-level
    # F1): shapes unread 0.32 / 0.51; 250 0.36 / 0.54 (paper tables of 250-400 tokens still cut
    # out as sections); 400 and 600 0.36 / 0.62.
    display_run_tokens: int = 400
    # Added where prose gives way to a long run of tables or lists (a filmography, references):
    # any-level F1 0.60 at 0, 0.62 at 0.5-2.0 (tune PDFs).
    display_run_bonus: float = 0.5
    # The first-line indent (the parser's Block.indent; unit_cues.first_lines). A document shows
    # the pattern of a typeset paper (every paragraph indented but the first after a heading) when
    # at least `indent_least` prose units that start a sentence have a known indent and a share
    # `indented_share` of them start indented by `indent_points` or more (tune PDFs: 0.53 in the
    # ACL paper, at most 0.04 in the ICLR paper and the Wikipedia prints). There, a unit starting
    # flush left scores `indent_bonus` more (a heading was just before it) and an indented one
    # `indent_penalty` less. Tune PDFs (top / any-level F1; 0.36 / 0.62 without the cue): bonus
    # 1.5-2.0 0.41 / 0.67, 2.5-4.0 0.44 / 0.67; penalty 0-1 within one start. 0 and 0 turn it off.
    indent_bonus: float = 2.5
    indent_penalty: float = 1.0
    indent_points: float = 3.0
    indented_share: float = 0.4
    indent_least: int = 8
    # Two flush starts in a row: the first unit is a section's one-paragraph lead-in and the second
    # opens its first subsection, so the second opens no section (tune PDFs: top F1 0.41 without
    # this at bonus 3.0, 0.44 with it).
    lead_in_subsections: bool = True


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


@dataclass
class Gaps:
    """What is known about every gap g = 1..n-1 (array index g-1: the gap before unit g)."""

    score: np.ndarray  # combined z-score; -inf where no section may start
    unrelated: np.ndarray  # neighbours' vectors less similar than `absolute_cosine`
    cosine: np.ndarray  # neighbours' vector cosine (1.0 without vectors)
    opener: np.ndarray  # unit g opens like an encyclopedia article
    continuation: np.ndarray  # unit g starts mid-sentence
    page_break: np.ndarray  # unit g starts a new page
    collection: bool  # the document reads as a collection of short articles
    flush: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # unit g starts flush left (indent cue)


def gap_scores(
    vectors: np.ndarray | None,
    texts: list[str],
    settings: BoundarySettings,
    pages: list[tuple[int, int]] | None = None,
    shapes: list[str] | None = None,
    indents: list[float | None] | None = None,
) -> Gaps:
    """Every gap's signals and combined score; without vectors, lexical cohesion alone. `pages`
    gives each unit's (first, last) page when the document has pages; `shapes` each unit's shape
    (unit_shape.py: prose, table, small print, list, formula), None when unknown; `indents` each
    unit's first-line indent in points (unit_cues.unit_indents), None when unknown."""
    n = len(texts)
    gaps = max(n - 1, 0)
    opener = np.array([article_opener(t) for t in texts], dtype=bool)
    continuation = np.array([continues_sentence(t) for t in texts[1:]], dtype=bool)
    if continuation.size and continuation.mean() >= settings.mid_sentence_max_share:
        continuation[:] = False
    page_break = np.array([pages[g][0] != pages[g - 1][1] for g in range(1, n)] if pages else [False] * gaps, dtype=bool)
    collection = bool(n >= 3 and opener.mean() >= settings.collection_openers)
    if n < 2:
        empty = np.zeros(0)
        return Gaps(empty, empty.astype(bool), empty, empty.astype(bool), empty.astype(bool), empty.astype(bool), False)
    if not settings.read_shapes:
        shapes = None
    hidden = short_displays(texts, shapes, settings) if shapes is not None and not collection else np.zeros(n, dtype=bool)
    seen = [u for u in range(n) if not hidden[u]]  # the units the topic signals read
    if len(seen) < 2:
        seen, hidden = list(range(n)), np.zeros(n, dtype=bool)
    combined, cosine_seen = topic_scores(
        None if vectors is None else vectors[seen], [texts[u] for u in seen], settings)
    # A gap of the units read stands for the gap before the first unit it passes over (a figure
    # and its caption, a table, a formula: in a page's flow they open the part they illustrate
    # as often as they close one; 300 characters either way is the benchmark's tolerance), or
    # for the gap after them where the first begins mid-sentence (the end of a cut paragraph).
    score = np.full(gaps, -np.inf)
    cosine = np.ones(gaps)
    unrelated = np.zeros(gaps, dtype=bool)
    for j in range(1, len(seen)):
        before, after = seen[j - 1], seen[j]
        g = before + 1  # the unit that would open a section
        if g < after and continuation[g - 1]:
            g = after
        if continuation[after - 1]:
            continue  # the text after the display goes on with the sentence before it
        broke = bool(pages) and pages[after][0] != pages[before][1]
        value = combined[j - 1] + settings.page_break_bonus * broke
        related = cosine_seen[j - 1] >= settings.absolute_cosine
        if not related and not (shapes and (shapes[before] != PROSE or shapes[after] != PROSE)):
            value, unrelated[g - 1] = max(value, ABOVE_ANY_CUTOFF), True
        score[g - 1], cosine[g - 1] = value, cosine_seen[j - 1]
    if shapes is not None:
        for g in range(1, n):
            if hidden[g] or hidden[g - 1]:
                continue
            if shapes[g] != PROSE and shapes[g] == shapes[g - 1]:
                score[g - 1] = -np.inf  # inside one table or list
            elif shapes[g] != PROSE and shapes[g - 1] == PROSE and np.isfinite(score[g - 1]):
                score[g - 1] += settings.display_run_bonus  # a long table or list begins
    flush = np.zeros(gaps, dtype=bool)
    if indents is not None and (settings.indent_bonus or settings.indent_penalty) and not collection:
        if shapes is not None:  # captions, footnotes and tables keep their own indents
            indents = [value if shapes[u] == PROSE else None for u, value in enumerate(indents)]
        marks = np.array(first_lines(indents, texts, settings.indent_points, settings.indented_share,
                                     settings.indent_least)[1:])
        flush = marks == 1
        score = np.where(flush & np.isfinite(score), score + settings.indent_bonus, score)
        score = np.where(marks == -1, score - settings.indent_penalty, score)
    score = np.where(continuation, -np.inf, score)
    return Gaps(score, unrelated & ~continuation, cosine, opener[1:], continuation, page_break, collection, flush)


def topic_scores(vectors: np.ndarray | None, texts: list[str], settings: BoundarySettings) -> tuple[np.ndarray, np.ndarray]:
    """The combined topic-shift z-score of every gap of a sequence of units (page bonus aside),
    and the neighbours' vector cosine (1.0 without vectors)."""
    counts = [content_words(t) for t in texts]
    combined = zscore(depth_scores(lexical_curve(counts, settings.lexical_units)))
    cosine = np.ones(len(texts) - 1)
    if vectors is not None:
        embedding = np.mean([zscore(depth_scores(similarity_curve(vectors, k))) for k in settings.embed_windows], axis=0)
        combined = embedding + settings.lexical_weight * combined
        cosine = similarity_curve(vectors, 1)
    if settings.neighbour_lexical_weight:
        combined = combined + settings.neighbour_lexical_weight * zscore(-lexical_curve(counts, 1))
    return zscore(combined), cosine


def short_displays(texts: list[str], shapes: list[str], settings: BoundarySettings) -> np.ndarray:
    """Units in a run of non-prose (one shape or several) shorter than `display_run_tokens`: the
    topic signals pass over them. The first unit is never passed over."""
    hidden = np.zeros(len(texts), dtype=bool)
    u = 1
    while u < len(texts):
        if shapes[u] == PROSE:
            u += 1
            continue
        end = u
        while end < len(texts) and shapes[end] != PROSE:
            end += 1
        if sum(tokens.count(t) for t in texts[u:end]) < settings.display_run_tokens and end < len(texts):
            hidden[u:end] = True
        u = end
    return hidden


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


def section_plan(gaps: Gaps, unit_tokens: list[int], settings: BoundarySettings) -> list[tuple[int, int]]:
    """(unit, level) for every section (level 1) and subsection (level 2) start; unit 0 opens the
    first section."""
    n = len(unit_tokens)
    scores = gaps.score
    if gaps.collection:
        article = gaps.opener | (gaps.cosine < settings.collection_cosine)
        return [(0, 1)] + [(g, 1) for g in range(1, n) if article[g - 1] and not gaps.continuation[g - 1]]
    everywhere = {g: float(scores[g - 1]) for g in range(1, n)}
    if settings.lead_in_subsections and gaps.flush.size:
        # Two flush starts in a row: a section's one-unit lead-in, then its first subsection.
        for g in range(2, n):
            if gaps.flush[g - 1] and gaps.flush[g - 2]:
                everywhere[g] = -np.inf
    found = choose_gaps(everywhere, unit_tokens, settings.min_section_tokens, settings.section_cutoff)
    # Clear gaps (unrelated neighbours, or a score of `clear_gap_score`) first, then by score;
    # the count prior keeps the best, never fewer than the clear ones.
    clear = {g for g in found if gaps.unrelated[g - 1] or everywhere[g] >= settings.clear_gap_score}
    ranked = sorted(found, key=lambda g: (g not in clear, -everywhere[g]))
    keep = len(ranked)
    if settings.section_tokens:
        keep = max(round(sum(unit_tokens) / settings.section_tokens) - 1, len(clear))
    starts = [0, *sorted(ranked[:keep])]
    levels = {s: 1 for s in starts}
    for g in ranked[keep:]:
        levels[g] = 2
    for lo, hi in zip(starts, [*starts[1:], n]):
        if sum(unit_tokens[lo:hi]) < settings.subsection_from_tokens or hi - lo < 3:
            continue
        inside = np.array([scores[g - 1] for g in range(lo + 1, hi)])
        finite = np.isfinite(inside)
        inside[finite] = zscore(inside[finite])  # gaps where nothing may start stay -inf
        local = {g - lo: float(z) for g, z in zip(range(lo + 1, hi), inside)}
        for g in choose_gaps(local, unit_tokens[lo:hi], settings.min_subsection_tokens, settings.subsection_cutoff):
            levels.setdefault(lo + g, 2)
    return sorted(levels.items())
