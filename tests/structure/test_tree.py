"""Tree building: leaf size caps, merging, exact character spans, page spans."""

from pathlib import Path

from longqa import tokens
from longqa.parse.blocks import Block, ParsedDocument
from longqa.structure.build import body_text, build_tree
from longqa.structure.tree import Heading, leaves, walk


def make_doc(blocks):
    return ParsedDocument(path=Path("x.txt"), title="Doc", pages=max(b.last_page for b in blocks), blocks=blocks)


def long_paragraph(sentences: int) -> str:
    return " ".join(f"Sentence {i} talks about the measured growth of item {i} in the region." for i in range(sentences))


def test_long_paragraphs_split_at_sentence_ends_under_the_cap():
    doc = make_doc([Block(long_paragraph(80), page=3)])
    root = build_tree(doc, [], max_tokens=300)
    parts = leaves(root)
    assert len(parts) > 1
    assert all(leaf.tokens <= 300 for leaf in parts)
    assert all(leaf.text.endswith(".") for leaf in parts)  # cut at sentence ends
    assert all(leaf.page_start == leaf.page_end == 3 for leaf in parts)


def test_tiny_fragments_merge_and_spans_are_exact_slices():
    blocks = [Block("Revenue", page=1), Block("$ 1,200", page=1), Block("Costs", page=2),
              Block("$ 800", page=2), Block(long_paragraph(5), page=2)]
    doc = make_doc(blocks)
    root = build_tree(doc, [])
    body, _ = body_text(doc)
    parts = leaves(root)
    assert len(parts) < len(blocks)
    assert parts[0].page_start == 1 and parts[0].page_end == 2  # merged across the page break
    for leaf in parts:
        assert body[leaf.char_start : leaf.char_end] == leaf.text
        assert leaf.tokens == tokens.count(leaf.text)
    # Every block's text is inside exactly one leaf, in order.
    joined = "".join(leaf.text for leaf in parts)
    for block in blocks:
        assert block.text in joined


def test_headings_nest_by_level_and_totals_add_up():
    blocks = [Block("Intro text that comes before any heading at all in the file.", 1),
              Block("Part One", 1), Block("Body of part one. " * 5, 1),
              Block("Detail", 2), Block("Body of the detail. " * 5, 2),
              Block("Part Two", 3), Block("Body of part two. " * 5, 3)]
    root = build_tree(make_doc(blocks), [Heading(1, 1, "Part One"), Heading(3, 2, "Detail"), Heading(5, 1, "Part Two")])
    kinds = [(n.kind, n.title, n.depth) for n in walk(root) if n.kind != "paragraph"]
    assert kinds == [("document", "Doc", 0), ("section", "Part One", 1), ("subsection", "Detail", 2),
                     ("section", "Part Two", 1)]
    part_one = root.children[1]
    assert (part_one.page_start, part_one.page_end) == (1, 2)
    assert part_one.tokens == tokens.count("Part One") + sum(c.tokens for c in part_one.children)
    assert root.children[0].kind == "paragraph"  # intro hangs off the document
    detail_leaf = part_one.children[-1].children[0]
    assert detail_leaf.path == "Doc > Part One > Detail"
