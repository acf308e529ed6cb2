"""Paragraph units for model structuring, the overlapping windows they are read in, the merge of
the windows' section starts, and the tree those starts make.

A unit is what the model sees as one paragraph: a block, a sentence-split piece of a long block,
or several short blocks joined. Sections always start at a unit; leaves are packed from the
block-level pieces inside each section, so every leaf is an exact slice of the body text.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from longqa import tokens
from longqa.parse.blocks import ParsedDocument
from longqa.structure.build import body_text, finish
from longqa.structure.markup import WordIndex, normalise
from longqa.structure.split import LEAF_TOKENS, Span, pack, split_long
from longqa.structure.tree import Node, leaves


@dataclass
class Unit:
    start: int  # character span in the body text
    end: int
    tokens: int
    pieces: list[Span] = field(default_factory=list)
    first_word: int = 0  # word range in the body's WordIndex
    end_word: int = 0


@dataclass
class SectionStart:
    unit: int  # index of the unit that opens the section
    level: int  # 1 section, 2 subsection
    title: str


def paragraph_units(
    doc: ParsedDocument, min_tokens: int = 80, max_tokens: int = LEAF_TOKENS
) -> tuple[str, list[Unit], WordIndex]:
    """The body text, its units in order, and its word index (units know their word ranges)."""
    body, starts = body_text(doc)
    spans = [
        Span(start, start + len(block.text), block.page, block.last_page, tokens.count(block.text), block.table)
        for block, start in zip(doc.blocks, starts)
        if block.text.strip()
    ]
    pieces = [piece for span in spans for piece in split_long(body, span, max_tokens)]
    units: list[Unit] = []
    for piece in pieces:
        last = units[-1] if units else None
        matchable = any(normalise(w) for w in body[piece.start : piece.end].split())
        small = last is not None and last.tokens < min_tokens and last.tokens + piece.tokens <= max_tokens
        if last is not None and (small or not matchable):
            last.pieces.append(piece)
            last.end, last.tokens = piece.end, last.tokens + piece.tokens
        else:
            units.append(Unit(piece.start, piece.end, piece.tokens, [piece]))
    if len(units) > 1 and units[-1].tokens < min_tokens and units[-2].tokens + units[-1].tokens <= max_tokens:
        tail = units.pop()
        units[-1].pieces.extend(tail.pieces)
        units[-1].end, units[-1].tokens = tail.end, units[-1].tokens + tail.tokens
    index = WordIndex.of(body)
    word_starts = [span[0] for span in index.spans]
    for unit in units:
        unit.first_word = bisect.bisect_left(word_starts, unit.start)
        unit.end_word = bisect.bisect_left(word_starts, unit.end)
    # A leading unit with no matchable word (pure punctuation) joins the next one.
    if len(units) > 1 and units[0].first_word == units[0].end_word:
        head = units.pop(0)
        units[0].pieces[:0] = head.pieces
        units[0].start, units[0].first_word = head.start, head.first_word
        units[0].tokens += head.tokens
    return body, units, index


def unit_pages(units: list[Unit]) -> list[tuple[int, int]]:
    """Each unit's first and last page (a layout cue for boundaries.py)."""
    return [(unit.pieces[0].page, unit.pieces[-1].page_end) for unit in units]


def plan_windows(units: list[Unit], budget: int, overlap: int) -> list[tuple[int, int]]:
    """Unit ranges [start, end) of at most `budget` tokens each (at least one unit), consecutive
    windows sharing `overlap` units so that no section start is decided at a window's edge only."""
    windows: list[tuple[int, int]] = []
    start = 0
    while start < len(units):
        end, used = start, 0
        while end < len(units) and (end == start or used + units[end].tokens <= budget):
            used += units[end].tokens
            end += 1
        windows.append((start, end))
        if end == len(units):
            break
        start = end - overlap if end - overlap > start else end
    return windows


def merge_windows(windows: list[tuple[int, int]], starts: list[list[SectionStart]]) -> list[SectionStart]:
    """One list of section starts: each window decides the units nearest its middle (the overlap
    with a neighbour is split at its midpoint); the start every window opens with is dropped unless
    the window owns it, and a start one unit after the previous window's last start is a duplicate."""
    merged: list[SectionStart] = []
    for w in range(len(windows)):
        own_from, own_to = owned_range(windows, w)
        owned = [s for s in sorted(starts[w], key=lambda s: s.unit) if own_from <= s.unit < own_to]
        if w and owned and merged and owned[0].unit - merged[-1].unit <= 1 and owned[0].level >= merged[-1].level:
            owned = owned[1:]  # the same boundary, seen one unit apart from both sides of the cut
        merged.extend(owned)
    if not merged or merged[0].unit != 0:
        raise ValueError("the first window must open a section at its first unit")
    return merged


def owned_range(windows: list[tuple[int, int]], w: int) -> tuple[int, int]:
    """The units whose section starts window w decides: overlaps are split at their middle."""

    def cut(left: tuple[int, int], right: tuple[int, int]) -> int:
        return (right[0] + left[1] + 1) // 2 if left[1] > right[0] else right[0]

    lo = 0 if w == 0 else cut(windows[w - 1], windows[w])
    hi = windows[w][1] if w == len(windows) - 1 else cut(windows[w], windows[w + 1])
    return lo, hi


def build_sections(
    doc: ParsedDocument, body: str, units: list[Unit], starts: list[SectionStart], max_tokens: int = LEAF_TOKENS
) -> Node:
    """document → sections (→ subsections) → paragraph leaves packed from each section's pieces."""
    root = Node(kind="document", title=doc.title, page_start=1, page_end=max(doc.pages, 1), char_end=len(body))
    ordered = sorted(starts, key=lambda s: s.unit)
    section: Node | None = None
    for i, item in enumerate(ordered):
        stop = ordered[i + 1].unit if i + 1 < len(ordered) else len(units)
        pieces = [piece for unit in units[item.unit : stop] for piece in unit.pieces]
        first = units[item.unit]
        node = Node(
            kind="section" if item.level == 1 or section is None else "subsection",
            title=item.title,
            page_start=first.pieces[0].page,
            page_end=first.pieces[0].page_end,
            char_start=first.start,
            char_end=first.start,
        )
        for span in pack(body, pieces, max_tokens):
            node.children.append(
                Node(kind="paragraph", text=body[span.start : span.end], page_start=span.page,
                     page_end=span.page_end, char_start=span.start, char_end=span.end, tokens=span.tokens,
                     summary=span.header)
            )
        if node.kind == "section":
            root.children.append(node)
            section = node
        else:
            section.children.append(node)  # type: ignore[union-attr]
    return finish(root)


def coverage_problem(root: Node, body: str) -> str | None:
    """Why the leaves do not cover the body exactly once and in order (None when they do)."""
    cursor = 0
    for leaf in leaves(root):
        if leaf.text != body[leaf.char_start : leaf.char_end]:
            return f"leaf at {leaf.char_start} is not the body text at its span"
        if leaf.char_start < cursor:
            return f"leaf at {leaf.char_start} overlaps or precedes the one before"
        if body[cursor : leaf.char_start].strip():
            return f"text at {cursor}..{leaf.char_start} is in no leaf"
        cursor = leaf.char_end
    if body[cursor:].strip():
        return f"text after {cursor} is in no leaf"
    return None
