"""The refined context: numbered passages with their document, section path and pages.

A passage is one selected node (a leaf, or a whole section with all its leaves). Passages come in
document order, documents in the order retrieval ranked them. Numbers [1], [2], ... are the ones
the answer cites. A `Quote` is a verbatim piece of a passage's stored text that an answer rests
on, with its offsets and pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from longqa import tokens
from longqa.ask.search.refine import Selection
from longqa.store.documents import DocumentLabel, ocr_label
from longqa.tree_types import Node, walk

PATH_SEPARATOR = " > "


@dataclass
class Passage:
    n: int
    node_id: int
    doc_id: int
    doc: str  # document title
    doc_path: str  # the document's file path
    section: str  # section titles inside the document, outermost first
    page_start: int
    page_end: int
    score: float
    text: str
    tokens: int
    leaf_ids: list[int] = field(default_factory=list)
    node: Node | None = field(default=None, repr=False, compare=False)  # the selected node
    # An excerpt (ask/excerpt.py) keeps only some sentences of its leaves: (leaf id, start, end)
    # offsets into each leaf's stored text; None when the passage is the whole node.
    spans: list[tuple[int, int, int]] | None = None
    ocr_pages: frozenset[int] = frozenset()  # the document's pages read by OCR (citations say so)

    @property
    def pages(self) -> str:
        return page_span(self.page_start, self.page_end) + ocr_label(self.page_start, self.page_end, self.ocr_pages)

    def header(self, with_doc: bool = True) -> str:
        """"[n] doc > section (pages)"; `with_doc` False where a heading above already names the
        document."""
        where = PATH_SEPARATOR.join(part for part in (self.doc if with_doc else "", self.section) if part)
        return f"[{self.n}] {where} ({self.pages})" if where else f"[{self.n}] ({self.pages})"

    def citation(self) -> dict:
        return {"n": self.n, "doc": self.doc, "path": self.doc_path, "section": self.section,
                "page_start": self.page_start, "page_end": self.page_end, "node_id": self.node_id}

    def as_context(self) -> dict:
        return {"node_id": self.node_id, "doc": self.doc, "section": self.section,
                "page_start": self.page_start, "page_end": self.page_end,
                "score": round(self.score, 4), "text": self.text, "excerpt": self.spans is not None}


@dataclass
class Quote:
    text: str  # verbatim: the stored text of `node_id` from char_start to char_end
    passage: Passage
    node_id: int
    char_start: int
    char_end: int
    page_start: int
    page_end: int
    leaf: Node | None = None

    @property
    def section(self) -> str:
        """The quoted leaf's own section path (deeper than its passage's when a whole section was
        selected)."""
        return section_of(self.leaf, self.passage.doc) if self.leaf is not None else self.passage.section

    def as_dict(self) -> dict:
        p = self.passage
        return {"text": self.text, "doc": p.doc, "path": p.doc_path, "section": self.section,
                "page": self.page_start, "page_end": self.page_end, "node_id": self.node_id,
                "char_start": self.char_start, "char_end": self.char_end, "n": p.n}

    @property
    def pages(self) -> str:
        return page_span(self.page_start, self.page_end) + ocr_label(self.page_start, self.page_end,
                                                                     self.passage.ocr_pages)


def page_span(start: int, end: int) -> str:
    """"p. 5" or "pp. 5-7", as every citation prints its pages."""
    return f"p. {start}" if start == end else f"pp. {start}-{end}"


def section_of(node: Node, doc_title: str) -> str:
    """The node's section path inside its document (the document title left out)."""
    parts = [p for p in node.path.split(PATH_SEPARATOR)] if node.path else []
    if parts and parts[0] == doc_title:
        parts = parts[1:]
    if not node.is_leaf and node.kind != "document" and node.title:
        parts.append(node.title)
    return PATH_SEPARATOR.join(p for p in parts if p)


def passage_text(node: Node, with_titles: bool = True) -> str:
    """The node's leaves in order; inside a section, each subsection's title opens its part."""
    if node.is_leaf:
        return node.text.strip()
    parts = []
    for inner in walk(node):
        if inner.is_leaf:
            parts.append(inner.text.strip())
        elif with_titles and inner is not node and inner.title and any(n.is_leaf for n in walk(inner)):
            parts.append(inner.title.strip())
    return "\n\n".join(parts)


def build_passages(selection: Selection, documents: dict[int, DocumentLabel], budget: int) -> list[Passage]:
    """Passages for the selected nodes, in selection (document) order, fitted to `budget` tokens:
    subsection titles inside sections are dropped first, then the lowest-scored passages."""
    passages = []
    for node in selection.nodes:
        leaves = [n for n in walk(node) if n.is_leaf]
        if not leaves:
            continue
        doc = documents[node.doc_id]
        text = passage_text(node)
        passages.append(
            Passage(
                n=0, node_id=node.id, doc_id=node.doc_id, doc=doc.title, doc_path=doc.path,
                section=section_of(node, doc.title),
                page_start=min(leaf.page_start for leaf in leaves),
                page_end=max(leaf.page_end for leaf in leaves),
                score=selection.scores[node.id].score if node.id in selection.scores else 0.0,
                text=text, tokens=tokens.count(text), leaf_ids=[leaf.id for leaf in leaves], node=node,
                ocr_pages=doc.ocr_pages,
            )
        )
    if sum(p.tokens for p in passages) > budget:
        for passage in passages:
            plain = passage_text(passage.node, with_titles=False)
            if plain != passage.text:
                passage.text, passage.tokens = plain, tokens.count(plain)
    # Joining leaves can shift a token or two; the budget is a promise, so drop until it holds.
    while passages and sum(p.tokens for p in passages) > budget:
        passages.remove(min(passages, key=lambda p: p.score))
    for number, passage in enumerate(passages, start=1):
        passage.n = number
    return passages


def render(passages: list[Passage]) -> str:
    """The context as `--context-only` prints it: each document's title once ("# title"), then its
    passages, each under its number, section path and pages. Passages come grouped by document, so
    a title said above every passage would only repeat it (a tenth or more of a 500-token context).
    The answer stage's model reads its own focused sentences (focus.render), not this."""
    blocks, current = [], None
    for p in passages:
        if p.doc_id != current:
            blocks.append(f"# {p.doc}")
            current = p.doc_id
        blocks.append(f"{p.header(with_doc=False)}\n{p.text}")
    return "\n\n".join(blocks)
