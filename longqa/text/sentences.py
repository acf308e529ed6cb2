"""Sentences of a leaf's stored text, as character offsets into that text.

Offsets, not copies: a quote shown to the user is always `leaf.text[start:end]`, so it can be
checked against the store byte for byte. A sentence ends at . ! or ? followed by whitespace and
a capital, digit, quote or bracket; a line break that ends a line without sentence punctuation
(table rows, list items, headings) also ends one. Abbreviations ("e.g.", "No. 5", "U.S."),
decimals ("4.5"), initials ("J. Smith") and a sentence's own number ("1.1. ...") do not. Runs
over the length limit are cut, except prose sentences (see PROSE_FACTOR).
"""

from __future__ import annotations

import re


# A candidate end: punctuation (with closing quotes/brackets) then whitespace, or a line break.
_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s)|\n")
_ABBREVIATIONS = {
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "st", "no", "nos", "inc", "ltd", "co",
    "corp", "jr", "sr", "fig", "figs", "eq", "approx", "dept", "est", "vol", "p", "pp", "ch", "sec",
    "u.s", "u.k", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
}
# A sentence's own number ("1.1. "Licensee" means ...", "3. The Supplier ..."): a label, not a sentence.
_NUMBER_LABEL = re.compile(r"\s*\d{1,3}(?:\.\d{1,3})*\.$")
# Longer runs (a table flattened into one line) are cut at spaces; the answer stage passes its own
# setting (answer.max_sentence_chars), ingest-time callers take this default.
MAX_SENTENCE_CHARS = 600
# A run that ends a sentence and is made of words is prose, not a flattened table: contracts write
# single sentences of 800 characters and more, and cutting one leaves two halves that each misquote
# it. Such a run is kept whole up to this many times the limit.
PROSE_FACTOR = 4
_PROSE_WORDS = 0.8  # share of a run's tokens that open with a letter for it to read as prose
_ENDS_SENTENCE = re.compile(r"[.!?][\"'”’)\]]*$")


def split(text: str, max_chars: int = MAX_SENTENCE_CHARS) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, leading/trailing whitespace excluded."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        if match.group() != "\n" and (_NUMBER_LABEL.match(text, start, match.start() + 1)
                                       or not _ends_sentence(text, match.start(), end)):
            continue
        _add(text, start, end, spans, max_chars)
        start = end
    _add(text, start, len(text), spans, max_chars)
    return spans


def _ends_sentence(text: str, dot: int, end: int) -> bool:
    if text[dot] == ".":
        word = re.search(r"([\w./]+)$", text[max(0, dot - 12):dot])
        token = word.group(1).lower() if word else ""
        if token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha()):
            return False  # "No. 5", "J. Smith"; a unit like "Ml/d." still ends a sentence
    following = text[end:end + 3].lstrip()
    return not following or following[0].isupper() or following[0].isdigit() or following[0] in "\"'“‘([•-–"


def _add(text: str, start: int, end: int, spans: list[tuple[int, int]], max_chars: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    limit = max_chars * PROSE_FACTOR if _prose(text[start:end]) else max_chars
    while end - start > limit:
        cut = text.rfind(" ", start + max_chars // 2, start + max_chars)
        cut = cut if cut > start else start + max_chars
        spans.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
        limit = max_chars
    if end > start and any(ch.isalnum() for ch in text[start:end]):
        spans.append((start, end))


def _prose(run: str) -> bool:
    """Whether `run` is a sentence of words: it ends with sentence punctuation and most of its tokens
    open with a letter (a flattened table is mostly numbers, bars and short cells)."""
    if not _ENDS_SENTENCE.search(run):
        return False
    tokens = run.split()
    return sum(1 for token in tokens if token.lstrip("\"'“‘([")[:1].isalpha()) >= _PROSE_WORDS * len(tokens)
