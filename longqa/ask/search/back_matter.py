"""Back matter: the sections at the end of a document that list sources rather than say things.

A Wikipedia article's "References" and "External links", a paper's "Bibliography": their entries
repeat the article's title and the question's words ("Lloyd, Robert (2017). 'Fortunately, this
Lemony Snicket's A Series of Unfortunate Events is a ...'") and so outscore the sentence that
answers, while they answer nothing but questions about sources. Their leaves' local scores are
scaled by in_effect().search.back_matter_weight unless the question asks about sources. A filing's "Notes to the
Consolidated Financial Statements" is not back matter: only a heading that is one of these names
and nothing else counts.
"""

from __future__ import annotations

import re

from longqa.ask.settings import in_effect
from longqa.tree_types import Node


_TITLE = re.compile(
    r"^\s*(?:\d+(?:\.\d+)*\.?\s+)?(?:references?|external links?|bibliography|see also|further reading|"
    r"citations|works cited|sources|notes|footnotes|endnotes|notes and references|references and notes)"
    r"\s*(?:\(\s*edit\s*\))?\s*$", re.I)
_ASKS_SOURCES = re.compile(r"\b(?:cite[sd]?|citations?|references?|sources?|bibliograph\w*|links?|footnotes?|"
                           r"further reading)\b", re.I)


def is_back_matter(title: str) -> bool:
    """A section heading that names back matter ("References", "External links ( edit )", "7 Notes")."""
    return bool(_TITLE.match(title or ""))


def back_matter_leaves(root: Node) -> set[int]:
    """Ids of the leaves under a back-matter section of one document tree."""
    found: set[int] = set()

    def visit(node: Node, inside: bool) -> None:
        inside = inside or (not node.is_leaf and node is not root and is_back_matter(node.title))
        if node.is_leaf:
            if inside and node.id is not None:
                found.add(node.id)
            return
        for child in node.children:
            visit(child, inside)

    visit(root, False)
    return found


def asks_sources(question: str) -> bool:
    """True when the question asks about references, citations or links: back matter is what it wants."""
    return bool(_ASKS_SOURCES.search(question))


def weight_back_matter(question: str, roots: list[Node], scores: dict[int, float]) -> dict[int, float]:
    """`scores` with the back matter's leaves scaled by in_effect().search.back_matter_weight (unchanged when the
    question asks about sources or the weight is 1)."""
    if in_effect().search.back_matter_weight >= 1.0 or asks_sources(question):
        return scores
    back = set().union(*(back_matter_leaves(root) for root in roots)) if roots else set()
    if not back:
        return scores
    return {leaf: value * in_effect().search.back_matter_weight if leaf in back else value for leaf, value in scores.items()}
