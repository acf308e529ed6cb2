"""The document tree: plain dataclasses and small pure helpers, shared by every package.

document → section → subsection (any deeper heading level) → paragraph (leaves only).
Character offsets refer to the document's body text: its kept blocks joined by blank lines.
This module sits at the bottom of the import graph: it imports nothing of longqa, so the store
can hold trees that structure/ builds without either package importing the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

KINDS = ("document", "section", "subsection", "paragraph")


@dataclass
class Node:
    kind: str
    title: str = ""
    text: str = ""
    depth: int = 0
    page_start: int = 1
    page_end: int = 1
    char_start: int = 0
    char_end: int = 0
    tokens: int = 0
    summary: str = ""  # a section's one-sentence summary; a leaf: the header row of a table it goes on with
    children: list["Node"] = field(default_factory=list)
    # Set once the node is stored or loaded from the store.
    id: int | None = None
    parent_id: int | None = None
    doc_id: int | None = None
    ord: int = 0
    path: str = ""  # ancestor titles joined by " > ", document title first

    @property
    def is_leaf(self) -> bool:
        return self.kind == "paragraph"


@dataclass
class Heading:
    """A structure source's verdict: block `index` opens a section at `level` (1 = top)."""

    index: int
    level: int
    title: str


def walk(node: Node) -> Iterator[Node]:
    """Pre-order traversal: the node, then each child's subtree in order (document order)."""
    yield node
    for child in node.children:
        yield from walk(child)


def leaves(node: Node) -> list[Node]:
    return [n for n in walk(node) if n.is_leaf]


def sections(node: Node) -> list[Node]:
    return [n for n in walk(node) if n.kind in ("section", "subsection")]
