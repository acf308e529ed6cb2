"""Step-wise expansion of the candidate pool, chosen by question type (OkraLong's organizer).

The pool maps leaf id -> local score. Each operation adds leaves (never lowers a score) and
reports what it did as a step for the JSON `steps` list:
- neighbours: arithmetic questions need the rows around a hit; tables stay whole.
- merge: results of another query (sub-question or next-step query) join the pool.
- route: open a section the outline chose whose leaves retrieval did not reach (RDR2's EXPAND),
  scoring its leaves by similarity to the question.
"""

from __future__ import annotations

import re

import numpy as np

from longqa.structure.tree import Node, walk

NEIGHBOUR_FACTOR = 0.6  # a neighbour of a hit scores this x the hit
TABLE_FACTOR = 0.9  # the rest of a table a hit belongs to
ROUTE_FACTOR = 0.8
TOP_HITS = 5

_NUMBER = re.compile(r"[-+(]?\$?\d[\d,.]*%?\)?")


def looks_tabular(text: str) -> bool:
    """Rows of figures: many short lines, or a high share of numeric tokens."""
    tokens = text.split()
    if len(tokens) < 6:
        return False
    numeric = sum(1 for t in tokens if _NUMBER.fullmatch(t)) / len(tokens)
    lines = [line for line in text.splitlines() if line.strip()]
    short_lines = sum(1 for line in lines if len(line.split()) <= 4) / max(len(lines), 1)
    return numeric >= 0.3 or (len(lines) >= 6 and short_lines >= 0.6 and numeric >= 0.15)


def parents(roots: list[Node]) -> dict[int, Node]:
    return {child.id: node for root in roots for node in walk(root) for child in node.children}


def neighbours(pool: dict[int, float], roots: list[Node], top: int = TOP_HITS) -> dict[int, float]:
    """Scores for the siblings next to the best hits, and for whole tables around tabular hits."""
    parent_of = parents(roots)
    added: dict[int, float] = {}

    def offer(leaf: Node, score: float) -> None:
        if leaf.is_leaf and score > max(pool.get(leaf.id, 0.0), added.get(leaf.id, 0.0)):
            added[leaf.id] = score

    for leaf_id, score in sorted(pool.items(), key=lambda kv: -kv[1])[:top]:
        parent = parent_of.get(leaf_id)
        if parent is None:
            continue
        siblings = parent.children
        index = next((i for i, n in enumerate(siblings) if n.id == leaf_id), None)
        if index is None:
            continue
        for j in (index - 1, index + 1):
            if 0 <= j < len(siblings):
                offer(siblings[j], score * NEIGHBOUR_FACTOR)
        if looks_tabular(siblings[index].text):
            for step in (-1, 1):
                j = index + step
                while 0 <= j < len(siblings) and siblings[j].is_leaf and looks_tabular(siblings[j].text):
                    offer(siblings[j], score * TABLE_FACTOR)
                    j += step
    return added


def merge(pool: dict[int, float], scores: dict[int, float], weight: float = 1.0) -> dict[int, float]:
    """Leaves whose score from another query beats their pool score (scaled by `weight`)."""
    return {leaf: s * weight for leaf, s in scores.items() if s * weight > pool.get(leaf, 0.0)}


def route(
    pool: dict[int, float], section: Node, similarity: dict[int, float], weight: float
) -> dict[int, float]:
    """Open `section`: its leaves enter the pool scored by their similarity rank to the question."""
    leaves = [n for n in walk(section) if n.is_leaf]
    if not leaves:
        return {}
    values = np.array([similarity.get(leaf.id, 0.0) for leaf in leaves], dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    scaled = (values - low) / (high - low) if high > low else np.ones_like(values)
    added = {}
    for leaf, value in zip(leaves, scaled):
        score = ROUTE_FACTOR * weight * float(value)
        if score > pool.get(leaf.id, 0.0):
            added[leaf.id] = score
    return added
