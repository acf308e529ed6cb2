"""The leaf size, the context budget and the expansion steps are each declared once in longqa/,
and every other place reads that declaration: a default, a field or a CLI option that wrote the
number again would drift from it the day one of them changes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import longqa
from longqa.ask.settings import BUDGET_TOKENS, MAX_STEPS
from longqa.structure.layout import SIZE_SLACK
from longqa.structure.split import LEAF_TOKENS

ROOT = Path(longqa.__file__).parent
# The names a leaf size, a budget or a step count goes by where it is assigned, defaulted or an
# option's default; and the number, written as code writes it.
NUMBERS = {
    "leaf size": (r"\w*(?:max_tokens|leaf_tokens|LEAF_TOKENS)", r"300|300\.0"),
    "budget": (r"\w*(?:budget|BUDGET_TOKENS)", r"2000|2_000"),
    "steps": (r"\w*(?:max_steps|MAX_STEPS)", r"3"),
}


def places(name_pattern: str, number: str) -> list[str]:
    """`file:line` of each assignment, default or keyword (`name = N`, `name: int = N`, `name=N`)
    and each typer option whose default is the number (`typer.Option(N, "--budget"`)."""
    assigned = re.compile(rf"\b{name_pattern}\s*(?::\s*[\w\[\]| .]+)?=\s*(?:{number})\b(?![.\d])")
    option = re.compile(rf"Option\(\s*(?:{number})\s*,\s*\"--(?:budget|max-steps)\"")
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if assigned.search(line) or option.search(line):
                found.append(f"{path.relative_to(ROOT.parent)}:{line_no}: {line.strip()}")
    return found


@pytest.mark.parametrize("what", sorted(NUMBERS))
def test_each_number_is_declared_once(what):
    found = places(*NUMBERS[what])
    assert len(found) == 1, f"the {what} is written in {len(found)} places:\n" + "\n".join(found)


def test_the_declarations_hold_the_defaults():
    assert (LEAF_TOKENS, BUDGET_TOKENS, MAX_STEPS) == (300, 2000, 3)
    assert SIZE_SLACK == 0.25
    layout = (ROOT / "structure" / "layout.py").read_text(encoding="utf-8")
    assert layout.count("0.25") == 1  # the font-size slack, read by name everywhere else


def test_the_check_sees_a_number_written_again():
    assert places(*NUMBERS["steps"])  # the declaration itself is found
    line = re.compile(r"\b\w*(?:budget|BUDGET_TOKENS)\s*(?::\s*[\w\[\]| .]+)?=\s*(?:2000|2_000)\b(?![.\d])")
    assert line.search("    budget: int = 2000,") and line.search("make(budget=2_000)")
    assert not line.search("    budget: int = 20001")
