"""How a candidate span fits what the question asks (the `Asked` record): the kind of answer it
wants, the noun it names, the side of a range, its own words.
The spans themselves come from longqa/text/spans.py."""

from __future__ import annotations

import re

from longqa.ask.analysis.asked import Asked
from longqa.ask.settings import in_effect
from longqa.text import spans
from longqa.text.spans import TIME_UNITS, YEAR, Span
from longqa.text.words import STOPWORDS, words


def candidates(sentence: str) -> list[Span]:
    """The sentence's candidate spans, phrases as long as the answer settings allow."""
    return spans.candidates(sentence, in_effect().answer.max_phrase_words)


# Where a span's kind stands for the kind of answer the question wants (Asked.want). Which kinds
# answer which question is a fact of language, written here; how much each standing counts is a
# setting (answer.kind_fit), scaled by the ranker's learned kind_fit weight.
FIT, NEAR, UNLIKELY, CLASH, NEUTRAL = "fit", "near", "unlikely", "clash", "neutral"
STANDINGS = (FIT, NEAR, UNLIKELY, CLASH)  # the order of answer.kind_fit's values
_FIGURES = ("quantity", "date", "time", "month")
# want -> (kinds that fit, kinds near it: a coarser or partial answer, kinds unlikely); any other
# kind clashes. "timed" is a quantity with a unit of time ("52 hours"), told apart for durations.
_STANDINGS = {
    "frequency": (("frequency",), (), ("quantity", "timed")),
    "duration": (("timed",), ("quantity",), ()),
    "date": (("date", "time"), ("month",), ("quantity", "timed")),  # "3 a.m." answers "when"
    "month": (("month",), ("date",), ()),
    "quantity": (("quantity", "timed"), (), ()),
    "name": (("name",), (), ("phrase",)),
}


def standing(span: Span, want: str) -> str:
    """FIT, NEAR, UNLIKELY or CLASH: where the span's kind stands for the answer kind wanted;
    NEUTRAL where the question wants no kind of span (options, sentences, yes/no)."""
    if want == "any":  # "what series", "which device": a thing, rarely a bare number or a date
        return UNLIKELY if span.kind in _FIGURES else NEUTRAL
    if want not in _STANDINGS:
        return NEUTRAL
    kind = "timed" if span.kind == "quantity" and TIME_UNITS.search(span.text) else span.kind
    fit, near, unlikely = _STANDINGS[want]
    return FIT if kind in fit else NEAR if kind in near else UNLIKELY if kind in unlikely else CLASH


def fits(span: Span, want: str) -> float:
    """How well a span's kind fits the answer kind the question wants: its standing's value in
    answer.kind_fit (fits > 0, neutral 0, unlikely and clashing < 0)."""
    where = standing(span, want)
    return 0.0 if where == NEUTRAL else in_effect().answer.kind_fit[STANDINGS.index(where)]


def names_head(span: Span, head: str | None) -> bool:
    """The span carries the question's head noun ("Harbour Road Depot" for "what depot")."""
    return bool(head) and span.kind in ("name", "phrase") and any(
        w == head or w.rstrip("s") == head.rstrip("s") for w in words(span.text))


def defines(span: Span, sentence: str, head: str | None) -> bool:
    """The sentence says the span IS the question's head noun ("Ferric sulphate is the coagulant",
    "the coagulant is ferric sulphate"), for a "what coagulant ..." question."""
    if not head or span.start < 0 or span.kind not in ("name", "phrase"):
        return False
    noun = rf"(?:[\w-]+\s+){{0,2}}{re.escape(head)}s?"
    return bool(re.match(rf"\s*(?:is|was|are|were)\s+(?:the|a|an|its|our)\s+{noun}\b", sentence[span.end:], re.I)
                or re.search(rf"\bthe\s+{noun}\s+(?:used\s+)?(?:is|was|are|were)\s+$", sentence[:span.start], re.I))


def year_of(span: Span, asked: Asked) -> Span:
    """For "in what year ...", a date's year alone ("2019" of "December 31, 2019")."""
    if span.kind != "date" or not asked.asks_year:
        return span
    match = YEAR.search(span.text)
    if match is None or match.group() == span.text:
        return span
    start = span.start + match.start() if span.start >= 0 else -1
    return Span(match.group(), "date", start, start + len(match.group()) if start >= 0 else -1)


_LOCATIVE_BEFORE = re.compile(r"\b(?:in|at|from|near|into|outside|inside|within|based in|born in)\s+(?:the\s+)?$", re.I)


def placed(span: Span, sentence: str, asked: Asked) -> bool:
    """For a "where" question, a name the sentence introduces with a place's preposition
    ("formed in Leyton", "recorded in Fujioka"): a place, not a person or a title."""
    return (span.kind in ("name", "phrase") and span.start > 0 and asked.asks_place
            and bool(_LOCATIVE_BEFORE.search(sentence[max(0, span.start - 24):span.start])))


def repeats_question(span: Span, asked: Asked) -> bool:
    """A span made only of the question's own words (a name's words perhaps as the question's
    initials) does not answer it, nor does a figure or date that holds a number the question
    states ("3 June 2019" for "when did the 2019 inspection report its findings?", "12 million"
    for "how many of the 12 million ...")."""
    said_words = set(asked.words)
    mine = [w for w in words(span.text) if w not in STOPWORDS]
    if span.kind in ("quantity", "date", "time") and any(w in said_words for w in mine if w[:1].isdigit()):
        return True
    # "Anna Maria Ruiz" repeats "Anna M Ruiz": a name's word may stand as its initial
    initials = {w for w in said_words if len(w) == 1 and w.isalpha()} if span.kind == "name" else set()
    said = [w in said_words for w in mine]
    return any(said) and all(s or (len(w) > 1 and w[0] in initials) for w, s in zip(mine, said))
