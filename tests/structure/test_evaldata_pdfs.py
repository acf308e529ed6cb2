"""Trees of real PDFs from ../shared/evaldata: 10-K items with their pages, an arXiv paper, bookmarks.

Skipped where the evaluation data is absent (a user's clone).
"""

from __future__ import annotations

import re

import pytest

from longqa.parse.pdf import parse_pdf
from longqa.structure.tree_source import structure_document
from longqa.structure.tree import leaves, sections

pytestmark = pytest.mark.evaldata


def tree_of(evaldata, name: str):
    doc = parse_pdf(evaldata / "docs" / name)
    return structure_document(doc, "auto")


def items(root) -> dict[str, tuple[int, int, int]]:
    """'item 7' → (depth, first page, last page) for every "Item N." section of a filing."""
    found = {}
    for node in sections(root):
        match = re.match(r"item\s+(\d{1,2}[A-C]?)\b", node.title, re.IGNORECASE)
        if match:
            label = "item " + match.group(1).lower()
            assert label not in found, f"{label} opens two sections (its table-of-contents entry?)"
            found[label] = (node.depth, node.page_start, node.page_end)
    return found


TEN_K_ITEMS = ["1", "1a", "1b", "2", "3", "4", "5", "6", "7", "7a", "8", "9", "9a", "9b", "10", "11", "12",
               "13", "14", "15", "16"]


def test_nike_10k_items_start_on_their_pages(evaldata):
    root, source = tree_of(evaldata, "financebench/NIKE_2018_10K.pdf")
    assert source == "layout"  # the filing has no bookmarks
    found = items(root)
    assert list(found) == [f"item {label}" for label in TEN_K_ITEMS]
    assert found["item 1"][1] == 3
    assert found["item 1a"][1:] == (8, 16)
    assert found["item 7"][1:] == (22, 41)
    assert found["item 7a"][1] == 42
    assert found["item 8"][1:] == (43, 75)
    assert {depth for depth, _, _ in found.values()} == {2}  # under PART I..IV
    parts = [(n.title, n.page_start) for n in sections(root) if n.depth == 1 and n.title.startswith("PART")]
    assert parts == [("PART I", 3), ("PART II", 18), ("PART III", 76), ("PART IV", 77)]


def test_amazon_10k_items(evaldata):
    root, source = tree_of(evaldata, "financebench/AMAZON_2017_10K.pdf")
    assert source == "layout"
    found = items(root)
    assert list(found) == [f"item {label}" for label in TEN_K_ITEMS]
    starts = {label: found[f"item {label}"][1] for label in ("1", "1a", "7", "7a", "8", "9a", "15")}
    assert starts == {"1": 3, "1a": 6, "7": 19, "7a": 33, "8": 35, "9a": 73, "15": 76}
    item7 = next(n for n in sections(root) if n.title.startswith("Item 7. "))
    assert item7.page_end == 32 and item7.tokens > 5000


def test_arxiv_paper_follows_its_headings(evaldata):
    """1809.01202 has no bookmarks: its numbered, bold headings make the tree."""
    root, source = tree_of(evaldata, "uda/1809.01202.pdf")
    assert source == "layout"
    assert root.title == "Causal Explanation Analysis on Social Media"
    top = [(n.title, n.page_start) for n in sections(root) if n.depth == 1 and n.title[0].isdigit()]
    assert top == [("1 Introduction", 1), ("2 Related Work", 2), ("3 Methods", 3), ("4 Results", 6),
                   ("5 Exploration", 8), ("6 Conclusion", 8)]
    methods = next(n for n in sections(root) if n.title == "3 Methods")
    assert [c.title for c in methods.children if not c.is_leaf] == ["3.1 Dataset", "3.2 Model", "3.3 Experiment"]
    titles = [n.title for n in sections(root)]
    assert titles.index("Abstract") < titles.index("1 Introduction") < titles.index("References")


def test_filing_with_bookmarks_uses_the_outline(evaldata):
    root, source = tree_of(evaldata, "financebench/ADOBE_2022_10K.pdf")
    assert source == "outline"
    found = items(root)
    assert found["item 7"][1:] == (36, 49)
    assert found["item 8"][1] == 52


def test_bookmarks_that_name_other_things_fall_back_to_layout(evaldata):
    """PEPSICO's bookmarks ("A-1 - Condensed ...") mostly are not in the page text."""
    root, source = tree_of(evaldata, "financebench/PEPSICO_2023Q1_EARNINGS.pdf")
    assert source == "layout"
    assert "Guidance and Outlook" in [n.title for n in sections(root)]


def test_no_running_headers_or_page_numbers_in_leaves(evaldata):
    root, _ = tree_of(evaldata, "financebench/NIKE_2018_10K.pdf")
    texts = [leaf.text for leaf in leaves(root)]
    # Every page starts with a "Table of Contents" link; only the contents page's own title stays.
    assert sum(t.count("Table of Contents") for t in texts) == 1
    assert not any(re.fullmatch(r"\d{1,3}", t.strip()) for t in texts)
