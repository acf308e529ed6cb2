"""Figures in the cells of a table row, as the parsers write tables: cells separated by " | ".

A cell reads "$2,410,000", "(12,500)" (negative, as filings print it), "77%", "-0.5", or a dash for
an empty cell; a footnote mark glued to a figure ("323,926(2)") is not a figure of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A figure in a cell: "$2,410,000", "(12,500)", "77%", "(9.4%)", "-0.5"
FIGURE = re.compile(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\s?%?\)?")
_DASHES = {"-", "--", "---", "—", "–"}  # an empty cell, as filings print it


@dataclass
class Cell:
    text: str  # as written: "$2,410,000", "(12,500)", "77%", "—"
    value: float | None  # None for an empty cell
    percent: bool


def row_cells(rest: str) -> list[Cell] | None:
    """The figures of a row after its label, in order; None when a cell holds words ("5 years")."""
    cells: list[Cell] = []
    for raw in rest.split(" | "):
        bare = raw.replace("$", "").strip()
        if bare in _DASHES:
            cells.append(Cell(bare, None, False))
            continue
        if re.search(r"[A-Za-z]", raw):
            return None
        for match in FIGURE.finditer(raw):
            if match.start() > 0 and raw[match.start() - 1].isdigit():
                continue  # a footnote mark: "323,926(2)"
            text = match.group().strip()
            if text.startswith("(") and not text.endswith(")"):
                text = text[1:]
            cells.append(Cell(text, figure_value(text), text.rstrip(")").endswith("%")))
    return cells


def figure_value(cell: str) -> float | None:
    """The number a cell states, negative in parentheses or after a minus; None if it states none."""
    text = cell.strip()
    negative = text.startswith("(") and text.endswith(")") or text.lstrip("($ ").startswith("-")
    digits = re.sub(r"[^\d.]", "", text)
    if not digits or digits.count(".") > 1:
        return None
    value = float(digits)
    return -value if negative else value


def format_figure(value: float) -> str:
    """A computed figure as a filing prints it: thousands separated, at most two decimals."""
    if abs(value - round(value)) < 1e-9:
        return f"{int(round(value)):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")
