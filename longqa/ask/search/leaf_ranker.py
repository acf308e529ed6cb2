"""The learned leaf score: which paragraphs of the candidate documents the search looks at first.

Every leaf of every candidate document gets a few named features that the search computes anyway
(its BM25 and cosine against the query, raw and normalised over the candidates; its document's
first-stage standing; how well its section path matches the query; its neighbours' and section's
scores; its depth, position, length, table-ness and whether it is back matter). A linear model
over them, fitted as a softmax over each question's leaves on the tune half of the dev questions
(`bench/leaf_ranker.py`, cross-validated by question), orders the leaves; the weights, with the
command, commit and data hash that produced them, are in leaf_ranker.json beside this file. No
weight is set by hand. The model decides the order only: the values stay those of the
hand-weighted score, handed out in the learned order, so that the steps after it (the fill's
floor, a section's mean, the excerpt's share of a paragraph's score) keep the scale they were set on.
Off by default (`search.learned_leaves`): it orders labelled leaves better than the hand-weighted
score but reached no more answers in the search (bench/RESULTS.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from longqa.ask.search.back_matter import back_matter_leaves
from longqa.linear import Stage, read_stage
from longqa.text.words import content_terms
from longqa.tree_types import Node, walk

WEIGHTS_FILE = Path(__file__).with_name("leaf_ranker.json")

# name -> why it may tell a passage that answers from one that does not
FEATURES: dict[str, str] = {
    "fused": "the hand-weighted sum of normalised BM25 and cosine (the score before any learning)",
    "bm25": "BM25 against the query, normalised over the candidate leaves: shared rare words",
    "dense": "cosine to the query, normalised over the candidate leaves: shared meaning",
    "cosine": "the raw cosine: how close in absolute terms, not only relative to the other leaves",
    "first_stage": "the leaf's own first-stage hybrid score (0 when the first stage did not return it)",
    "doc_prior": "its document's first-stage score relative to the best candidate document",
    "doc_first": "1 for a leaf of the best candidate document",
    "title_match": "share of the query's content words in the leaf's section path (titles say what text is about)",
    "neighbour": "the better fused score of the leaf before and after it (answers run over paragraph breaks)",
    "section": "the mean fused score of its section's leaves (a relevant section holds relevant paragraphs)",
    "depth": "how deep in the tree the leaf sits",
    "position": "where in its document the leaf stands (0 first, 1 last)",
    "length": "log of its token count (a long passage matches more words by chance)",
    "table": "share of its lines that are table rows",
    "back_matter": "1 under a References, External links or Notes heading",
}


@dataclass
class LeafInputs:
    """What the features of one query's candidate leaves are computed from."""

    query: str
    roots: list[Node]  # the candidate documents' trees, best document first
    fused: dict[int, float]  # leaf id -> hand-weighted normalised BM25 + cosine
    bm25: dict[int, float]
    dense: dict[int, float]
    cosine: dict[int, float]
    first_stage: dict[int, float]  # leaf id -> first-stage score (hits only)
    doc_prior: dict[int, float]  # doc id -> score relative to the best candidate
    sources_asked: bool = False  # the query asks about references: back matter is not discounted


def features(inputs: LeafInputs) -> dict[int, dict[str, float]]:
    """Leaf id -> its named features (FEATURES order), for every leaf of the candidate trees."""
    terms = set(content_terms(inputs.query))
    out: dict[int, dict[str, float]] = {}
    path_terms: dict[str, set[str]] = {}  # leaves of one section share their path
    best_doc = inputs.roots[0].doc_id if inputs.roots else None
    for root in inputs.roots:
        back = back_matter_leaves(root) if not inputs.sources_asked else set()
        leaves = [n for n in walk(root) if n.is_leaf]
        parent_mean = _section_means(root, inputs.fused)
        for i, leaf in enumerate(leaves):
            before = inputs.fused.get(leaves[i - 1].id, 0.0) if i > 0 else 0.0
            after = inputs.fused.get(leaves[i + 1].id, 0.0) if i + 1 < len(leaves) else 0.0
            if leaf.path not in path_terms:
                path_terms[leaf.path] = set(content_terms(leaf.path)) if terms else set()
            lines = [line for line in leaf.text.splitlines() if line.strip()]
            out[leaf.id] = {
                "fused": inputs.fused.get(leaf.id, 0.0),
                "bm25": inputs.bm25.get(leaf.id, 0.0),
                "dense": inputs.dense.get(leaf.id, 0.0),
                "cosine": inputs.cosine.get(leaf.id, 0.0),
                "first_stage": inputs.first_stage.get(leaf.id, 0.0),
                "doc_prior": inputs.doc_prior.get(root.doc_id, 1.0),
                "doc_first": float(root.doc_id == best_doc),
                "title_match": len(terms & path_terms[leaf.path]) / len(terms) if terms else 0.0,
                "neighbour": max(before, after),
                "section": parent_mean.get(leaf.parent_id, 0.0),
                "depth": float(leaf.depth),
                "position": i / max(1, len(leaves) - 1),
                "length": math.log1p(leaf.tokens or len(leaf.text.split())),
                "table": sum(" | " in line for line in lines) / len(lines) if lines else 0.0,
                "back_matter": float(leaf.id in back),
            }
    return out


def _section_means(root: Node, fused: dict[int, float]) -> dict[int, float]:
    """Section id -> the mean fused score of the leaves directly under it."""
    means = {}
    for node in walk(root):
        children = [c for c in node.children if c.is_leaf]
        if children:
            means[node.id] = sum(fused.get(c.id, 0.0) for c in children) / len(children)
    return means


@dataclass(frozen=True)
class LeafRanker:
    stage: Stage
    provenance: dict = field(default_factory=dict)

    def scores(self, table: dict[int, dict[str, float]], scale: dict[int, float]) -> dict[int, float]:
        """Leaf id -> a score in the learned order on the hand-weighted score's scale: the leaf the
        model ranks k-th gets the k-th best of `scale`'s values. The search's later steps (the
        fill's floor, a section's mean, the excerpt's share of a paragraph's score) were set on
        that scale's shape (a few leaves high, most near 0); the model decides only the order."""
        learned = sorted(table, key=lambda leaf: (-self.stage.score(table[leaf]), leaf))
        values = sorted((scale.get(leaf, 0.0) for leaf in table), reverse=True)
        return dict(zip(learned, values))


@lru_cache(maxsize=4)
def load(path: Path = WEIGHTS_FILE) -> LeafRanker | None:
    """The shipped leaf ranker (None when no weights file ships: the hand-weighted score is used); a file that
    cannot be read as one is a one-line error naming it."""
    shipped = read_stage(path, set(FEATURES), "a leaf ranker weights file")
    return LeafRanker(*shipped) if shipped is not None else None
