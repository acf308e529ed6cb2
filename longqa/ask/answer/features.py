"""The answer ranker's features: one table of small named functions, each with the reason it exists.

Every feature reads one candidate against the `Evidence` gathered once for the question (the
`Asked` record, the ranked sentences, the model's draft and its probabilities) and returns a number.
No feature carries a weight: ranker.py learns them from labelled questions (bench/answer_ranker.py)
and a feature whose removal does not lower the cross-validated score is deleted. General features
come first; the ones that read one kind of question (where, which county, who) follow and keep
their place only while they earn a weight.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import focus, kinds, span_fit
from longqa.ask.answer.candidates import Candidate
from longqa.ask.answer.focus import Sentence
from longqa.ask.answer.grounded import word_stem
from longqa.ask.settings import in_effect
from longqa.probabilities import softmax
from longqa.text import closeness, spans
from longqa.text.words import STOPWORDS, content_terms, overlap, words


@dataclass
class Evidence:
    """What every feature may read, gathered once per question."""

    asked: Asked
    ranked: list[Sentence]  # the sentences candidates come from, best first
    context: list[Sentence]  # every sentence of the context, in order
    draft: str = ""  # the model's own short answer
    bridges: list[str] = field(default_factory=list)  # entities a multi-hop search went through
    verdict: str = ""  # a yes/no question's verdict by the word rule ("Yes" | "No")
    dated: dict = field(default_factory=dict)  # option -> (picked by comparing years, sentence)
    field_text: str = ""  # the value of a labelled field whose label says what is asked
    personhood: dict[str, float] = field(default_factory=dict)  # text -> person margin × asked sign
    thing_fit: dict[str, float] = field(default_factory=dict)  # text -> cosine to the asked thing, relative
    model: dict[str, float] = field(default_factory=dict)  # text -> the model's mean log-probability

    def __post_init__(self):
        self.best = max((s.score for s in self.ranked), default=0.0) or 1.0
        self.rank = {id(s): i for i, s in enumerate(self.ranked)}
        stems: dict[str, set[str]] = {}
        for term in self.asked.terms:
            stems.setdefault(word_stem(term), set()).add(term)
        self.stems = stems
        # A multi-hop question's answer stands near what its later hop asks, not near the words its
        # first hop already found: nearness counts the question words the first hop's sentence lacks.
        start = next((s for s in self.context if s.first_hop), None) if self.bridges else None
        said = {word_stem(w) for w in words(start.text)} if start is not None else set()
        self.near_stems = {k: v for k, v in stems.items() if k not in said} or stems
        self.bridge_words = [set(words(entity)) for entity in self.bridges]
        self.bridge_own = set().union(*self.bridge_words) - STOPWORDS if self.bridge_words else set()
        self.lowered = [s.text.lower() for s in self.ranked]


# -- general features ---------------------------------------------------------------------------
def focus_score(c: Candidate, ev: Evidence) -> float:
    return c.sentence.score / ev.best if c.sentence is not None and c.kind != "none" else 0.0


def focus_rank(c: Candidate, ev: Evidence) -> float:
    if c.sentence is None or c.kind == "none":
        return 0.0
    return 1.0 / (1 + ev.rank.get(id(c.sentence), len(ev.ranked)))


def near_question(c: Candidate, ev: Evidence) -> float:
    if c.sentence is None or c.start < 0:
        return 0.0
    return closeness.proximity(ev.near_stems, question_words(ev.near_stems, c.sentence.text), c.start, c.end,
                               in_effect().answer.proximity_chars)


def apart_from_question(c: Candidate, ev: Evidence) -> float:
    return float(c.start >= 0 and near_question(c, ev) == 0.0 and near_bridge(c, ev) == 0.0)


def near_bridge(c: Candidate, ev: Evidence) -> float:
    if c.sentence is None or c.start < 0 or not ev.bridge_own:
        return 0.0
    return closeness.closeness(closeness.mentions(ev.bridge_own, c.sentence.text), c.start, c.end,
                               in_effect().answer.proximity_chars)


def kind_fit(c: Candidate, ev: Evidence) -> float:
    return span_fit.fits(c.as_span(), ev.asked.want) if c.kind not in ("yesno", "option", "none") else 0.0


def repeats_question(c: Candidate, ev: Evidence) -> float:
    if c.kind in ("yesno", "option", "none"):
        return 0.0
    mine = {w for w in words(c.text) if w not in STOPWORDS}
    bridge = bool(mine) and any(mine <= entity for entity in ev.bridge_words)
    return float(span_fit.repeats_question(c.as_span(), ev.asked) or bridge)


def first_hop_sentence(c: Candidate, ev: Evidence) -> float:
    return float(bool(ev.bridges) and c.sentence is not None and c.sentence.first_hop and c.kind != "none")


def frequency(c: Candidate, ev: Evidence) -> float:
    if c.kind in ("yesno", "none"):
        return 0.0
    needle = c.text.lower()
    return math.log1p(sum(needle in text for text in ev.lowered))


def length(c: Candidate, ev: Evidence) -> float:
    return math.log1p(len(words(c.text))) if c.kind not in ("yesno", "none") else 0.0


def draft_agrees(c: Candidate, ev: Evidence) -> float:
    if c.kind == "none":
        return float("not say" in ev.draft.lower())
    if c.kind == "yesno":
        return float(bool(re.match(rf"{c.text}\b", ev.draft, re.I)))
    return closeness.agreement(c.text, ev.draft)


TYPED = focus.TYPED


def draft_agrees_typed(c: Candidate, ev: Evidence) -> float:
    """The draft's vote where the question wants a figure, a date or a duration: a small model's
    reading of numbers is weaker than of names, so this vote may count differently."""
    return draft_agrees(c, ev) if ev.asked.want in TYPED else 0.0


def from_draft(c: Candidate, ev: Evidence) -> float:
    return float(c.source == "draft")


def model_logprob(c: Candidate, ev: Evidence) -> float:
    return max(ev.model.get(c.text, -12.0), -12.0) / 12.0 + 1.0 if ev.model else 0.0


def model_share(c: Candidate, ev: Evidence) -> float:
    """The model's probability among the candidates it scored (they sum to 1)."""
    if not ev.model or c.text not in ev.model:
        return 0.0
    return dict(zip(ev.model, softmax(list(ev.model.values()))))[c.text]


def model_best(c: Candidate, ev: Evidence) -> float:
    return float(bool(ev.model) and ev.model.get(c.text) == max(ev.model.values()))


def no_answer(c: Candidate, ev: Evidence) -> float:
    return float(c.kind == "none")


def structure(name: str) -> Callable[[Candidate, Evidence], float]:
    def feature(c: Candidate, ev: Evidence) -> float:
        return float(c.structure == name and c.kind not in ("yesno", "none"))
    return feature


def kind(*names: str) -> Callable[[Candidate, Evidence], float]:
    def feature(c: Candidate, ev: Evidence) -> float:
        return float(c.kind in names)
    return feature


# -- what the question's form asks ---------------------------------------------------------------
def verdict_rule(c: Candidate, ev: Evidence) -> float:
    return float(c.kind == "yesno" and c.text == ev.verdict)


def option_supported(c: Candidate, ev: Evidence) -> float:
    return overlap(c.text, c.sentence.text) if c.kind == "option" and c.sentence is not None else 0.0


def option_by_years(c: Candidate, ev: Evidence) -> float:
    return float(c.kind == "option" and ev.dated.get(c.text, (False, None))[0])


def names_asked_noun(c: Candidate, ev: Evidence) -> float:
    return float(span_fit.names_head(c.as_span(), ev.asked.head)) if c.kind in ("name", "phrase") else 0.0


def defined_as_asked(c: Candidate, ev: Evidence) -> float:
    if c.sentence is None or c.start < 0:
        return 0.0
    span, text = c.as_span(), c.sentence.text
    return float(span_fit.defines(span, text, ev.asked.head))


def unit_fit(c: Candidate, ev: Evidence) -> float:
    span = c.as_span()
    value = spans.counts(span, ev.asked.counted) + spans.measures(span, ev.asked.measure)
    if c.sentence is not None and c.start >= 0:
        value += spans.range_side(span, c.sentence.text, ev.asked.end)
    return value


def after_place_word(c: Candidate, ev: Evidence) -> float:
    return float(c.sentence is not None and c.start >= 0 and span_fit.placed(c.as_span(), c.sentence.text, ev.asked))


def person_fit(c: Candidate, ev: Evidence) -> float:
    return ev.personhood.get(c.text, 0.0)


def asked_thing_fit(c: Candidate, ev: Evidence) -> float:
    return ev.thing_fit.get(c.text, 0.0)


def labelled_field(c: Candidate, ev: Evidence) -> float:
    return float(bool(ev.field_text) and c.text == ev.field_text)


# name -> (function, reason). The order is the order of the learned weights file's columns.
FEATURES: dict[str, tuple[Callable[[Candidate, Evidence], float], str]] = {
    "focus": (focus_score, "how well the sentence holding it matches the question, against the best"),
    "focus_rank": (focus_rank, "the best sentences hold the answer most often"),
    "near_question": (near_question, "an answer stands next to the question's words in its sentence"),
    "apart_from_question": (apart_from_question, "a span far from every question word rarely answers it"),
    "near_bridge": (near_bridge, "a later hop's answer stands beside the entity the first hop found"),
    "kind_fit": (kind_fit, "'how long' wants a duration, 'who' a name, 'when' a date"),
    "repeats_question": (repeats_question, "a span made of the question's own words does not answer it"),
    "first_hop_sentence": (first_hop_sentence, "the sentence a multi-hop question starts from names the start"),
    "frequency": (frequency, "a value the context says in several sentences"),
    "length": (length, "answers are short; long phrases rarely are one"),
    "draft_agrees": (draft_agrees, "the model's own short answer, as a vote"),
    "draft_agrees_typed": (draft_agrees_typed, "the same vote when a figure, date or duration is asked"),
    "from_draft": (from_draft, "the model's draft as it stands word for word in a sentence"),
    "model_logprob": (model_logprob, "the model's mean log-probability of copying it after the question"),
    "model_share": (model_share, "the model's probability among the shortlist"),
    "model_best": (model_best, "the model's own first choice"),
    "no_answer": (no_answer, "'The documents do not say.' as a candidate"),
    "in_heading": (structure("heading"), "a heading-like line names a topic more often than it answers"),
    "number_label": (structure("number_label"), "a number opening a line numbers a section or a list item"),
    "table_cell": (structure("table_cell"), "a value in a table row"),
    "opening_lines": (structure("opening"), "the document's opening lines: its title page and header"),
    "kind_quantity": (kind("quantity"), "a figure"),
    "kind_date": (kind("date", "month", "time"), "a date or time"),
    "kind_name": (kind("name"), "a capitalised name"),
    "kind_phrase": (kind("phrase"), "a run of content words"),
    "kind_code": (kind("code"), "a command, flag, identifier or option key"),
    "kind_yesno": (kind("yesno"), "a verdict"),
    "kind_option": (kind("option"), "one of the options the question offers"),
    "verdict_rule": (verdict_rule, "the best sentences say every question word without a negation"),
    "option_supported": (option_supported, "a sentence names the option in full"),
    "option_by_years": (option_by_years, "the option that comparing the stated years picks (older, first)"),
    "names_asked_noun": (names_asked_noun, "'which county': a name that carries 'County'"),
    "defined_as_asked": (defined_as_asked, "the sentence says it is what the question asks ('X is the Y')"),
    "unit_fit": (unit_fit, "counts what 'how many X' counts, measures what is asked, a range's asked end"),
    "after_place_word": (after_place_word, "'where': a name after in, at or from"),
    "person_fit": (person_fit, "'who' wants a person's name; 'where' or 'which film' anything but"),
    "asked_thing_fit": (asked_thing_fit, "'what body of water': nearer that noun in meaning than the others"),
    "labelled_field": (labelled_field, "the value of a field whose label says what is asked"),
}
MODEL_FEATURES = ("model_logprob", "model_share", "model_best")


def compute(candidates: list[Candidate], ev: Evidence, names: list[str] | None = None) -> None:
    """Fill each candidate's `features` with the named features (all of them by default)."""
    chosen = names if names is not None else list(FEATURES)
    for candidate in candidates:
        candidate.features = {name: float(FEATURES[name][0](candidate, ev)) for name in chosen}


def read_embeddings(candidates: list[Candidate], ev: Evidence, embedder) -> None:
    """The two features that need the embedder, read for the name-like candidates in one batch
    each: person likeness (for questions that ask who, or ask for a place or a work) and nearness
    in meaning to the thing a "what X" question names."""
    named = [c for c in candidates if c.kind in ("name", "phrase", "code") or c.source == "draft"]
    named = named[:in_effect().answer.person_pool]
    if embedder is None or not named:
        return
    sign = ev.asked.wants_person
    typer = kinds.typer_for(embedder)
    if sign and typer is not None:
        for c, person in zip(named, typer.personhood([c.text for c in named])):
            ev.personhood[c.text] = sign * person
    asked = ev.asked.thing
    if asked and len(named) >= 2:
        vectors = focus.embedded(embedder, [asked] + [c.text for c in named])
        fit = vectors[1:] @ vectors[0]
        mean, top = float(fit.mean()), float(fit.max())
        for c, cosine in zip(named, fit):
            ev.thing_fit[c.text] = (float(cosine) - mean) / max(top - mean, 1e-6)


# -- helpers ------------------------------------------------------------------------------------
def question_words(stems: dict[str, set[str]], sentence: str) -> list[tuple[int, str, float]]:
    """(position, stem, credit) of each word of `sentence` meeting a question word: full credit for
    the word itself, `answer.stem_only` for a match by stem alone."""
    found = []
    for m in re.finditer(r"[^\W_]+", sentence):
        stem = word_stem(m.group())
        if stem in stems:
            found.append((m.start(), stem, 1.0 if m.group().lower() in stems[stem] else in_effect().answer.stem_only))
    return found


def vector(candidate: Candidate, names: list[str]) -> np.ndarray:
    return np.array([candidate.features.get(name, 0.0) for name in names], dtype=np.float64)


__all__ = ["FEATURES", "MODEL_FEATURES", "Evidence", "compute", "content_terms", "read_embeddings"]
