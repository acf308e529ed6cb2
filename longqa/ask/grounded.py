"""Grounded answers: a short answer chosen among spans of the documents, with the quote that proves it.

Short-answer questions (everything but abstractive or broad ones):
1. candidates are copied from the focused sentences (spans.py) and ranked by a prior: the
   sentence's focus score, how well the span's kind fits what the question asks for ("how long"
   wants a duration), its closeness to the question's words in the sentence, and a penalty when
   it only repeats the question;
2. the generator scores the best MAX_CANDIDATES as continuations of the focused prompt (mean
   log-probability per token), "The documents do not say." among them;
3. final = prior + W_MODEL x the model's probability for the candidate; the winner is the answer,
   its sentence the quote.
So a wrong model choice is visible at once (the quote is right there), and the answer can never
hold a number or name the documents do not contain.

Broad questions get a free-text answer from the focused sentences, and each answer sentence is
traced to its closest source sentence (content-word overlap), which becomes its quote.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from longqa.ask import fields, focus, kinds, skill, spans, tables
from longqa.ask.bridge import NAME_LINKS
from longqa.ask.citations import strip_markers
from longqa.ask.context import Passage, page_span, section_of
from longqa.ask.prompts import short_answer_prompt
from longqa.ask.settings import ANSWER
from longqa.retrieve.terms import STOPWORDS, content_terms, words
from longqa.structure.tree import Node

NO_ANSWER = "The documents do not say."
MAX_CANDIDATES = ANSWER.max_candidates  # tunables: ask/settings.py AnswerSettings
CANDIDATE_SENTENCES = ANSWER.candidate_sentences
MAX_OPTION_TOKENS = ANSWER.max_option_tokens
W_FIT, W_PROXIMITY, W_REPEAT, W_PHRASE = ANSWER.span_weights
STEM_CHARS = ANSWER.stem_chars
STEM_ONLY = ANSWER.stem_only
W_UNRELATED = ANSWER.w_unrelated
W_MODEL = ANSWER.w_model
SENTENCE_CHOICES = ANSWER.sentence_choices
QUOTE_SENTENCES = ANSWER.quote_sentences
SENTENCE_TOKENS = ANSWER.sentence_tokens
W_SENTENCE_MODEL = ANSWER.w_sentence_model
W_DRAFT = ANSWER.w_draft
W_COMPARE = ANSWER.w_compare
W_HEAD = ANSWER.w_head
W_DEFINES = ANSWER.w_defines
W_PLACE = ANSWER.w_place
W_FIELD = ANSWER.w_field
W_SHARED = ANSWER.w_shared
W_DRAFT_TYPED = ANSWER.w_draft_typed
W_VERDICT_RULE = ANSWER.w_verdict_rule
W_PERSON = ANSWER.w_person
PERSON_POOL = ANSWER.person_pool
VERDICT_SENTENCES = ANSWER.verdict_sentences
DRAFT_TOKENS = ANSWER.draft_tokens
DRAFT_TOKENS_TYPED = ANSWER.draft_tokens_typed
MAX_DRAFT_WORDS = ANSWER.max_draft_words
NO_ANSWER_PRIOR = ANSWER.no_answer_prior
PROXIMITY_CHARS = ANSWER.proximity_chars
MIN_TRACE_OVERLAP = ANSWER.min_trace_overlap
MIN_NEW_WORDS = ANSWER.min_new_words
W_FIRST_HOP = ANSWER.w_first_hop
HEAD_FIT = ANSWER.head_fit


@dataclass
class Quote:
    text: str  # verbatim: the stored text of `node_id` from char_start to char_end
    passage: Passage
    node_id: int
    char_start: int
    char_end: int
    page_start: int
    page_end: int
    leaf: Node | None = None

    @property
    def section(self) -> str:
        """The quoted leaf's own section path (deeper than its passage's when a whole section was
        selected)."""
        return section_of(self.leaf, self.passage.doc) if self.leaf is not None else self.passage.section

    def as_dict(self) -> dict:
        p = self.passage
        return {"text": self.text, "doc": p.doc, "path": p.doc_path, "section": self.section,
                "page": self.page_start, "page_end": self.page_end, "node_id": self.node_id,
                "char_start": self.char_start, "char_end": self.char_end, "n": p.n}

    @property
    def pages(self) -> str:
        return page_span(self.page_start, self.page_end)


@dataclass
class Grounding:
    """What the answer stage decided, beside the answer text itself."""

    mode: str  # span | yesno | letter | computed | sentence | free | quoted | none
    quotes: list[Quote] = field(default_factory=list)
    candidates: list[dict] = field(default_factory=list)  # the scored candidates, best first
    focused: list[focus.Sentence] = field(default_factory=list)
    draft: str = ""  # the model's own short answer, which voted for candidates


def quote_of(sentence: focus.Sentence) -> Quote:
    leaf = sentence.leaf
    return Quote(sentence.text, sentence.passage, leaf.id, sentence.start, sentence.end,
                 leaf.page_start, leaf.page_end, leaf)


# -- short answers ---------------------------------------------------------------------------------
@dataclass
class _Candidate:
    text: str
    kind: str
    sentence: focus.Sentence | None
    prior: float
    model: float = 0.0
    final: float = 0.0


def choose_short(generator, question: str, focused: list[focus.Sentence], prompt: str,
                 sentences: list[focus.Sentence] | None = None, bridges: list[str] = (),
                 embedder=None) -> tuple[str, Grounding]:
    """The answer line ("about 52 hours [1]") and its grounding, for a short-answer question.
    A table cell or a computation over one row (tables.py) comes first when the rules are sure.
    `bridges`: entities the search hopped through, which the answer is about but never is.
    `embedder`: tells people's names from others' for "who" questions (kinds.py)."""
    letters = spans.lettered_options(question)
    if letters:
        return _choose_letter(generator, question, letters, focused, prompt)
    computed = tables.compute(question, sentences or focused)
    if computed is not None:
        shown = ", ".join(f"{year}: {cell.strip()}" for year, cell in computed.cells)
        grounding = Grounding(mode="computed", quotes=[quote_of(s) for s in computed.sources],
                              candidates=[{"text": computed.text, "kind": computed.operation, "prior": 1.0,
                                           "model": 0.0, "score": 1.0, "cells": shown}], focused=focused)
        return f"{computed.text} [{computed.row.passage.n}]", grounding
    want = spans.wanted(question)
    if want == "sentence" and focused:  # "Highlight the parts of this contract ...": quote, don't pick a span
        # The best few sentences by score, and the model's reading of which one answers: its
        # probability of copying each one after the question (a whole sentence, not a span).
        top = sorted(answering(focused, question), key=lambda s: -s.score)[:SENTENCE_CHOICES]
        probabilities = _model_probabilities(generator, prompt, [" ".join(s.text.split()) for s in top],
                                             max_tokens=SENTENCE_TOKENS) if len(top) > 1 else [0.0]
        scored = [(s.score / (top[0].score or 1.0) + W_SENTENCE_MODEL * p, s, p) for s, p in zip(top, probabilities)]
        scored.sort(key=lambda x: -x[0])
        best = scored[0][1]
        grounding = Grounding(mode="sentence", quotes=[quote_of(best)], focused=focused,
                              candidates=[{"text": s.text, "kind": "sentence", "prior": round(s.score, 4),
                                           "model": round(p, 4), "score": round(final, 4)} for final, s, p in scored])
        return f"{' '.join(best.text.split())} [{best.passage.n}]", grounding
    ranked = sorted(focused, key=lambda s: -s.score)[:CANDIDATE_SENTENCES]
    best_score = max((s.score for s in ranked), default=0.0) or 1.0
    # What the model would write: a vote, never the answer itself. Where the question wants a
    # figure, a date or a duration the rules are strong and the small model's reading of numbers
    # is not (it took "31 hours" from the wrong sentence), so its vote counts less there; it is
    # not asked at all for a yes/no question, whose two options are scored directly.
    typed = want not in ("any", "name", "option")
    stems = _question_stems(question)
    # A multi-hop question's answer stands near what the later hop asks ("spouse", "make"), not
    # near the words its first hop already found ("Lil Hardin Armstrong"): nearness counts the
    # question words the first hop's sentence does not say.
    near_stems = stems
    start = next((s for s in (sentences or focused) if s.first_hop), None) if bridges else None

    def first_hop(sentence: focus.Sentence) -> float:  # its spans say what the start is, not the answer
        return W_FIRST_HOP if bridges and sentence.first_hop else 0.0

    if start is not None:
        said = {_stem(w) for w in words(start.text)}
        near_stems = {stem: terms for stem, terms in stems.items() if stem not in said} or stems
    head = spans.head_noun(question)
    counted = spans.counted_noun(question)
    measure = spans.asked_measure(question) if want in ("quantity", "any") else None
    role = spans.asked_role(question)
    actor = spans.asked_actor(question)
    end = spans.asked_end(question)
    bridge_words = [set(words(entity)) for entity in bridges]
    bridge_own = set().union(*bridge_words) - STOPWORDS
    draft = "" if want == "yesno" else _draft(generator, prompt, DRAFT_TOKENS_TYPED if typed else DRAFT_TOKENS)
    pool: dict[str, _Candidate] = {}

    def offer(text: str, kind: str, sentence, prior: float) -> None:
        key = text.lower()
        if key not in pool or pool[key].prior < prior:
            pool[key] = _Candidate(text, kind, sentence, prior)

    if want == "yesno":  # a verdict: only yes or no, supported by the best sentence
        rule, support = verdict_rule(question, ranked[:VERDICT_SENTENCES], sentences or focused)
        top = support or (ranked[0] if ranked else None)
        for text in ("Yes", "No"):
            offer(text, "yesno", top, 1.0 + (W_VERDICT_RULE if text == rule else 0.0)
                  + (W_DRAFT if re.match(rf"{text}\b", draft, re.I) else 0.0))
    else:
        options_named = False  # every option the question offers is named in full by a sentence
        if want == "option":
            options = spans.alternatives(question)
            dated = _by_dates(question, options, sentences or ranked)
            options_named = bool(options)
            for text in options:
                support = dated[text][1] if text in dated else _best_support(text, ranked)
                won = W_COMPARE if dated.get(text, (False, None))[0] else 0.0
                offer(text, "option", support, 1.0 + (0.3 if support else 0.0) + won)
                options_named = options_named and support is not None and _overlap(text, support.text) >= 0.99
        # "Which dog's ancestors include setters: the Manchester Terrier or the Scotch Collie?" is
        # answered by one of its options when the sentences name both; other spans only compete
        # where an option is missing (the options were misread, or the documents lack one).
        for sentence in ([] if options_named else ranked):
            near_words = _question_words(near_stems, sentence.text)
            mentions = _mentions(bridge_own, sentence.text)
            for span in spans.candidates(sentence.text):
                span = spans.year_of(span, question)
                prior = sentence.score / best_score + W_FIT * spans.fits(span, want)
                if spans.placed(span, sentence.text, question):
                    prior += W_PLACE
                if spans.nationality(span, sentence.text, question):  # "which country": not "French"
                    prior -= W_HEAD
                prior += W_HEAD * spans.range_side(span, sentence.text, end)  # stops at 3 a.m., not 7
                if spans.repeats_question(span, question) or _is_bridge(span.text, bridge_words):
                    prior -= W_REPEAT
                prior -= first_hop(sentence)
                if span.kind == "phrase":
                    prior -= W_PHRASE
                if spans.defines(span, sentence.text, head):  # "Ferric sulphate is the coagulant"
                    prior += W_DEFINES
                elif spans.casts(span, sentence.text, role):  # "who plays Charles": "Rhys Darby as Charles"
                    prior += W_DEFINES
                elif spans.cast_as(span, sentence.text, actor):  # "who does Ewan McGregor play": "... as Lumière"
                    prior += W_DEFINES
                elif spans.names_head(span, head):
                    prior += W_HEAD
                prior += W_HEAD * spans.counts(span, counted)  # "how many people": 118,000 people, not 640 km
                prior += W_HEAD * spans.measures(span, measure)  # a population is not "213,100 km"
                near = _proximity(near_stems, near_words, span.start, span.end)
                if mentions:  # a second hop's answer stands beside the bridge entity
                    near = max(near, _closeness(mentions, span.start, span.end))
                prior += W_PROXIMITY * near - (W_UNRELATED if near == 0 else 0.0)
                offer(span.text, span.kind, sentence, prior)
        vote = W_DRAFT_TYPED if typed else W_DRAFT  # the draft's weight, less where rules know the kind
        copied = None if options_named else _verbatim(draft, ranked)
        if (copied is not None and not spans.repeats_question(spans.Span(copied[0], "draft"), question)
                and not _is_bridge(copied[0], bridge_words)):
            text, sentence = copied
            offer(text, "draft", sentence, sentence.score / best_score + vote - first_hop(sentence))
        for candidate in pool.values():  # the draft votes for the spans it agrees with
            if candidate.kind != "draft":
                candidate.prior += vote * _agreement(candidate.text, draft)
        pair = shared_names(question) if W_SHARED > 0 else None
        if pair is not None:  # "What occupation do Chris Menges and Aram Avakian share?": "director"
            _raise_shared(pair, pool, sentences or focused)
        if not actor:  # the role an actor plays is a character, a candelabra or a car: no person typing
            _type_persons(question, pool, kinds.typer_for(embedder))
        if want in ("any", "name") and HEAD_FIT > 0:
            _fit_head(question, pool, embedder)
        if not options_named and W_FIELD > 0:  # "Number of positions / 9, by statute" answers "how many"
            best_prior = max((c.prior for c in pool.values()), default=1.0)
            hit = fields.match(question, sentences or focused, want)
            if hit is not None and not spans.repeats_question(hit[1], question):
                offer(hit[1].text, "field", hit[0].value, best_prior + W_FIELD)
    shortlist = sorted(pool.values(), key=lambda c: -c.prior)[:MAX_CANDIDATES]
    shortlist.append(_Candidate(NO_ANSWER, "none", None,
                                NO_ANSWER_PRIOR + (W_DRAFT if "not say" in draft.lower() else 0.0)))
    probabilities = _model_probabilities(generator, prompt, [c.text for c in shortlist])
    if want == "yesno":
        # The model's verdict steers as far as it was measured to beat chance (ask/skill.py).
        trust = skill.weight(generator, "verdict")
        if trust > 0:  # no calibration call for a model whose verdict does not steer
            probabilities = _calibrated_verdict(generator, question, shortlist, probabilities)
        probabilities = [p * trust if c.kind == "yesno" else p for c, p in zip(shortlist, probabilities)]
    for candidate, probability in zip(shortlist, probabilities):
        candidate.model = probability
        candidate.final = candidate.prior + W_MODEL * probability
    shortlist.sort(key=lambda c: -c.final)
    winner = shortlist[0]
    grounding = Grounding(mode="none" if winner.kind == "none" else ("yesno" if winner.kind == "yesno" else "span"),
                          candidates=[_as_dict(c) for c in shortlist], focused=focused, draft=draft)
    if winner.kind == "none" or winner.sentence is None:
        return NO_ANSWER, grounding
    grounding.quotes = [quote_of(winner.sentence)]
    return f"{winner.text} [{winner.sentence.passage.n}]", grounding


_THING = r"((?:[a-z-]+ ){0,2}?[a-z-]+(?: of [a-z-]+(?: [a-z-]+)?)?)"
_ASKED_THING = re.compile(rf"^\s*(?:[A-Za-z]+ )?(?:what|which) {_THING}\s+(?:is|was|are|were|do|does|did|has|had|can|"
                          rf"could|will|would)\b|\b(?:what|which) {_THING}\s*\?\s*$", re.I)


def _fit_head(question: str, pool: dict[str, _Candidate], embedder) -> None:
    """"What body of water is near ...", "which tribe of indigenous people": the best names gain
    HEAD_FIT x how much nearer the asked-for thing they are than the pool's mean (cosine)."""
    match = _ASKED_THING.search(spans.question_core(question))
    asked = match and (match.group(1) or match.group(2))
    if embedder is None or not asked or asked.split()[0].lower() in STOPWORDS:
        return
    named = _best_names(pool)
    if len(named) < 2:
        return
    vectors = focus.embedded(embedder, [asked] + [c.text for c in named])
    fit = vectors[1:] @ vectors[0]
    mean = float(fit.mean())
    for candidate, cosine in zip(named, fit):
        candidate.prior += HEAD_FIT * (float(cosine) - mean) / max(float(fit.max()) - mean, 1e-6)


def _type_persons(question: str, pool: dict[str, _Candidate], typer) -> None:
    """A "who" question's best names gain W_PERSON x how much they look like people's names, and
    lose as much for looking like anything else; a "where" or "which film" question's the reverse."""
    sign = kinds.asks_person(spans.question_core(question))
    if typer is None or not sign or W_PERSON <= 0:
        return
    named = _best_names(pool)
    for candidate, person in zip(named, typer.personhood([c.text for c in named])):
        candidate.prior += sign * W_PERSON * person


def _best_names(pool: dict[str, _Candidate]) -> list[_Candidate]:
    """The PERSON_POOL best name-like candidates by prior: what the embedding readings re-rank."""
    return sorted((c for c in pool.values() if c.kind in ("name", "phrase", "draft")),
                  key=lambda c: -c.prior)[:PERSON_POOL]


_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none|without|cannot)\b|n['’]t\b", re.I)
_VERDICT_FILLER = {"both", "same", "also", "either", "each", "one", "ever", "really", "actually"}


def verdict_rule(question: str, sentences: list[focus.Sentence],
                 context: list[focus.Sentence] = ()) -> tuple[str, focus.Sentence | None]:
    """A yes/no verdict from the words alone: "Yes" when the best sentences say every content word
    of the question (by stem) and the sentence saying most of them is not negated, else "No";
    with the sentence that says most of them. A question that joins two names ("Are Cypress and
    Ajuga both genera?") is "Yes" only when a sentence about each (from `context`) says the rest
    of the question: one sentence calling Ajuga a genus does not make Cypress one. A rule, not a
    reading: its weight against a model's verdict (W_VERDICT_RULE) was set by hand; it decides
    alone where the model's verdict was measured at chance (skill.py)."""
    stems = {stem for stem in _question_stems(spans.question_core(question))
             if stem not in _VERDICT_FILLER}
    if not stems or not sentences:
        return "No", None
    pair = joined_names(question)
    if pair and context:
        return _each_named(pair, stems, list(context))
    said = [{_stem(w) for w in words(s.text)} & stems for s in sentences]
    best = max(range(len(sentences)), key=lambda i: (len(said[i]), sentences[i].score))
    covered = set().union(*said) == stems
    return ("Yes" if covered and not _NEGATION.search(sentences[best].text) else "No"), sentences[best]


_JOINED_VERDICT = re.compile(r"^\s*(?:are|were|is|was|do|does|did|have|has)\b", re.I)
_COMPARED = re.compile(r"\b(?:same|different|similar|related|together|each other|one another)\b", re.I)


def joined_names(question: str) -> tuple[str, str] | None:
    """The two names a yes/no question joins with "and" and asks the same thing of ("Are
    Ferocactus and Silene both types of plant?"); None for any other question, and for one that
    compares the two ("located in the same neighborhood"), which no sentence about one settles."""
    core = spans.question_core(question)
    opening = _JOINED_VERDICT.match(core)
    if not opening or _COMPARED.search(core):
        return None
    rest = re.sub(r"^\s*(?:both\s+)?(?:the\s+)?", "", core[opening.end():])
    first, joined, after = rest.partition(" and ")
    if not joined or not first.strip(" ,") or not _is_name(first.strip(" ,").split()):
        return None
    second = _leading_name(re.sub(r"^(?:the\s+)", "", after.strip()).split())
    if not second:
        return None
    return first.strip(" ,"), second


def _leading_name(tokens: list[str]) -> str:
    """The name the tokens open with ("Aram Avakian" of "Aram Avakian share?"), or ""."""
    name: list[str] = []
    for position, token in enumerate(tokens):
        # a linking word belongs to the name when a capitalised word comes after the links ("of the")
        following = next((t for t in tokens[position + 1:] if t.lower() not in NAME_LINKS), "")
        if not (_name_word(token) or token.lower() in NAME_LINKS and _name_word(following)):
            break
        name.append(token)
    while name and name[-1].lower() in NAME_LINKS:
        name.pop()
    return " ".join(name).rstrip("?.,")


_ASKS_SHARED = re.compile(r"^\s*(?:what|which|where|who|when|in what|in which|from what|from which)\b", re.I)
_NOT_SHARED = re.compile(r"\b(?:between|differ\w*|older|younger|first|more|less|larger|smaller|higher|lower)\b",
                         re.I)


def shared_names(question: str) -> tuple[str, str] | None:
    """The two names a wh-question joins with "and" and asks one thing of ("What occupation do
    Chris Menges and Aram Avakian share?", "Where are Teide National Park and Garajonay National
    Park located?"): its answer is said about each of them. None for other questions, and for
    those that set the two apart ("between", "older", "first")."""
    core = spans.question_core(question)
    if not _ASKS_SHARED.match(core) or _NOT_SHARED.search(core):
        return None
    before, joined, after = core.partition(" and ")
    if not joined or " and " in after:
        return None
    tokens = before.split()[1:]  # never the question word itself
    first = _leading_name(list(reversed(tokens)))  # read backwards from "and"
    second = _leading_name(re.sub(r"^(?:the\s+)", "", after.strip()).split())
    opening = [t.lower() for t in tokens[:len(tokens) - len(first.split())]]
    while opening and opening[-1] in ("both", "the"):
        opening.pop()
    # the two names are what the question asks about ("do A and B share"), not a title
    # inside it ("the film Kiss and Tell"); a year is not a name
    if not first or not second or not opening or opening[-1] not in _AUXILIARIES:
        return None
    if any(not re.search(r"[A-Za-z]{2}", name) for name in (first, second)):
        return None
    return " ".join(reversed(first.split())), second


_AUXILIARIES = {"do", "does", "did", "are", "were", "is", "was", "have", "has", "had"}


def _raise_shared(pair: tuple[str, str], pool: dict[str, _Candidate], context: list[focus.Sentence]) -> None:
    """A span said word for word of each of the two names gains W_SHARED: what both are ("English
    cinematographer and film director", "Armenian-American film editor and director": director).
    What a sentence says of a name is what follows it in a sentence that opens with it, less the
    brackets before the verb ("(Spanish: Parque nacional del Teide)", "(born 1940)"): those gloss
    the name. Spans holding a word of either name gain nothing ("National Park")."""
    said_of = []
    for name, other in (pair, pair[::-1]):
        own = set(words(name)) - set(words(other)) - STOPWORDS  # "Teide", not "National Park"
        said_of.append([f" {' '.join(words(rest))} " for s in context if (rest := _said_of(own, s.text))])
    if not all(said_of):
        return
    named = {w for name in pair for w in words(name)}
    for candidate in pool.values():
        said = words(candidate.text)
        if candidate.kind in ("yesno", "option", "none") or not set(said) - STOPWORDS or named & set(said):
            continue
        needle = f" {' '.join(said)} "
        if all(any(needle in text for text in texts) for texts in said_of):
            candidate.prior += W_SHARED


_OPENING_WORDS = 3  # a sentence opens with a name when one of its words is among the first three
_PREDICATE = re.compile(r"\b(?:is|was|are|were|has|had)\b")


def _said_of(own: set[str], sentence: str) -> str:
    """What a sentence that opens with a name (its words `own`) says of it, or ""."""
    found = [m for m in re.finditer(r"[^\W_]+", sentence) if m.group().lower() in own]
    if not own or not found or len(found) < len(own) / 2:
        return ""
    if len(re.findall(r"[^\W_]+", sentence[:found[0].start()])) >= _OPENING_WORDS:
        return ""
    rest = sentence[found[-1].end():]
    verb = _PREDICATE.search(rest)
    if verb is None:
        return ""
    return re.sub(r"\([^)]*\)", " ", rest[:verb.start()]) + rest[verb.start():]


# Words that frame what the question asks of each name rather than say it: "described as a
# genus", "located in Michigan", "used for real estate", "types of plant".
_FRAMING = ("described", "considered", "known", "called", "classified", "regarded", "located", "used",
            "types", "kinds", "listed")


def _name_word(token: str) -> bool:
    return token[:1].isupper() or token[:1].isdigit()


def _is_name(tokens: list[str]) -> bool:
    """Every word capitalised, a number or a linking word: "Elko Regional Airport", "In the Realm
    of the Hackers"."""
    return bool(tokens) and _name_word(tokens[0]) and all(_name_word(t) or t.lower() in NAME_LINKS for t in tokens)


def _each_named(pair: tuple[str, str], stems: set[str], context: list[focus.Sentence]
                ) -> tuple[str, focus.Sentence | None]:
    """"Yes" when, for each name, a sentence naming it says every question stem not in the names
    and is not negated; the sentence deciding it (the one that fails, else the first name's)."""
    name_stems = {_stem(w) for name in pair for w in words(name)}
    asked = stems - name_stems - {_stem(w) for w in _FRAMING} or stems - name_stems
    chosen: list[focus.Sentence | None] = []
    verdicts = []
    for name in pair:
        own = {w for w in words(name) if w not in STOPWORDS}
        about = [s for s in context if own and len(own & set(words(s.text))) >= max(1, len(own) / 2)]
        if not about:
            return "No", None
        said = [({_stem(w) for w in words(s.text)} & asked, s) for s in about]
        best_said, best = max(said, key=lambda x: (len(x[0]), x[1].score))
        chosen.append(best)
        verdicts.append(best_said == asked and not _NEGATION.search(best.text))
    if all(verdicts):
        return "Yes", chosen[0]
    return "No", chosen[verdicts.index(False)]


def _mentions(own: set[str], sentence: str) -> list[tuple[int, int]]:
    """Character spans of the sentence's words that are bridge entities' own words (`own`)."""
    if not own:
        return []
    return [(m.start(), m.end()) for m in re.finditer(r"[^\W_]+", sentence) if m.group().lower() in own]


def _closeness(mentions: list[tuple[int, int]], start: int, end: int) -> float:
    """1 for a span right after a bridge entity's word, falling to 0 at PROXIMITY_CHARS; a span
    before the entity counts half ("Grenada 1 May 1974 Guyana 1 August 1973": a table row, like
    "X was born in Y", states the value after the name)."""
    best = 0.0
    for m_start, m_end in mentions:
        if start <= m_start < end:
            continue  # the entity's own word inside the span
        after = m_end <= start
        gap = start - m_end if after else m_start - end
        best = max(best, max(0.0, 1 - max(gap, 0) / PROXIMITY_CHARS) * (1.0 if after else 0.5))
    return best


def _is_bridge(text: str, bridge_words: list[set[str]]) -> bool:
    """The span names a bridge entity (all its content words are the entity's words)."""
    mine = {w for w in words(text) if w not in STOPWORDS}
    return bool(mine) and any(mine <= entity for entity in bridge_words)


_EARLIER = re.compile(r"\b(?:older|oldest|earlier|earliest|first|before|sooner)\b", re.I)
_LATER = re.compile(r"\b(?:younger|youngest|later|latest|newer|newest|more recent|most recent|after)\b", re.I)


def _by_dates(question: str, options: list[str], sentences: list[focus.Sentence]) -> dict:
    """For "which came first, A or B" and "who is younger, A or B": each option's year, the first
    one stated after its name in the best sentence naming it, and which option the comparison
    picks. {option: (won, sentence)}; empty when the question compares no dates or a year is missing."""
    earlier, later = bool(_EARLIER.search(question)), bool(_LATER.search(question))
    if len(options) != 2 or earlier == later:
        return {}
    found: dict[str, tuple[int, focus.Sentence]] = {}
    for option in options:
        best = None
        for sentence in sentences:
            if _overlap(option, sentence.text) < 0.99:
                continue
            year = _year_after(option, sentence.text)
            if year is not None and (best is None or sentence.score > best[1].score):
                best = (year, sentence)
        if best is None:
            return {}
        found[option] = best
    (a, (year_a, _)), (b, (year_b, _)) = found.items()
    if year_a == year_b:
        return {}
    # "older", "first", "earlier": the earlier year; "younger", "later", "newer": the later one
    winner = (a if year_a < year_b else b) if earlier else (a if year_a > year_b else b)
    return {option: (option == winner, sentence) for option, (_, sentence) in found.items()}


def _year_after(option: str, text: str) -> int | None:
    """The first year stated at or after the option's first word in `text`."""
    first = option.split()[0].lower() if option.split() else ""
    at = text.lower().find(first) if first else -1
    match = spans.YEAR.search(text, at) if at >= 0 else None
    return int(match.group()) if match else None


def _calibrated_verdict(generator, question: str, shortlist: list[_Candidate], probabilities: list[float]) -> list[float]:
    """Yes and No re-weighted by how much the sentences moved them: each is divided by its
    probability for the same question with no sentences at all (contextual calibration). A small
    base model says "Yes" to most questions whatever it reads; what counts is the shift the
    evidence causes. "The documents do not say." keeps its own probability."""
    verdicts = [i for i, c in enumerate(shortlist) if c.kind == "yesno"]
    if generator is None or len(verdicts) != 2:
        return probabilities
    empty = _model_probabilities(generator, short_answer_prompt(question, ""), [shortlist[i].text for i in verdicts])
    mass = sum(probabilities[i] for i in verdicts)
    shifted = [probabilities[i] / max(q, 1e-6) for i, q in zip(verdicts, empty)]
    total = sum(shifted) or 1.0
    adjusted = list(probabilities)
    for i, value in zip(verdicts, shifted):
        adjusted[i] = mass * value / total
    return adjusted


def _draft(generator, prompt: str, max_tokens: int) -> str:
    """A short greedy completion of the focused prompt, citation marks and end punctuation cut."""
    if generator is None:
        return ""
    # No grammar: the line end stops it as well, at half the cost per token (answer.stream_free).
    text = generator.complete(prompt, max_tokens=max_tokens, stop=["\n"], temperature=0.0)
    return strip_markers(text).rstrip(".;,: ").strip("\"'“”")


def _verbatim(draft: str, sentences: list[focus.Sentence]) -> tuple[str, focus.Sentence] | None:
    """The draft as it stands in a sentence (case-insensitive), with the sentence's own spelling."""
    if len(draft) < 2 or len(draft.split()) > MAX_DRAFT_WORDS:
        return None
    for sentence in sorted(sentences, key=lambda s: -s.score):
        at = sentence.text.lower().find(draft.lower())
        if at >= 0:
            text = sentence.text[at:_word_end(sentence.text, at + len(draft))]
            text = text.split(" | ")[0]  # one table cell, not "1,512 | 1,386" across a row
            # a draft cut by its token limit mid-phrase ("when the river authority reports a")
            # ends at its last content word
            content = [m for m in re.finditer(r"\S+", text) if m.group().lower().strip(",;:") not in STOPWORDS]
            if not content:
                return None
            if content[-1].end() < len(text.rstrip()):
                text = text[:content[-1].end()].rstrip(" ,;:")
            return text, sentence
    return None


def _word_end(text: str, end: int) -> int:
    """`end` moved to the end of the word or figure it falls in: a draft cut by its token limit
    ("$60,00") is completed from the sentence ("$60,000")."""
    while end < len(text) and (text[end].isalnum() or (text[end] in ",." and end + 1 < len(text)
                                                        and text[end - 1].isdigit() and text[end + 1].isdigit())):
        end += 1
    return end


def _agreement(candidate: str, draft: str) -> float:
    """Token F1 between a candidate and the draft (0 when the draft is empty)."""
    a, b = words(candidate), words(draft)
    figures = [w for w in a if any(ch.isdigit() for ch in w)]
    if figures and not any(w in b for w in figures):
        return 0.0  # "about 4 days" does not agree with "10 days": the figure is what counts
    common = sum(min(a.count(w), b.count(w)) for w in set(a))
    if not a or not b or not common:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


def _choose_letter(generator, question, letters, focused, prompt) -> tuple[str, Grounding]:
    """Lettered options: the model's letter probability plus each option's support in the text."""
    listed = list(letters.items())
    probabilities = _model_probabilities(generator, prompt, [f"({letter})" for letter, _ in listed])
    shortlist = []
    for (letter, text), probability in zip(listed, probabilities):
        support = _best_support(text, focused)
        overlap = _overlap(text, support.text) if support else 0.0
        shortlist.append(_Candidate(f"({letter}) {text}", "letter", support, overlap, probability,
                                    overlap + W_MODEL * probability))
    shortlist.sort(key=lambda c: -c.final)
    winner = shortlist[0]
    grounding = Grounding(mode="letter", candidates=[_as_dict(c) for c in shortlist], focused=focused)
    if winner.sentence is not None:
        grounding.quotes = [quote_of(winner.sentence)]
        return f"{winner.text} [{winner.sentence.passage.n}]", grounding
    return winner.text, grounding


def _model_probabilities(generator, prompt: str, options: list[str], max_tokens: int | None = None) -> list[float]:
    """The generator's distribution over `options` as continuations of `prompt` (sums to 1)."""
    if generator is None or not options:
        return [0.0] * len(options)
    continuations = [" " + option for option in options]
    scorer = getattr(generator, "option_logprobs", None)
    if scorer is not None:
        logprobs = scorer(prompt, continuations, max_tokens=max_tokens or MAX_OPTION_TOKENS)
    else:  # servers and test fakes: label probabilities (first token, or the whole label)
        probs = generator.label_probs(prompt, continuations)
        logprobs = [math.log(max(probs.get(c, 0.0), 1e-12)) for c in continuations]
    peak = max(logprobs)
    weights = [math.exp(lp - peak) for lp in logprobs]
    total = sum(weights)
    return [w / total for w in weights]


def _stem(word: str) -> str:
    """A crude stem, enough to meet "generators" with "generator", "runs" with "run", "supplies"
    with "supply" and "treated" with "treat"."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith(("ed", "ing")):
        word = word[:-2] if word.endswith("ed") else word[:-3]
    return word[:STEM_CHARS] if len(word) > STEM_CHARS else word.rstrip("s") or word


def _question_stems(question: str) -> dict[str, set[str]]:
    """The question's content words by stem."""
    stems: dict[str, set[str]] = {}
    for term in content_terms(question):
        stems.setdefault(_stem(term), set()).add(term)
    return stems


def _question_words(stems: dict[str, set[str]], sentence: str) -> list[tuple[int, str, float]]:
    """(position, stem, weight) of each word of `sentence` that meets a question word: weight 1
    for the word itself, STEM_ONLY for a match by stem alone."""
    found = []
    for m in re.finditer(r"[^\W_]+", sentence):
        stem = _stem(m.group())
        if stem in stems:
            found.append((m.start(), stem, 1.0 if m.group().lower() in stems[stem] else STEM_ONLY))
    return found


def _proximity(stems: dict[str, set[str]], near_words: list[tuple[int, str, float]], start: int, end: int) -> float:
    """How close the question's words stand to a span: each distinct question stem found in the
    sentence counts 1 - distance / PROXIMITY_CHARS (0 beyond), summed, over the question's stems."""
    if not stems:
        return 0.0
    middle = (start + end) / 2
    nearest: dict[str, float] = {}  # stem -> best closeness (an exact word counts fully)
    for position, stem, weight in near_words:
        if not (start <= position < end):
            closeness = max(0.0, 1 - abs(position - middle) / PROXIMITY_CHARS) * weight
            nearest[stem] = max(closeness, nearest.get(stem, 0.0))
    return sum(nearest.values()) / len(stems)


def _best_support(text: str, sentences: list[focus.Sentence]) -> focus.Sentence | None:
    scored = [(_overlap(text, s.text), s.score, s) for s in sentences]
    scored = [t for t in scored if t[0] > 0]
    return max(scored, key=lambda t: (t[0], t[1]))[2] if scored else None


def _overlap(claim: str, source: str) -> float:
    """Share of the claim's content words that the source contains."""
    mine = {w for w in words(claim) if w not in STOPWORDS}
    if not mine:
        return 0.0
    theirs = set(words(source))
    return len(mine & theirs) / len(mine)


def _as_dict(c: _Candidate) -> dict:
    return {"text": c.text, "kind": c.kind, "prior": round(c.prior, 4), "model": round(c.model, 4),
            "score": round(c.final, 4)}


# -- free-text answers -----------------------------------------------------------------------------
def answering(focused: list[focus.Sentence], question: str) -> list[focus.Sentence]:
    """The sentences that could be quoted as an answer: those saying MIN_NEW_WORDS content words
    the question does not. A heading that repeats the question ("VA claim exam (C&P exam)" for
    "what happens after I take the VA claim exam (C&P exam)?") scores high and answers nothing.
    All of them when none does."""
    asked = set(words(question))
    saying = [s for s in focused
              if len({w for w in words(s.text) if w not in STOPWORDS} - asked) >= MIN_NEW_WORDS]
    return saying or focused


def quote_answer(focused: list[focus.Sentence], question: str = "") -> tuple[str, Grounding]:
    """A broad question's answer in the documents' own words: the QUOTE_SENTENCES best focused
    sentences that say more than the question, in the order they were shown, each with its
    passage number."""
    best = {id(s) for s in sorted(answering(focused, question), key=lambda s: -s.score)[:QUOTE_SENTENCES]}
    chosen = [s for s in focused if id(s) in best]
    if not chosen:
        return NO_ANSWER, Grounding(mode="none", focused=focused)
    text = " ".join(f"{' '.join(s.text.split())} [{s.passage.n}]" for s in chosen)
    return text, Grounding(mode="quoted", quotes=[quote_of(s) for s in chosen], focused=focused)


def trace(answer: str, focused: list[focus.Sentence]) -> list[Quote]:
    """Each answer sentence's closest source sentence (by content-word overlap), in answer order."""
    quotes: list[Quote] = []
    seen: set[tuple[int, int]] = set()
    for claim in re.split(r"(?<=[.!?])\s+", answer):
        claim = strip_markers(claim)
        if not claim:
            continue
        best = max(focused, key=lambda s: (_overlap(claim, s.text), s.score), default=None)
        if best is None or _overlap(claim, best.text) < MIN_TRACE_OVERLAP:
            continue
        key = (best.leaf.id, best.start)
        if key not in seen:
            seen.add(key)
            quotes.append(quote_of(best))
    return quotes

