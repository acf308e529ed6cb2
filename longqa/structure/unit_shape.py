"""What kind of text a paragraph unit is, from its shape rather than its topic.

A heading-less document still shows where running prose gives way to something else: a table
(the parser's table rows), small print (a font smaller than the body's: captions, footnotes,
credits tables), a list of references or links, a formula. Such units sit apart from their
neighbours in meaning (the small embedder scores a table against the paragraph before it like an
unrelated text), yet a table in a paper, or the tenth unit of a reference list, opens no section.
boundaries.py reads the shapes to keep topic signals to prose, and to see where a long run of
non-prose begins (a filmography, a reference list: those are sections of their own).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter

from longqa.parse.blocks import ParsedDocument
from longqa.structure.build import body_text

PROSE, TABLE, SMALL, LIST, FORMULA = "prose", "table", "small", "list", "formula"

TABLE_SHARE = 0.5  # share of a unit's characters in table rows that makes it a table
SMALL_BY = 0.75  # points below the body's font size that make print small
# List items per 100 words that make a unit a list: URLs, "Retrieved …"/"Archived …" lines,
# numbered entries ("12. Smith, …"), bullets. Prose cites one now and then; a reference list
# holds 3-8 per 100 words, and every unit of one at least LIST_MARKS.
LIST_MARKS_PER_100 = 2.0
LIST_MARKS = 3
WORD_SHARE = 0.55  # below this share of alphabetic words a unit is a formula or symbol run

_LIST_MARK = re.compile(r"https?://|\b(?:Retrieved|Archived)\b|(?:^|\s)\d{1,3}\.\s+[\"“A-Z^]|(?:^|\s)[•▪◦·]\s")
_WORD = re.compile(r"^[(\[\"“‘']?[^\W\d_]{2,}[)\]\"”’'.,;:!?]*$")


def unit_layout(doc: ParsedDocument, spans: list[tuple[int, int]]) -> tuple[list[float], list[float], float]:
    """Each span's dominant font size and share of table characters, and the body's font size
    (the size of most characters; 0 for documents without fonts). `spans` are character ranges
    of the body text of `doc` (build.body_text)."""
    _, starts = body_text(doc)
    overall: Counter = Counter()
    for block in doc.blocks:
        overall[block.size] += len(block.text)
    sizes, tables = [], []
    for lo, hi in spans:
        first = max(bisect.bisect_right(starts, lo) - 1, 0)
        last = bisect.bisect_left(starts, hi)
        blocks = doc.blocks[first:last] or doc.blocks[first : first + 1]
        chars: Counter = Counter()
        for block in blocks:
            chars[block.size] += len(block.text)
        total = sum(chars.values()) or 1
        sizes.append(chars.most_common(1)[0][0] if chars else 0.0)
        tables.append(sum(len(b.text) for b in blocks if b.table) / total)
    body_size = overall.most_common(1)[0][0] if overall else 0.0
    return sizes, tables, body_size


def unit_shape(text: str, size: float = 0.0, table_share: float = 0.0, body_size: float = 0.0) -> str:
    """PROSE, TABLE, SMALL, LIST or FORMULA for one unit (see the module docstring)."""
    if table_share >= TABLE_SHARE:
        return TABLE
    if body_size > 0 and 0 < size <= body_size - SMALL_BY:
        return SMALL
    words = text.split()
    if not words:
        return FORMULA
    marks = len(_LIST_MARK.findall(text))
    if marks >= LIST_MARKS and marks * 100 / len(words) >= LIST_MARKS_PER_100:
        return LIST
    if sum(1 for w in words if _WORD.match(w)) / len(words) < WORD_SHARE:
        return FORMULA
    return PROSE


def unit_shapes(texts: list[str], layout: tuple[list[float], list[float], float] | None = None) -> list[str]:
    """The shape of every unit; `layout` is unit_layout's answer (None for plain text)."""
    if layout is None:
        shapes = [unit_shape(text) for text in texts]
    else:
        sizes, tables, body_size = layout
        shapes = [unit_shape(t, s, share, body_size) for t, s, share in zip(texts, sizes, tables)]
    # An entry of a list with fewer marks than the rest (a reference without a link) is still
    # part of the list around it.
    for i in range(1, len(texts) - 1):
        if shapes[i] == PROSE and shapes[i - 1] == shapes[i + 1] == LIST and _LIST_MARK.search(texts[i]):
            shapes[i] = LIST
    return shapes
