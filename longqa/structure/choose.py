"""`--structure auto|outline|layout|llm|flat`: try the document's own structure first.

Order under auto: PDF bookmarks (validated against page text) → layout headings (PDF fonts,
numbering) or markdown `#` headings or plain-text heading heuristics → the local model (when a
structurer is given) → flat paragraphs. Returns the tree and the name of the source that made it.
"""

from __future__ import annotations

from typing import Callable

from longqa.parse.blocks import ParsedDocument
from longqa.structure.build import build_tree
from longqa.structure.headings import markdown_headings, text_headings
from longqa.structure.tree import Heading, Node

MODES = ("auto", "outline", "layout", "llm", "flat")

# A model-backed structurer: given the document, returns its tree, or None when it cannot.
LlmStructurer = Callable[[ParsedDocument], "Node | None"]


def _own_headings(doc: ParsedDocument, mode: str) -> tuple[list[Heading], str]:
    if doc.format == "pdf":
        if mode in ("auto", "outline"):
            from longqa.structure.outline import outline_headings

            headings = outline_headings(doc)
            if headings:
                return headings, "outline"
        if mode in ("auto", "layout"):
            from longqa.structure.layout import layout_headings

            headings = layout_headings(doc)
            if headings:
                return headings, "layout"
    elif mode in ("auto", "layout", "outline"):
        if doc.format == "markdown":
            headings = markdown_headings(doc)
            if headings:
                return headings, "markdown"
        headings = text_headings(doc)
        if headings:
            return headings, "text"
    return [], "flat"


def structure_document(
    doc: ParsedDocument, mode: str = "auto", llm: LlmStructurer | None = None, max_tokens: int = 300
) -> tuple[Node, str]:
    if mode not in MODES:
        raise ValueError(f"unknown structure mode {mode!r}; choose from {', '.join(MODES)}")
    if mode != "llm" and mode != "flat":
        headings, source = _own_headings(doc, mode)
        if headings:
            return build_tree(doc, headings, max_tokens), source
    if llm is not None and mode in ("auto", "llm"):
        tree = llm(doc)
        if tree is not None:
            return tree, "llm"
    return build_tree(doc, [], max_tokens), "flat"
