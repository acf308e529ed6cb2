"""`--structure auto|outline|layout|llm|flat`: try the document's own structure first.

Order under auto: PDF bookmarks (validated against page text) → layout headings (PDF fonts,
numbering) or markdown `#` and HTML <h1>-<h6> headings or plain-text heading heuristics → the local model (when a
structurer is given) → flat paragraphs. Returns the tree and the name of the source that made it.
"""

from __future__ import annotations

from typing import Callable

from longqa import tokens
from longqa.config import Limits
from longqa.errors import InputError
from longqa.parse.blocks import ParsedDocument
from longqa.structure.build import build_tree
from longqa.structure.contents import drop_contents
from longqa.structure.headings import markdown_headings, text_headings
from longqa.structure.split import LEAF_TOKENS
from longqa.structure.tree import Heading, Node

MODES = ("auto", "outline", "layout", "llm", "flat")

# A model-backed structurer: given the document, returns its tree, or None when it cannot.
LlmStructurer = Callable[[ParsedDocument], "Node | None"]


def own_headings(doc: ParsedDocument, mode: str) -> tuple[list[Heading], str]:
    if doc.format == "pdf":
        if mode in ("auto", "outline"):
            from longqa.structure.bookmarks import outline_headings

            headings = outline_headings(doc)
            if headings:
                return headings, "outline"
        if mode in ("auto", "layout"):
            from longqa.structure.layout import layout_headings

            headings = layout_headings(doc)
            if headings:
                return headings, "layout"
    elif mode in ("auto", "layout", "outline"):
        if doc.format in ("markdown", "html"):  # headings the source marks (`#`, <h2>)
            headings = markdown_headings(doc)
            if headings:
                return headings, doc.format
        headings = text_headings(doc)
        if headings:
            return headings, "text"
    return [], "flat"


def structure_document(
    doc: ParsedDocument,
    mode: str = "auto",
    llm: LlmStructurer | None = None,
    max_tokens: int = LEAF_TOKENS,
    limits: Limits | None = None,
    notes: list[str] | None = None,
    remarks: list[str] | None = None,
) -> tuple[Node, str]:
    """The tree and its source. Raises InputError for more headings than `limits` allow. A
    document without headings that the model does not divide (too long for it, too short, no
    boundary above the threshold, a rejected outline) is stored flat, with the reason in `notes`
    (warnings); under auto, a document merely too short to divide gets its reason in `remarks`."""
    if mode not in MODES:
        raise ValueError(f"unknown structure mode {mode!r}; choose from {', '.join(MODES)}")
    limits = limits or Limits()
    if mode != "llm" and mode != "flat":
        headings, source = own_headings(doc, mode)
        if limits.max_headings and len(headings) > limits.max_headings:
            raise InputError(
                doc.path, f"{len(headings):,} headings, over the {limits.max_headings:,} limit (--max-headings lifts it)"
            )
        if headings:
            return build_tree(doc, drop_contents(doc, headings), max_tokens), source
    drop_contents(doc, [])  # contents and index lines read for structure above, kept out of leaves
    if llm is not None and mode in ("auto", "llm"):
        size = sum(tokens.count(block.text) for block in doc.blocks)
        if limits.llm_max_tokens and size > limits.llm_max_tokens:
            if notes is not None:
                notes.append(
                    f"no headings, and at {size:,} tokens too long to be divided by the local model "
                    f"(limit {limits.llm_max_tokens:,}; --llm-max-tokens lifts it): stored without sections"
                )
        else:
            tree = llm(doc)
            if tree is not None:
                return tree, "llm"
            report = getattr(llm, "report", None)
            reason = getattr(report, "reason", "") or "no sections found"
            told = remarks if mode == "auto" and getattr(report, "too_short", False) else notes
            if told is not None:
                told.append(f"no headings, and not divided into sections by the local model: {reason}")
    return build_tree(doc, [], max_tokens), "flat"
