"""The reader's second look: its proven answer set beside the next candidates, and the reader asked
which of them answers the question.

A small reader often copies the first figure whose sentence repeats the question's words ("the
generators ran for 31 hours last year") where another sentence states what was asked ("the fuel
store lasts about 52 hours"). The span ranker, which never saw the reply, offers other answers from
the same sentences. The reader's answer and the best of those are put to the reader as lettered
candidates, with the sentences that state them, in a system message of its own (prompts.
COMPARE_SYSTEM, its state kept like the answer's); its first-token probabilities of the letters
choose (asked in each order of the candidates: see `compared`). Every candidate is a slice of the stored text, so whichever it chooses
stands word for word in a sentence, which becomes the quote.
"""

from __future__ import annotations

from longqa.ask import prompts
from longqa.ask.answer.focus import Sentence
from longqa.models.base import KEEPS_PREFIX, supports
from longqa.models.chat import Message

LETTERS = "ABCDEFGH"


def compared(generator, question: str, candidates: list[tuple[str, Sentence]]) -> list[float]:
    """The reader's probability that each candidate (an answer and the sentence stating it) answers
    `question`, in the order given; [] when it cannot be asked (no chat template, one candidate).

    A small reader favours the first letters whatever they hold (measured on the sample handbook's
    question: 0.43 for the first candidate and 0.23 for the third, 0.55 and 0.18 with the two swapped),
    so it is asked once per rotation of the candidates, each in every place once, and the
    probabilities of a candidate are averaged over the rotations."""
    if generator is None or not hasattr(generator, "chat_prompt") or len(candidates) < 2:
        return []
    candidates = candidates[:len(LETTERS)]
    if supports(generator, KEEPS_PREFIX):  # the same system turn opens every second look
        generator.keep_prefix(generator.chat_head(prompts.COMPARE_SYSTEM))
    # The sentences in one order for every rotation, before the question: each rotation then reads
    # only the question and its lettered candidates after the state of what it shares with the last.
    sentences: list[Sentence] = []
    for _, sentence in candidates:
        if not any(sentence is seen for seen in sentences):
            sentences.append(sentence)
    numbered = "\n".join(f"[{n}] {' '.join(s.text.split())}" for n, s in enumerate(sentences, 1))
    count = len(candidates)
    totals = [0.0] * count
    for shift in range(count):
        order = [(i + shift) % count for i in range(count)]
        for index, probability in zip(order, _asked(generator, question, numbered, [candidates[i][0] for i in order])):
            totals[index] += probability / count
    return totals


def _asked(generator, question: str, numbered: str, texts: list[str]) -> list[float]:
    """The reader's letter probabilities for the candidates in this order (normalised over them)."""
    letters = {LETTERS[i]: text for i, text in enumerate(texts)}
    prompt = generator.chat_prompt([Message("system", prompts.COMPARE_SYSTEM),
                                    Message("user", prompts.compare_message(question, numbered, letters))])
    probs = generator.label_probs(prompt, list(letters))
    total = sum(probs.get(letter, 0.0) for letter in letters)
    return [probs.get(letter, 0.0) / total if total > 0 else 0.0 for letter in letters]
