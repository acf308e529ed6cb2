"""Back matter (References, External links, ...) scores low unless the question asks about sources."""

from __future__ import annotations

import pytest

from longqa.ask.settings import DEFAULTS
from longqa.ask.search.back_matter import is_back_matter, weight_back_matter
from longqa.tree_types import Node


@pytest.mark.parametrize("title, back", [
    ("References", True), ("References ( edit )", True), ("External links", True), ("7 Notes", True),
    ("Bibliography", True), ("See also", True), ("Notes to the Consolidated Financial Statements", False),
    ("Cast and characters", False), ("Referenced works of the author", False)])
def test_back_matter_headings(title, back):
    assert is_back_matter(title) is back


def _article() -> Node:
    def leaf(i: int, text: str) -> Node:
        return Node(kind="paragraph", text=text, id=i)

    cast = Node(kind="section", title="Cast", children=[leaf(1, "Rhys Darby as Charles, Sir's partner.")])
    refs = Node(kind="section", title="References ( edit )",
                children=[leaf(2, "Lloyd, Robert (2017). 'A Series of Unfortunate Events is a joy'.")])
    notes = Node(kind="section", title="Notes to the Financial Statements", children=[leaf(3, "Note 1.")])
    return Node(kind="document", title="A Series of Unfortunate Events", children=[cast, refs, notes])


def test_back_matter_leaves_are_scaled_unless_sources_are_asked():
    root = _article()
    scores = {1: 0.6, 2: 0.9, 3: 0.5}
    weighted = weight_back_matter("Who plays Charles in A Series of Unfortunate Events?", [root], scores)
    assert weighted == {1: 0.6, 2: pytest.approx(0.9 * DEFAULTS.search.back_matter_weight), 3: 0.5}
    assert weighted[1] > weighted[2]
    assert weight_back_matter("Which sources does the article cite?", [root], scores) == scores
