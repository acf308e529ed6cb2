"""Headings from the PDF's own bookmarks, checked against the page text.

Each bookmark (level, title, page) is looked for on its page (then the pages either side) as a
block whose text, compared without case, spaces or punctuation, equals the title, starts with it
(a heading run into its paragraph: the block is split so the heading stands alone) or is the first
part of it (a title broken over two blocks). Bookmarks that mostly do not match the text are
not trusted: fewer than MIN_FOUND of them found means None, and the cascade moves on.
"""

from __future__ import annotations

import re

from longqa.parse.blocks import Block, ParsedDocument
from longqa.structure.tree import Heading

MIN_FOUND = 0.6
# "3", "3.2.", "IV.", "II-A", "A." before a heading's words; bookmarks and text often disagree on it.
_LEADING_NUMBER = re.compile(r"^(?:\d{1,2}|[IVXLC]{1,6}|[A-Z])(?:[.\-](?:\d{1,2}|[A-Z]))*\.?\s+")


def normalise(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _keys(text: str) -> tuple[str, str]:
    """The text normalised with and without its leading section number."""
    text = " ".join(text.split())
    return normalise(text), normalise(_LEADING_NUMBER.sub("", text))


def match_kind(title: str, text: str) -> str | None:
    """"same", "prefix" (the block goes on after the title) or "part" (block is the title's start)."""
    full, bare = _keys(title)
    text_full, text_bare = _keys(text[: 4 * len(title) + 40])
    if not bare or not text_full:
        return None
    if full in (text_full, text_bare) or bare in (text_full, text_bare):
        return "same"
    if len(text_full) <= len(full) + 30 and bare in text_bare and len(bare) >= 8:
        return "same"  # "ADOBE INC. CONSOLIDATED BALANCE SHEETS" for the bookmark "Consolidated Balance Sheets"
    if len(normalise(text)) > len(full) and (text_full.startswith(full) or text_bare.startswith(bare)):
        return "prefix"
    if len(text_bare) >= max(8, len(bare) // 2) and (full.startswith(text_full) or bare.startswith(text_bare)):
        return "part"
    return None


def outline_headings(doc: ParsedDocument) -> list[Heading] | None:
    entries = list(doc.outline)
    if not entries:
        return None
    if normalise(entries[0].title) == normalise(doc.title):
        entries = entries[1:]  # a bookmark naming the whole document is the root, not a section
    by_page: dict[int, list[int]] = {}
    for index, block in enumerate(doc.blocks):
        by_page.setdefault(block.page, []).append(index)
    found: list[tuple[int, int, str, str]] = []  # (block index, level, title, kind)
    last = -1
    for entry in entries:
        hit = _find(doc, by_page, entry.title, entry.page, last)
        if hit is not None:
            found.append((hit[0], entry.level, entry.title, hit[1]))
            last = hit[0]
    if len(found) < 2 or len(found) < MIN_FOUND * len(entries):  # one bookmark structures nothing
        return None
    top = min(level for _, level, _, _ in found)
    return _split_run_in(doc, [(i, level - top + 1, title, kind) for i, level, title, kind in found])


def _find(doc: ParsedDocument, by_page: dict[int, list[int]], title: str, page: int, after: int):
    """The first matching block after `after`, on the bookmark's page first, then page-1, page+1."""
    for candidate_page in (page, page - 1, page + 1):
        for index in by_page.get(candidate_page, []):
            if index <= after:
                continue
            kind = match_kind(title, doc.blocks[index].text)
            if kind:
                return index, kind
    return None


def _split_run_in(doc: ParsedDocument, found: list[tuple[int, int, str, str]]) -> list[Heading]:
    """Give each run-in heading its own block; return headings with indices into the new blocks."""
    kinds = {index: (title, kind) for index, _, title, kind in found}
    blocks: list[Block] = []
    new_index: dict[int, int] = {}
    for index, block in enumerate(doc.blocks):
        new_index[index] = len(blocks)
        title, kind = kinds.get(index, ("", ""))
        cut = _cut_after(block.text, title) if kind == "prefix" else None
        if cut:
            blocks.append(Block(block.text[:cut].strip(), block.page, 0, block.size, block.bold))
            blocks.append(Block(block.text[cut:].strip(), block.page, block.page_end, block.size, block.bold,
                                table=block.table))
        else:
            blocks.append(block)
    doc.blocks = blocks
    return [Heading(new_index[index], level, title) for index, level, title, _ in found]


def _cut_after(text: str, title: str) -> int | None:
    """Offset in `text` just past the characters that spell out `title` (and a closing . or :)."""
    full, bare = _keys(title)
    target = full if normalise(text).startswith(full) else bare
    if not target:
        return None
    seen = 0
    start = 0
    if target == bare and not normalise(text).startswith(full):
        number = _LEADING_NUMBER.match(text)
        start = number.end() if number else 0
    for offset in range(start, len(text)):
        if text[offset].isalnum():
            seen += len(text[offset].casefold())
            if seen >= len(target):
                end = offset + 1
                while end < len(text) and text[end] in ".:—–-":
                    end += 1
                return end if text[end:].strip() else None
    return None
