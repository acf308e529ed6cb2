"""The column headers of a table row, as stored: rows are lines of cells separated by " | ".

Parsers write a table one row a line, its header row first. Leaves cut a long table between rows,
and a leaf that goes on with a table begun in an earlier leaf carries that table's header row in
its `summary` (structure/split.py), so every row can be read with the names of its columns.
"""

from __future__ import annotations

from longqa.tree_types import Node

CELL_SEPARATOR = " | "


def row_header(leaf: Node, start: int) -> str | None:
    """The header row of the table row on the line of `leaf.text` holding offset `start`: the
    first line of its run of rows in this leaf, or the header the leaf carries when the run opens
    the leaf; None for a line that is no table row, or is the header itself."""
    text = leaf.text
    line_start = text.rfind("\n", 0, start) + 1
    if CELL_SEPARATOR not in _line_at(text, line_start):
        return None
    first = line_start
    while first > 0:
        above = text.rfind("\n", 0, first - 1) + 1
        if CELL_SEPARATOR not in _line_at(text, above):
            break
        first = above
    if first == 0 and leaf.summary and CELL_SEPARATOR in leaf.summary:
        return leaf.summary
    return None if first == line_start else _line_at(text, first)


def _line_at(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]
