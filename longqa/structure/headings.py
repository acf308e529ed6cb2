"""Headings for markdown (the `#` marks) and plain text (numbering and short title-like lines)."""

from __future__ import annotations

import re

from longqa.parse.blocks import ParsedDocument
from longqa.structure.tree import Heading

# "1. Introduction", "2.3 Methods", "Chapter 4", "PART II", "Item 7.", "Appendix A", "Section 5"
NUMBERED = re.compile(
    r"^(?:(?P<dotted>\d{1,2}(?:\.\d{1,2}){0,3})\.?|(?P<word>chapter|part|item|section|article|appendix)"
    r"\s+(?P<label>[0-9]{1,3}[A-Z]?|[IVXLC]{1,6}|[A-Z])\.?)(?=\s+\S|$)",
    re.IGNORECASE,
)
_WORD_LEVEL = {"part": 1, "chapter": 1, "article": 1, "appendix": 1, "item": 2, "section": 2}
MAX_HEADING_CHARS = 90


def markdown_headings(doc: ParsedDocument) -> list[Heading]:
    """`#` headings. A lone top-level heading first in the file is the document's title (level 0):
    it names the document node instead of opening a section."""
    headings = [
        Heading(index, block.heading, block.text)
        for index, block in enumerate(doc.blocks)
        if block.heading is not None
    ]
    highest = min((h.level for h in headings), default=1)  # once: per heading it was quadratic
    top = [h for h in headings if h.level == highest]
    if len(top) == 1 and top[0] is headings[0] and len(headings) > 1:
        headings[0] = Heading(headings[0].index, 0, headings[0].title)
    return headings


def numbering_level(text: str) -> int | None:
    """Heading level implied by a numbering prefix ("2.3" → 2, "PART II" → 1), else None."""
    match = NUMBERED.match(text.strip())
    if not match:
        return None
    if match.group("dotted"):
        return match.group("dotted").count(".") + 1
    return _WORD_LEVEL[match.group("word").lower()]


def _title_like(text: str) -> bool:
    """A short line with no sentence punctuation, mostly capitalised words."""
    if "\n" in text or len(text) > MAX_HEADING_CHARS or text.endswith((".", ",", ";", ":", "?")):
        return False
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", text)]
    if not words or len(words) > 12:
        return False
    minor = {"a", "an", "the", "of", "and", "or", "in", "on", "for", "to", "with", "by", "at", "from"}
    capitalised = sum(1 for w in words if w[0].isupper() or w.lower() in minor)
    return capitalised == len(words) and any(w[0].isupper() for w in words)


def text_headings(doc: ParsedDocument) -> list[Heading]:
    """Numbered lines get their numbering's level; other title-like lines are level 1 unless numbered
    headings exist, in which case they are ignored (numbering is the stronger signal)."""
    numbered, titled = [], []
    for index, block in enumerate(doc.blocks):
        text = block.text.strip()
        if "\n" in text or len(text) > MAX_HEADING_CHARS or not text:
            continue
        level = numbering_level(text)
        if level is not None and not text.endswith((".", ",", ";")) or (
            level is not None and len(text.split()) <= 8
        ):
            numbered.append(Heading(index, level, text))
        elif _title_like(text):
            titled.append(Heading(index, 1, text))
    if len(numbered) >= 2:
        return numbered
    # Title-like lines only count when they are followed by body text, not by another title line.
    return [h for h in titled if h.index + 1 < len(doc.blocks) and not _title_like(doc.blocks[h.index + 1].text)]
