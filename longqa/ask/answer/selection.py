"""Replies made of the documents' own sentences, chosen by the reader by number.

The focused sentences are numbered one by one under their passages' headings, and the reader
(prompts.READER_SELECT_SYSTEM) replies with
- a verdict for a yes/no question, read over the passages as a fact is: the more probable of "Yes"
  and "No" as the first word of its reply; the quote is the sentence it copies when asked which
  decides it (proven word for word), else the one it names by number over the numbered sentences;
- the numbers of the sentences that answer a how/why/steps question or make a summary ("[4] [7]
  [9]"): those sentences, quoted in document order, are the answer — extractive, so nothing is
  shown that the documents do not say;
- "unknown" when it judges that the sentences do not hold the answer: a signal, not the decision;
  its verdict or its best choice is still read, and the calibrated confidence decides whether it
  stands (outcome.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from longqa.ask import prompts
from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import check, focus, grounded, reader, summary
from longqa.ask.answer.focus import Sentence
from longqa.ask.answer.grounded import NO_ANSWER, Grounding, quote_of, word_stem
from longqa.ask.settings import in_effect
from longqa.models.base import KEEPS_PREFIX, SCORES_OPTIONS, supports
from longqa.models.chat import Message
from longqa.text.words import content_terms

VERDICTS = ("Yes", "No")
_BRACKETED = re.compile(r"\[(\d{1,3})\]")
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3})(?![\d.]\d)")


@dataclass
class Numbered:
    """Sentences numbered from 1 for the reader, and the text it reads."""

    sentences: list[Sentence]
    text: str

    def get(self, number: int) -> Sentence | None:
        return self.sentences[number - 1] if 1 <= number <= len(self.sentences) else None


def numbered(chosen: list[Sentence]) -> Numbered:
    """Each passage's heading (document > section, pages) once, then its sentences as "[k] text",
    k counting over all of them in context order."""
    lines, current = [], None
    for k, sentence in enumerate(chosen, start=1):
        if sentence.passage is not current:
            current = sentence.passage
            lines.append(f"From {current.header().split('] ', 1)[-1]}:")
        lines.append(f"[{k}] {' '.join(sentence.text.split())}")
    return Numbered(list(chosen), "\n".join(lines))


def prompt_for(generator, asked: Asked, listed: Numbered) -> str:
    if supports(generator, KEEPS_PREFIX):
        generator.keep_prefix(generator.chat_head(prompts.READER_SELECT_SYSTEM))
    return generator.chat_prompt(_messages(asked, listed))


def _messages(asked: Asked, listed: Numbered) -> list[Message]:
    return [Message("system", prompts.READER_SELECT_SYSTEM),
            Message("user", prompts.numbered_message(asked.question, listed.text, asked.want == "summary"))]


def named_numbers(raw: str, listed: Numbered) -> list[int]:
    """The sentence numbers a reply names, in its order, each once, among those shown: those in
    brackets where it uses them (a reply that copies a sentence after its number holds other
    figures), else every number it writes ("4, 7")."""
    found = [int(m.group(1)) for m in (_BRACKETED.finditer(raw) if _BRACKETED.search(raw) else _NUMBER.finditer(raw))]
    return [n for n in dict.fromkeys(found) if listed.get(n) is not None]


def verdict(generator, asked: Asked, focused: list[Sentence], prompt: str, on_draft=None) -> tuple[str, Grounding]:
    """Yes or No and the sentence that decides it, or "The documents do not say." (mode none).

    The verdict is read over the passages as a fact is (reader.messages): over numbered sentences
    the default reader leaned to "Yes" where the passages made it say "No". The sentence is the one
    it copies when asked which decides it, proven word for word; else the one it names by number;
    else the best sentence agreeing with the verdict (named False among the confidence's signals)."""
    raw = reader.written(generator, prompt, on_draft, in_effect().answer.reader_tokens_out)
    # The verdict is the more probable of the two first words; the reader's probability that the
    # passages do not say is a signal of the confidence, which decides whether the verdict stands.
    probs = generator.label_probs(prompt, [*VERDICTS, prompts.READER_UNKNOWN])
    grounding = Grounding(mode="verdict", focused=focused, draft=raw)
    shown = "No" if probs.get("No", 0.0) > probs.get("Yes", 0.0) else "Yes"
    yes_no = probs.get("Yes", 0.0) + probs.get("No", 0.0)
    probability = probs.get(shown, 0.0) / yes_no if yes_no > 0 else 0.0
    sentence = _copied(generator, asked, focused, shown)
    if sentence is None:
        listed = numbered(focused)
        numbers = [n for n in _decisive(generator, asked, listed, shown) if _speaks_of(listed.get(n), asked)]
        sentence = listed.get(numbers[0]) if numbers else None
    named = sentence is not None
    if sentence is None:  # the reader named none: the best sentence whose negation agrees with its verdict
        sentence = grounded.verdict_quote(shown, asked, sorted(focused, key=lambda s: -s.score)[
            :in_effect().answer.verdict_sentences])
    if sentence is None:  # a verdict nothing in the documents decides is not shown as found
        grounding.mode, grounding.confidence = "none", probability
        return NO_ANSWER, grounding
    grounding.quotes = [quote_of(sentence)]
    checked = check.asked_of(generator, asked.question, sentence.text, shown)
    reader.confident(grounding, generator, asked, probability=probability, shown=shown, named=named,
                     in_focus=True, verdict=True, checked=checked, said_unknown=probs.get(prompts.READER_UNKNOWN, 0.0))
    grounding.shown = reader.as_candidate(shown, "verdict", sentence, grounding.confidence)
    return f"{shown} [{sentence.passage.n}]", grounding


def _copied(generator, asked: Asked, focused: list[Sentence], shown: str) -> Sentence | None:
    """The sentence the reader copies as the one that decides its verdict, where the copy stands
    word for word in a focused sentence that speaks of what was asked."""
    prompt = generator.chat_prompt(reader.messages(asked, focus.reader_text(focused, "verdict")) + [
        Message("assistant", shown), Message("user", prompts.COPY_DECIDING_SENTENCE)])
    said = reader.parse(generator.complete(prompt, max_tokens=in_effect().answer.selection_tokens_out * 2,
                                           stop=["\n"], temperature=0.0))
    if not said.said or len(said.answer.split()) < 3:
        return None
    for sentence in focused:
        if reader.locate(said.answer, sentence.text) is not None and _speaks_of(sentence, asked):
            return sentence
    return None


def _speaks_of(sentence: Sentence, asked: Asked) -> bool:
    """Whether a sentence says any of the question's content words (by stem)."""
    said = {word_stem(word) for word in content_terms(sentence.text)}
    return any(word_stem(term) in said for term in asked.terms)


def _decisive(generator, asked: Asked, listed: Numbered, shown: str) -> list[int]:
    """The sentence the reader names, asked after its verdict in the same conversation."""
    prompt = generator.chat_prompt(_messages(asked, listed) + [
        Message("assistant", shown), Message("user", prompts.DECIDING_SENTENCE)])
    return named_numbers(generator.complete(prompt, max_tokens=6, stop=["\n"], temperature=0.0), listed)


def _likeliest(generator, prompt: str, listed: Numbered, count: int) -> list[int]:
    """The `count` sentence numbers the reader finds likeliest to open its reply, read from its
    probabilities of each "[k]" (one pass over all of them where the generator scores options)."""
    labels = [f"[{k}]" for k in range(1, len(listed.sentences) + 1)]
    if supports(generator, SCORES_OPTIONS):
        scores = generator.option_logprobs(prompt, labels, max_tokens=4)
    else:
        probs = generator.label_probs(prompt, labels)
        scores = [math.log(max(probs.get(label, 0.0), 1e-12)) for label in labels]
    order = sorted(range(len(labels)), key=lambda i: -scores[i])
    return [i + 1 for i in order[:count]]


def selected(generator, asked: Asked, focused: list[Sentence], prompt: str, on_draft=None) -> tuple[str, Grounding]:
    """The sentences the reader selects, quoted in document order ("- sentence [n]" a line each
    when there are several), or "The documents do not say." (mode none)."""
    listed = numbered(focused)  # as the plan's prompt numbered them (stage.py)
    raw = reader.written(generator, prompt, on_draft, in_effect().answer.selection_tokens_out)
    probability = reader.own_probability(generator, prompt, raw) if raw.strip() else 0.0
    said_unknown = 0.0
    if reader.parse(raw).unknown:  # its best choice, whose standing the confidence decides
        said_unknown = probability
        prompt = generator.chat_prompt(_messages(asked, listed) + [
            Message("assistant", raw.strip()), Message("user", prompts.SELECT_BEST_GUESS)])
        raw = reader.written(generator, prompt, None, in_effect().answer.selection_tokens_out)
        probability = reader.own_probability(generator, prompt, raw) if raw.strip() else 0.0
    grounding = Grounding(mode="selection", focused=focused, draft=raw)
    numbers = named_numbers(raw, listed)[:in_effect().answer.selection_most]
    if asked.want == "summary" and numbers:  # several points: the sentences it most expects to name
        numbers = _likeliest(generator, prompt, listed, summary.size_of(len(listed.sentences)))
    if not numbers:  # a reply naming no sentence shown
        grounding.mode, grounding.confidence = "none", probability
        return NO_ANSWER, grounding
    chosen = sorted({id(s): s for s in (listed.get(n) for n in numbers)}.values(), key=lambda s: s.order)
    grounding.quotes = [quote_of(s) for s in chosen]
    checked = check.asked_of(generator, asked.question, listed.get(numbers[0]).text, None)
    reader.confident(grounding, generator, asked, probability=probability, shown=chosen[0].text, named=True,
                     in_focus=True, verdict=False, checked=checked, said_unknown=said_unknown)
    grounding.shown = reader.as_candidate(" ".join(chosen[0].text.split()), "selection", chosen[0],
                                          grounding.confidence)
    lines = [f"{' '.join(s.text.split())} [{s.passage.n}]" for s in chosen]
    return (lines[0] if len(lines) == 1 else "\n".join(f"- {line}" for line in lines)), grounding
