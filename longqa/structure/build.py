"""Build a document tree from parsed blocks and a list of headings (from any structure source)."""

from __future__ import annotations

from longqa import tokens
from longqa.parse.blocks import ParsedDocument
from longqa.structure.split import LEAF_TOKENS, Span, pack
from longqa.structure.tree import Heading, Node

BLOCK_SEPARATOR = "\n\n"


def body_text(doc: ParsedDocument) -> tuple[str, list[int]]:
    """The document's body text (blocks joined by blank lines) and each block's start offset."""
    starts, cursor = [], 0
    for block in doc.blocks:
        starts.append(cursor)
        cursor += len(block.text) + len(BLOCK_SEPARATOR)
    return BLOCK_SEPARATOR.join(block.text for block in doc.blocks), starts


def build_tree(
    doc: ParsedDocument, headings: list[Heading], max_tokens: int = LEAF_TOKENS
) -> Node:
    """document → sections (one per heading, nested by level) → paragraph leaves.

    Blocks before the first heading become paragraphs directly under the document. A heading at
    level 0 marks the document's title line, which is left out of the sections and leaves.
    """
    body, starts = body_text(doc)
    by_index = {heading.index: heading for heading in headings}
    root = Node(kind="document", title=doc.title, page_start=1, page_end=max(doc.pages, 1))
    root.char_end = len(body)
    stack: list[tuple[int, Node]] = []  # (heading level, section node)
    pending: list[Span] = []

    def container() -> Node:
        return stack[-1][1] if stack else root

    def flush() -> None:
        parent = container()
        for span in pack(body, pending, max_tokens):
            parent.children.append(
                Node(
                    kind="paragraph",
                    text=body[span.start : span.end],
                    page_start=span.page,
                    page_end=span.page_end,
                    char_start=span.start,
                    char_end=span.end,
                    tokens=span.tokens,
                    summary=span.header,
                )
            )
        pending.clear()

    for index, block in enumerate(doc.blocks):
        start, end = starts[index], starts[index] + len(block.text)
        heading = by_index.get(index)
        if heading is None:
            if block.text.strip():
                count = tokens.count(block.text)
                pending.append(Span(start, end, block.page, block.last_page, count, block.table))
            continue
        if heading.level == 0:  # the document's own title line: not a section, not body text
            continue
        flush()
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        section = Node(
            kind="section" if not stack else "subsection",
            title=heading.title,
            page_start=block.page,
            page_end=block.last_page,
            char_start=start,
            char_end=end,
        )
        container().children.append(section)
        stack.append((heading.level, section))
    flush()
    finish(root)
    return root


def finish(root: Node) -> Node:
    """Fill depths, paths, spans, token totals and pre-order `ord` from the leaves upward."""
    counter = 0

    def visit(node: Node, depth: int, path: list[str]) -> None:
        nonlocal counter
        node.depth, node.ord, node.path = depth, counter, " > ".join(path)
        counter += 1
        child_path = path + [node.title] if node.title else path
        for child in node.children:
            visit(child, depth + 1, child_path)
        if node.children:
            node.page_start = min(node.page_start, *(c.page_start for c in node.children))
            node.page_end = max(node.page_end, *(c.page_end for c in node.children))
            node.char_end = max(node.char_end, *(c.char_end for c in node.children))
            title_tokens = tokens.count(node.title) if node.kind != "document" else 0
            node.tokens = title_tokens + sum(c.tokens for c in node.children)
        elif not node.is_leaf:
            node.tokens = tokens.count(node.title)

    visit(root, 0, [])
    return root
