"""Numbers that point somewhere (a manual page's section, a numbered part of a document) are never
offered as quantities; the quantities beside them still are."""

from __future__ import annotations

import pytest

from longqa.text.spans import candidates


def quantities(sentence: str) -> list[str]:
    return [span.text for span in candidates(sentence, 4) if span.kind == "quantity"]


@pytest.mark.parametrize("sentence, expected", [
    ("See git-log(1) and printf(3p) for the 12 options it accepts.", ["12"]),
    ("The history file is described in bash(1); it keeps 500 commands.", ["500"]),
    ("As described in section 2.3, the buffer holds 4096 bytes.", ["4096"]),
    ("Chapter 4 lists 2.3 million users.", ["2.3 million users"]),
    ("The limits are given in § 6.6 and (see 6.7) cover 3 cases.", ["3"]),
    ("6.6.1. Maximum line length is 4000 bytes in most versions.", ["4000"]),
])
def test_references_are_not_quantities(sentence, expected):
    assert quantities(sentence) == expected


@pytest.mark.parametrize("sentence, expected", [
    ("The fee was (12,500) in the last year.", ["12,500"]),
    ("The plant employs 2.5 thousand people.", ["2.5 thousand people"]),
    ("Pressure rose by 2.3 on the second day.", ["2.3"]),
    ("It took 3 days and cost $1.2 million.", ["3 days", "$1.2 million"]),
])
def test_quantities_beside_no_reference_stay(sentence, expected):
    assert sorted(quantities(sentence)) == sorted(expected)


@pytest.mark.parametrize("sentence, figures", [
    ("The office closes at 1:00am on weekdays.", {"1:00am"}),  # not "1", not "00am"
    ("Doors open at 7:30 pm for the 120 guests.", {"7:30 pm", "120", "120 guests"}),  # not "30 pm"
])
def test_a_time_of_day_is_one_candidate_and_none_of_its_pieces(sentence, figures):
    assert {span.text for span in candidates(sentence, 4) if any(ch.isdigit() for ch in span.text)} == figures
