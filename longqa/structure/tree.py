"""The document tree as structure/ builds it. The types live in longqa/tree_types.py (at the
bottom of the import graph, so the store can use them without importing structure/); they are
re-exported here for the structure package's own modules."""

from longqa.tree_types import KINDS, Heading, Node, leaves, sections, walk

__all__ = ["KINDS", "Heading", "Node", "leaves", "sections", "walk"]
