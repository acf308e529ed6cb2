"""Replies that name sentences by number (ask/answer/selection.py): which numbers a reply names."""

from __future__ import annotations

import pytest

from longqa.ask.answer.selection import Numbered, named_numbers


@pytest.mark.parametrize("raw, named", [
    ("[4] [7] [2]", [4, 7, 2]),
    ("4, 7", [4, 7]),
    ("[3] Next, unbolt the worn blade with a 19 mm spanner.", [3]),  # the copied sentence's figures are not numbers it names
    ("No [12]", [12]),
    ("[5] [5] [40]", [5]),  # each once, and only among those shown
    ("unknown", []),
])
def test_a_reply_names_the_sentences_it_brackets_else_the_numbers_it_writes(raw, named):
    assert named_numbers(raw, Numbered([object()] * 20, "")) == named
