"""Fields: a value read off a labelled line ("Judge term length | Life tenure") whose label names
what the question asks.

Encyclopedia pages and fact sheets printed to PDF open with a box of fields, which the parsers
keep as "Label | Value" lines or as a short label line followed by its value. The facts people ask
about most live there ("how many justices": "Number of positions / 9, by statute"), but a field
says neither the question's words nor a sentence's worth of them, so sentence scoring passes it
over. A field answers when:
- its label (1-5 words, no figures) shares a word stem with what the question asks about, the
  question's words less those of the document's own name ("term of office for the supreme court"
  asks about "term"; "how many" asks for a number, "where ... located" for a location);
- its value holds a span of the kind the question wants (a figure, written with digits, for "how
  many"), and is not a unit note ("(in thousands)").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import span_fit
from longqa.text import spans
from longqa.ask.answer.focus import Sentence
from longqa.text.stems import prefix_stem
from longqa.text.words import content_terms

MAX_LABEL_WORDS = 5
MAX_VALUE_WORDS = 10
_LABEL = re.compile(r"[A-Z][A-Za-z'’()\- ]*")


@dataclass
class Field:
    label: str
    line: Sentence  # the sentence holding the label
    value: Sentence  # the sentence holding the value: the same one for "Label | Value"
    start: int  # where the value starts in that sentence's text
    matched: int = 0  # how many of the question's stems the label says




def asked_stems(asked: Asked, subject: str) -> set[str]:
    """Stems of what the question asks about: its content words less those of `subject` (the
    document's name), plus what its form asks for, said the way labels say it ("how many":
    number, "where": location)."""
    own = {prefix_stem(w) for w in content_terms(subject)}
    stems = {prefix_stem(w) for w in content_terms(asked.core) if not w.isdigit()} - own
    form = {"number": asked.asks_amount, "location": asked.asks_place}
    return stems | {prefix_stem(word) for word, says in form.items() if says}


def fields(sentences: list[Sentence]) -> list[Field]:
    """The labelled lines of the context, in context order."""
    found = []
    for i, sentence in enumerate(sentences):
        text = sentence.text.strip()
        if text.count(" | ") == 1:
            label, value = text.split(" | ")
            if _is_label(label) and value.strip() and len(value.split()) <= MAX_VALUE_WORDS:
                found.append(Field(label.strip(), sentence, sentence, sentence.text.index(" | ") + 3))
        elif _is_label(text) and i + 1 < len(sentences):
            after = sentences[i + 1]
            if (_adjacent(sentence, after) and " | " not in after.text
                    and len(after.text.split()) <= MAX_VALUE_WORDS):
                found.append(Field(text, sentence, after, 0))
    return found


def _adjacent(label: Sentence, value: Sentence) -> bool:
    """The value follows the label in the document: same leaf, or the next leaf straight after it
    (a field cut between two paragraphs, which may be two passages)."""
    if value.leaf is label.leaf:
        return True
    return (value.passage.doc_id == label.passage.doc_id and value.start == 0
            and 0 <= value.leaf.char_start - label.leaf.char_end <= 4)


def _is_label(text: str) -> bool:
    return (0 < len(text.split()) <= MAX_LABEL_WORDS and bool(_LABEL.fullmatch(text))
            and not text.rstrip().endswith((".", ":", ";", ",")))


def match(asked: Asked, sentences: list[Sentence]) -> tuple[Field, spans.Span] | None:
    """The field whose label says most of what the question asks, with the first span of its value
    that fits the kind wanted (the longest of those starting there); nothing when two labels match
    equally well (the label is then no guide) or the value holds nothing of the kind wanted."""
    scored = []
    stems: dict[str, set[str]] = {}  # by document name
    for field in fields(sentences):
        doc = field.value.passage.doc
        if doc not in stems:
            stems[doc] = asked_stems(asked, doc)
        field.matched = len(stems[doc] & {prefix_stem(w) for w in content_terms(field.label)})
        if field.matched:
            scored.append(field)
    best = max((f.matched for f in scored), default=0)
    top = [f for f in scored if f.matched == best]
    if len({(f.label, f.value.text[f.start:]) for f in top}) != 1:
        return None
    field = top[0]
    value, want = field.value.text[field.start:].strip(), asked.want
    if value.startswith("("):  # "Number of Shares / (in thousands)": a table's unit note, not a value
        return None
    fitting = [span for span in span_fit.candidates(value)
               if (span_fit.standing(span, want) == span_fit.FIT and (want == "name" or re.search(r"\d", span.text)))
               or (want == "any" and span_fit.standing(span, want) == span_fit.NEUTRAL)]
    if not fitting:
        return None
    span = min(fitting, key=lambda s: (s.start, -len(s.text)))
    at = field.value.text.index(value, field.start)
    return field, spans.Span(span.text, span.kind, span.start + at, span.end + at)


def raise_match(asked: Asked, found: list[Sentence]) -> None:
    """Put the field that answers the question (`match`) first: its label and value sentences
    score just above the best sentence, so a tight budget keeps them (ask/excerpt.py)."""
    hit = match(asked, found)
    if hit is None:
        return
    top = max(s.score for s in found)
    for sentence in (hit[0].line, hit[0].value):
        sentence.score = top + 1e-3
