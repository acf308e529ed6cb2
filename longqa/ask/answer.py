"""The answer: one streamed completion grounded in the refined context."""

from __future__ import annotations

from typing import Iterator

from longqa.ask import prompts
from longqa.ask.context import Passage, render
from longqa.models.base import Generator

SHORT_ANSWER_TOKENS = 120
LONG_ANSWER_TOKENS = 256
SHORT_SENTENCES, LONG_SENTENCES = 1, 6  # what a 270M model adds after a short answer is invention
# The answer is one line (ANSWER_GRAMMAR); a base model that would go on to invent the next
# question or passage stops at the line end.
STOP = ["\n"]


def answer_settings(qtype: str, scope: float) -> tuple[bool, int]:
    long_form = qtype == "abstractive" or scope >= 0.6
    return long_form, LONG_ANSWER_TOKENS if long_form else SHORT_ANSWER_TOKENS


def fit_passages(
    generator: Generator, question: str, passages: list[Passage], long_form: bool, max_tokens: int
) -> list[Passage]:
    """Drop the lowest-scored passages until the prompt fits the generator's context window."""
    kept = list(passages)
    while kept:
        prompt = prompts.answer_prompt(question, render(kept), long_form)
        if generator.count_tokens(prompt) + max_tokens + 1 <= generator.n_ctx:
            break
        kept.remove(min(kept, key=lambda p: p.score))
    return kept


def stream_answer(
    generator: Generator, question: str, passages: list[Passage], long_form: bool, max_tokens: int
) -> Iterator[str]:
    """Text pieces of the answer as the generator produces them (temperature 0: deterministic)."""
    prompt = prompts.answer_prompt(question, render(passages), long_form)
    pieces = generator.stream(prompt, max_tokens=max_tokens, stop=STOP, grammar=prompts.ANSWER_GRAMMAR,
                              temperature=0.0)
    guard = AnswerGuard(max_sentences=LONG_SENTENCES if long_form else SHORT_SENTENCES)
    for piece in pieces:
        out = guard.feed(piece)
        if out:
            yield out
        if guard.stopped:
            return
    rest = guard.flush()
    if rest:
        yield rest


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
