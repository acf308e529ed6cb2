"""Paragraph leaves of a sane size: long blocks split at sentence ends, tiny fragments merged.

Works on character spans of the body text so that every leaf's text is an exact slice of it. A
table is split between its rows (one row a line), and each later piece carries the table's first
line, its column headers, in `header`: a row cut off from them reads as loose figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa import tokens

# Most tokens (cl100k) in a paragraph leaf, the unit every step retrieves, scores and cites; longer
# paragraphs are split at sentence ends. GARLIC's chunk size, set when the trees were built; not swept.
LEAF_TOKENS = 300
MIN_TOKENS = 40  # fragments below this join their neighbour (table rows, lone lines)

_SENTENCE_END = re.compile(r"(?<=[.!?;:])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9•\-–])|\n")


@dataclass
class Span:
    start: int
    end: int
    page: int
    page_end: int
    tokens: int
    table: bool = False
    header: str = ""  # a piece that goes on with a table begun before it: that table's header row


def sentence_spans(text: str, start: int) -> list[tuple[int, int]]:
    """Sentence (or line) boundaries inside `text`, as absolute spans beginning at `start`."""
    spans, cursor = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() > cursor:
            spans.append((start + cursor, start + match.start()))
        cursor = match.end()
    if cursor < len(text):
        spans.append((start + cursor, start + len(text)))
    return [(a, b) for a, b in spans if b > a]


def _line_spans(text: str, start: int) -> list[tuple[int, int]]:
    """Line boundaries inside `text`, as absolute spans beginning at `start` (blank lines left out)."""
    spans, cursor = [], 0
    for line in text.split("\n"):
        if line.strip():
            spans.append((start + cursor, start + cursor + len(line)))
        cursor += len(line) + 1
    return spans


def _word_windows(body: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Last resort for a single over-long sentence: cut between words about every `max_tokens`
    tokens. The span is tokenized once (linear in its length) and each cut moves back to the
    last space before its token; a little headroom keeps every piece within `max_tokens` when it
    is counted on its own."""
    text = body[start:end]
    _, offsets = tokens.encoding().decode_with_offsets(tokens.encoding().encode_ordinary(text))
    step = max(1, max_tokens - max(2, max_tokens // 20))
    pieces, piece_start = [], 0
    index = step
    while index < len(offsets):
        cut = offsets[index]
        space = text.rfind(" ", piece_start + 1, cut + 1)
        if space > piece_start:
            cut = space
        if cut > piece_start:
            pieces.append((start + piece_start, start + cut))
            piece_start = cut
        index = _first_token_at(offsets, piece_start, index) + step
    pieces.append((start + piece_start, end))
    return [(a, b) for a, b in pieces if body[a:b].strip()]


def _first_token_at(offsets: list[int], position: int, hint: int) -> int:
    """Index of the first token starting at or after `position` (searching back from `hint`)."""
    index = min(hint, len(offsets) - 1)
    while index > 0 and offsets[index - 1] >= position:
        index -= 1
    while index < len(offsets) and offsets[index] < position:
        index += 1
    return index


def split_long(body: str, span: Span, max_tokens: int) -> list[Span]:
    """Split one over-long span at sentence ends into pieces of at most `max_tokens` tokens."""
    if span.tokens <= max_tokens:
        return [span]
    units: list[tuple[int, int]] = []
    text = body[span.start : span.end]
    # A table is cut between rows only: a sentence's end inside a row's description is no place to cut.
    cuts = _line_spans(text, span.start) if span.table else sentence_spans(text, span.start)
    for a, b in cuts:
        if tokens.count(body[a:b]) > max_tokens:
            units.extend(_word_windows(body, a, b, max_tokens))
        else:
            units.append((a, b))
    pieces: list[Span] = []
    current: list[tuple[int, int]] = []
    for unit in units:
        candidate = (current[0][0], unit[1]) if current else unit
        if current and tokens.count(body[candidate[0] : candidate[1]]) > max_tokens:
            pieces.append(_span(body, current[0][0], current[-1][1], span))
            current = [unit]
        else:
            current.append(unit)
    if current:
        pieces.append(_span(body, current[0][0], current[-1][1], span))
    if span.table and len(pieces) > 1:
        header = span.header or body[span.start:span.end].split("\n", 1)[0].strip()
        for piece in pieces[1:]:
            piece.header = header
    return pieces


def _span(body: str, start: int, end: int, parent: Span) -> Span:
    return Span(start, end, parent.page, parent.page_end, tokens.count(body[start:end]), parent.table,
                parent.header)


def pack(body: str, spans: list[Span], max_tokens: int = LEAF_TOKENS) -> list[Span]:
    """Merge consecutive small spans until each reaches MIN_TOKENS, never exceeding max_tokens."""
    pieces = [piece for span in spans for piece in split_long(body, span, max_tokens)]
    merged: list[Span] = []
    for piece in pieces:
        last = merged[-1] if merged else None
        if last and last.tokens < MIN_TOKENS and _joined_tokens(body, last, piece) <= max_tokens:
            merged[-1] = _join(body, last, piece)
        else:
            merged.append(piece)
    if len(merged) > 1 and merged[-1].tokens < MIN_TOKENS:
        if _joined_tokens(body, merged[-2], merged[-1]) <= max_tokens:
            merged[-2:] = [_join(body, merged[-2], merged[-1])]
    return merged


def _joined_tokens(body: str, a: Span, b: Span) -> int:
    return tokens.count(body[a.start : b.end])


def _join(body: str, a: Span, b: Span) -> Span:
    return Span(
        a.start,
        b.end,
        min(a.page, b.page),
        max(a.page_end, b.page_end),
        tokens.count(body[a.start : b.end]),
        a.table and b.table,
        a.header,  # the joined piece starts as `a` does; a header `b` carries is inside `a` or before it
    )
