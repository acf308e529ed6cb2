"""Global selection (LongRefiner's GS): pick sections from the candidate documents' outlines.

The model sees a short table of contents (section titles, plus a one-line summary where ingest
wrote one) with a letter per section, and the probability of each letter after "The section that
answers the question is section" is read in one forward pass; the choice cannot name a section
that is not there. Small base models favour early letters whatever the question, so the letters'
probabilities for a content-free question are divided out (contextual calibration); that second
pass shares the whole outline prefix with the first and costs only the question's tokens.
What is left of the choice counts only as far as it stands above chance (above_chance).
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from longqa.ask import decisions
from longqa.ask.settings import in_effect
from longqa.models.base import Generator
from longqa.tree_types import Node, walk

NEUTRAL_QUESTION = "N/A"


@dataclass
class OutlineChoice:
    weights: dict[int, float]  # section id -> GS weight in (0, 1], see above_chance
    shown: list[tuple[str, int, str]]  # (letter, section id, title)
    probs: dict[int, float]  # calibrated probability per shown section


def candidate_sections(roots: list[Node], leaf_scores: dict[int, float], limit: int | None = None) -> list[Node]:
    """Up to `limit` sections: half the ones holding the best retrieved leaves, the rest the top-level
    sections of the best document (so the outline is not only what retrieval already found).
    `limit`: the call's expansion.outline_entries unless given (read at the call, not at import)."""
    limit = in_effect().expansion.outline_entries if limit is None else limit
    best: dict[int, float] = {}
    sections: list[Node] = []
    for root in roots:
        for node in walk(root):
            if node.is_leaf or node is root or not node.children:
                continue
            sections.append(node)
            best[node.id] = max((leaf_scores.get(n.id, 0.0) for n in walk(node) if n.is_leaf), default=0.0)
    by_retrieval = [s for s in sorted(sections, key=lambda s: (-best[s.id], -s.depth)) if best[s.id] > 0]
    picked = {s.id: s for s in by_retrieval[: limit // 2]}
    if roots:
        for section in roots[0].children:
            if len(picked) >= limit:
                break
            if not section.is_leaf and section.children:
                picked.setdefault(section.id, section)
    for section in by_retrieval[limit // 2:]:
        if len(picked) >= limit:
            break
        picked.setdefault(section.id, section)
    order = {n.id: i for i, n in enumerate(n for root in roots for n in walk(root))}
    return sorted(picked.values(), key=lambda s: order[s.id])


def outline_entries(sections: list[Node]) -> list[tuple[str, int, str]]:
    """(letter, section id, shown text) per section; letters are single tokens for the model."""
    letters = string.ascii_uppercase
    return [(letters[i], s.id, _entry(s)) for i, s in enumerate(sections[: len(letters)])]


def choose_sections(
    generator: Generator, question: str, sections: list[Node], doc_titles: dict[int, str]
) -> OutlineChoice:
    """GS weights for the sections the model picks for `question` (see above_chance)."""
    shown = outline_entries(sections)
    if len(shown) < 2:
        return OutlineChoice({}, shown, {})
    lines, current_doc = [], None
    for (letter, _, title), section in zip(shown, sections):
        if section.doc_id != current_doc:
            current_doc = section.doc_id
            lines.append(f"Document: {doc_titles.get(section.doc_id, '')}")
        lines.append(f"{letter}. {title}")
    letters = [letter for letter, _, _ in shown]
    asked = decisions.outline(generator, lines, question, letters)
    neutral = decisions.outline(generator, lines, NEUTRAL_QUESTION, letters)
    calibrated = {letter: asked[letter] / max(neutral[letter], 1e-6) for letter in letters}
    total = sum(calibrated.values()) or 1.0
    probs = {section_id: calibrated[letter] / total for letter, section_id, _ in shown}
    weights = {}
    for section_id, p in sorted(probs.items(), key=lambda kv: -kv[1])[:in_effect().expansion.outline_max_chosen]:
        weight = above_chance(p, len(shown))
        if weight >= in_effect().expansion.outline_min_weight:
            weights[section_id] = weight
    return OutlineChoice(weights, shown, probs)


def above_chance(p: float, n: int) -> float:
    """How far a choice's probability stands above a uniform guess, scaled to [0, 1]: 0 at 1/n,
    1 at certainty. gemma-3-270m's outline choices sit near uniform (top 0.12-0.19 of 10), so they
    move scores little; a stronger model's confident choice counts fully."""
    return max(0.0, (p * n - 1) / (n - 1)) if n > 1 else 0.0


def _entry(section: Node) -> str:
    title = " ".join((section.title or "(untitled)").split())
    if section.summary:
        words = section.summary.split()
        summary = " ".join(words[:in_effect().expansion.outline_summary_words]) + ("..." if len(words) > in_effect().expansion.outline_summary_words else "")
        return f"{title}: {summary}"
    return title
