"""Answer candidates for a short-answer question, generated broadly: every span of the best focused
sentences that could be the answer, with the answer kind it has and the place it stands in.

The place (its structural kind) matters as much as the words: a "6." that opens a line numbers a
section, a "1" before a list item enumerates, a date on a document's opening lines is the date of
the document, and a value inside "a | b | c" is a table cell. The ranker (ranker.py) learns how much
each of these counts; nothing here decides the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import span_fit
from longqa.text import spans
from longqa.ask.answer.focus import Sentence
from longqa.ask.settings import in_effect


# Code-like tokens the name and phrase patterns miss: a dot-command (".tables"), a command-line
# flag ("--force", "-v"), an identifier with an underscore or dots ("max_tokens", "os.path.join"),
# an option key with its value ("numbersep=5pt"), anything in backquotes.
_CODE = re.compile(
    r"(?<![\w.])\.[a-z][\w-]*\b"
    r"|(?<![\w-])--?[A-Za-z][\w-]*"
    r"|\b[A-Za-z][\w]*_[\w]+\b"
    r"|\b[a-z]\w*(?:\.[a-z_]\w*)+(?:\(\))?"
    r"|\b[\w-]+=[^\s,;]+"
    r"|`[^`\n]{1,60}`")
# A number that opens a line and numbers it: "6.", "2.5", "(3)", "1)".
_NUMBER_LABEL = re.compile(r"\(?\d{1,3}(?:\.\d{1,3})*[.)]?")
# A list mark inside a sentence, after a colon, a comma or "and": "five files: 1. the system file,
# 2. the user file and 3. the font map".
_INLINE_MARK = re.compile(r"\s*[.)]\s+[^\W\d]")
_LIST_JOIN = re.compile(r"\b(?:and|or)$", re.I)


@dataclass
class Candidate:
    """One possible answer: its text, where it was found, and what the ranker made of it."""

    text: str
    kind: str  # quantity | date | month | time | frequency | name | phrase | code | yesno | option | none
    sentence: Sentence | None
    start: int = -1  # offsets into the sentence's text; -1 when the text is not a span of it
    end: int = -1
    source: str = "span"  # span | draft | field | option | yesno | none
    structure: str = "body"  # body | heading | number_label | table_cell | opening
    features: dict[str, float] = field(default_factory=dict)
    score: float = 0.0  # the ranker's score (its prior stage, then its final one)
    probability: float = 0.0  # the calibrated chance that it is right

    def as_span(self) -> spans.Span:
        return spans.Span(self.text, self.kind, self.start, self.end)


def code_spans(sentence: str) -> list[spans.Span]:
    """Code-like tokens of a sentence: dot-commands, flags, identifiers, option keys."""
    found = []
    for match in _CODE.finditer(sentence):
        text = match.group().strip("`").rstrip(".,;:")
        if len(text) >= 2:
            start = sentence.index(text, match.start())
            found.append(spans.Span(text, "code", start, start + len(text)))
    return found


def structure_of(text: str, sentence: Sentence | None, start: int) -> str:
    """Where a span stands: a table cell, a number labelling its line, a heading-like line, the
    document's opening lines, or body text."""
    if sentence is None:
        return "body"
    line = sentence.text
    if " | " in line:
        return "table_cell"
    if start >= 0 and _NUMBER_LABEL.fullmatch(text.strip()):
        before = line[:start].strip(" •*-–\t")
        after_mark = _INLINE_MARK.match(line, start + len(text.rstrip(".)")))
        if not before or (after_mark and (before.endswith((":", ",", ";")) or _LIST_JOIN.search(before))):
            return "number_label"
    if len(line.split()) <= in_effect().answer.heading_words and not line.rstrip().endswith((".", "?", "!", ":", ";", ",")):
        return "heading"
    # Text standing directly under the document, before its first section, on its first page: a
    # title page, a letterhead, a contract's parties and date.
    if sentence.leaf.depth <= 1 and sentence.leaf.page_start <= 1:
        return "opening"
    return "body"


def spans_of(sentence: Sentence, asked: Asked) -> list[Candidate]:
    """Every candidate span of one sentence (answer spans, then code-like tokens)."""
    found = []
    text = sentence.text
    for span in span_fit.candidates(text) + code_spans(text):
        if span.kind != "code":
            span = span_fit.year_of(span, asked)
        found.append(Candidate(span.text, span.kind, sentence, span.start, span.end,
                               structure=structure_of(span.text, sentence, span.start)))
    return found


def pooled(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per text (case-insensitive), the first offered kept: candidates come from the
    best sentences first (how many sentences say a text is the `frequency` feature)."""
    pool: dict[str, Candidate] = {}
    for candidate in candidates:
        pool.setdefault(candidate.text.lower(), candidate)
    return list(pool.values())
