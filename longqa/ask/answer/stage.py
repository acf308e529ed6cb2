"""The answer stage: focus the refined context to a few sentences, then answer from them.

With a reader (an instruction-tuned profile) every question goes to the reader, and the question
only chooses the form of the reply it asks for:
- a fact (a number, a name, a term; lettered options): the reader's short answer, proven word for
  word (reader.py); a figure computed over a table row is proven by the rows it quotes (tables.py);
- a verdict (yes/no): Yes or No with the sentence that decides it (selection.py);
- sentences (how/why/steps, a summary, a passage to quote): the sentences the reader selects by
  number, quoted in document order (selection.py).
With a completion (base) model the short answer is chosen among spans copied from the focused
sentences (choose.py), and a broad question is quoted or written in free text. Either way one
outcome (outcome.py) says what is shown and whether anything is answered. The generator reads a
prompt of a few hundred tokens, which is what makes the first token fast on a laptop CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from longqa.ask import prompts
from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import choose, focus, grounded, hops, outcome, reader, selection, summary
from longqa.ask.context import Passage
from longqa.ask.settings import in_effect
from longqa.models import profiles, skill
from longqa.models.base import KEEPS_PREFIX, Generator, supports

# The answer is one line; a base model that would go on to invent the next
# question or passage stops at the line end.
STOP = ["\n"]


def answer_settings(qtype: str, scope: float, want: str = "any") -> tuple[bool, int]:
    """Whether the answer is long-form, and its token cap. The question's form decides first: a
    summary is long, a yes/no question short; otherwise the analysis's type and R_q."""
    long_form = want == "summary" or (want != "yesno" and (qtype == "abstractive"
                                                           or scope >= in_effect().answer.long_scope))
    return long_form, in_effect().answer.long_answer_tokens if long_form else in_effect().answer.short_answer_tokens


@dataclass
class AnswerPlan:
    """What the generator will read and how it answers: `short` (a reader's proven answer, a chosen
    span or option), `verdict` and `selection` (a reader's reply over numbered sentences), `summary`
    (quoted points) or `free` (the model's words, or the best sentences quoted)."""

    mode: str
    prompt: str
    focused: list[focus.Sentence]
    long_form: bool
    max_tokens: int
    sentences: list[focus.Sentence] = field(default_factory=list)  # every context sentence, in order
    # The bridge entities the search hopped through: a multi-hop question's answer is what the
    # last hop says about them, never one of them ("the founder of X was raised where?").
    bridges: list[str] = field(default_factory=list)
    embedder: object = None  # types the candidate names of "who" questions (ask/kinds.py)


def plan_answer(asked: Asked, passages: list[Passage], qtype: str, scope: float, embedder=None,
                query_vector=None, generator=None) -> AnswerPlan:
    """What the answer stage will do; `query_vector` is the question's vector when the caller has
    it already (retrieval embedded the question). A reader `generator` (models/profiles.py) gets
    its own chat prompt and window for short answers and lettered options."""
    question = asked.question
    long_form, max_tokens = answer_settings(qtype, scope, asked.want)
    letters = asked.letters
    if letters:
        long_form = False
    found = focus.context_sentences(passages)
    focus.score_for(asked, found, embedder, query_vector)
    # A multi-hop question's answer sits beside its bridge entity, not beside its own words.
    hop = hops.applies(asked, qtype, long_form)
    bridges = hops.second_hop(asked, found, embedder) if hop else []
    if profiles.is_reader(generator):
        return _reader_plan(asked, found, long_form, max_tokens, bridges, embedder, generator)
    window = in_effect().answer.focus_tokens
    chosen = focus.select(found, in_effect().answer.spread_tokens if long_form else window, spread=long_form)
    text = focus.render(chosen)
    if letters:
        prompt = prompts.choice_prompt(asked.stem, letters, text)
    elif long_form:
        prompt = prompts.answer_prompt(question, text, long_form=True)
    else:
        prompt = prompts.short_answer_prompt(question, text)
    mode = "summary" if asked.want == "summary" and not letters else "free" if long_form else "short"
    return AnswerPlan(mode, prompt, chosen, long_form, max_tokens, found, bridges, embedder)


def reply_form(asked: Asked, long_form: bool) -> str:
    """The form of reply a reader is asked for: `short` (a fact, a lettered option), `verdict`
    (a yes/no question) or `selection` (sentences: how/why/steps, a summary, a passage)."""
    if asked.letters:
        return "short"
    if asked.want == "yesno":
        return "verdict"
    if asked.want in ("summary", "sentence") or long_form:
        return "selection"
    return "short"


def _reader_plan(asked: Asked, found: list[focus.Sentence], long_form: bool, max_tokens: int, bridges,
                 embedder, generator) -> AnswerPlan:
    """A reader's plan: the best sentences in its window (a summary's from the section it names,
    spread over the passages), in the prompt of the form its reply takes."""
    form = reply_form(asked, long_form)
    window = in_effect().answer.reader_focus_tokens
    pool = summary.in_section(found, asked.section) if asked.want == "summary" else found
    if focus.reads_paragraphs(form):
        chosen = focus.select_leaves(pool, window)
    else:
        chosen = focus.select(pool, window, spread=form == "selection")
    if form in ("short", "verdict"):  # a verdict is read over the passages, as a fact is
        prompt = reader_prompt(generator, asked, focus.reader_text(chosen, form))
    else:
        prompt = selection.prompt_for(generator, asked, selection.numbered(chosen))
    return AnswerPlan(form, prompt, chosen, form == "selection", max_tokens, found, bridges, embedder)


def reader_prompt(generator, asked: Asked, passages: str) -> str:
    """A reader's chat prompt (reader.messages): the fixed system message, then the passages and
    the question."""
    if supports(generator, KEEPS_PREFIX):  # the fixed system turn is read once, then kept
        generator.keep_prefix(generator.chat_head(prompts.READER_SYSTEM))
    return generator.chat_prompt(reader.messages(asked, passages))


def run_answer(generator: Generator, asked: Asked, plan: AnswerPlan, grounding: list,
               on_draft=None) -> Iterator[str]:
    """The answer's text pieces; the Grounding (quotes, candidates) is appended to `grounding`.
    A reader's reply, before it is proven, goes to `on_draft` piece by piece as it is written.
    Every answer but a completion model's free text is settled (outcome.py) before it is shown."""
    if plan.mode in ("short", "verdict", "selection") or not writes_free_text(generator):
        if plan.mode == "short":
            text, found = choose.choose_short(generator, asked, plan.focused, plan.prompt, plan.sentences,
                                              plan.bridges, plan.embedder, on_draft=on_draft)
        elif plan.mode == "verdict":
            text, found = selection.verdict(generator, asked, plan.focused, plan.prompt, on_draft)
        elif plan.mode == "selection":
            text, found = selection.selected(generator, asked, plan.focused, plan.prompt, on_draft)
        elif plan.mode == "summary":
            text, found = summary.summarise(asked, plan.sentences)
        else:
            text, found = grounded.quote_answer(plan.focused, asked.question)
        grounding.append(found)
        yield outcome.settle(text, found).answer
        return
    collected: list[str] = []
    for piece in stream_free(generator, plan.prompt, plan.max_tokens, plan.long_form):
        collected.append(piece)
        yield piece
    grounding.append(grounded.Grounding(mode="free", quotes=grounded.trace("".join(collected), plan.focused),
                                        focused=plan.focused))


def writes_free_text(generator: Generator) -> bool:
    """Whether a broad question is answered in the model's own words ("generate"), or by quoting the
    best focused sentences ("quote"); "auto" lets the model write only where its free text was
    measured to beat quoting (skill.py: gemma-3-270m's does not), or was never measured."""
    if in_effect().answer.free_text in ("generate", "quote"):
        return in_effect().answer.free_text == "generate"
    return skill.weight(generator, "free-text") > 0


def stream_free(generator: Generator, prompt: str, max_tokens: int, long_form: bool) -> Iterator[str]:
    """Text pieces of a free-text answer as generated (temperature 0), rambling cut by AnswerGuard.

    The answer ends at its line's end (`STOP`). No grammar is imposed while it streams: llama.cpp
    checks a grammar against the whole 262k-token vocabulary of gemma at every token (measured:
    0.52 against 0.22 CPU s for 6 tokens). Only when the model would start with a line break, so
    that nothing came out, is the one-line grammar asked for."""
    produced = False
    for grammar in (None, prompts.ANSWER_GRAMMAR):
        pieces = generator.stream(prompt, max_tokens=max_tokens, stop=STOP, grammar=grammar, temperature=0.0)
        guard = AnswerGuard(max_sentences=in_effect().answer.long_sentences if long_form else in_effect().answer.short_sentences)
        for piece in pieces:
            out = guard.feed(piece)
            if out:
                produced = True
                yield out
            if guard.stopped:
                return
        rest = guard.flush()
        if rest:
            produced = True
            yield rest
        if produced:
            return


class AnswerGuard:
    """Ends an answer where a small model starts to ramble, without delaying the stream much.

    At temperature 0 small models loop ("X. X. X.") or append invented detail after the answer.
    From the second sentence on, a sentence's first HOLD characters are held back until it is
    clear they do not open a sentence already written (the first sentence streams at once); the
    answer also ends after `max_sentences` sentences (a sentence ends at . ! or ? followed by a
    space, so "4.5" does not end one).
    """

    HOLD = 24

    def __init__(self, max_sentences: int = 0):
        self.max_sentences = max_sentences  # 0: no limit
        self.openings: list[str] = []  # how the sentences written so far began
        self.done = 0  # sentences completed
        self.opening = ""  # the current sentence's first characters
        self.held = ""  # characters of the current sentence not yet released
        self.released = False  # the current sentence is being let through
        self.after_stop_char = False
        self.started = False
        self.stopped = False

    def feed(self, piece: str) -> str:
        if not self.started:  # the prompt ends with "Answer:": drop the space the model starts with
            piece = piece.lstrip()
            if not piece:
                return ""
            self.started = True
        out: list[str] = []
        for char in piece:
            if self.after_stop_char and char.isspace():
                self._end_sentence(out)
                if self.stopped:
                    break
            self.after_stop_char = char in ".!?"
            if len(self.opening.strip()) < self.HOLD:
                self.opening += char
            if self.released or self.done == 0:
                self.released = True
                out.append(char)
                continue
            self.held += char
            if len(self.held.strip()) >= self.HOLD:
                if self._repeats():
                    self.stopped = True
                    break
                out.append(self.held)
                self.held, self.released = "", True
        return "".join(out)

    def _key(self) -> str:
        return " ".join(self.opening.split())[: self.HOLD]

    def _repeats(self) -> bool:
        return self._key() in self.openings

    def _end_sentence(self, out: list[str]) -> None:
        if self.held.strip():  # a short sentence, not yet checked
            if self._repeats():
                self.stopped = True
                return
            out.append(self.held)
        if self._key():
            self.openings.append(self._key())
        self.opening, self.held, self.released = "", "", False
        self.done += 1
        if self.max_sentences and self.done >= self.max_sentences:
            self.stopped = True

    def flush(self) -> str:
        if self.stopped or not self.held.strip() or self._repeats():
            return ""
        rest, self.held = self.held, ""
        return rest
