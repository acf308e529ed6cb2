"""The answer step the baselines share: one prompt, the same for all of them, so only the context
differs between them.

A completion (base) model gets a prompt written as the start of a document that the answer
naturally continues: multiple-choice questions are decided from the probabilities of the option
letters after "Answer: (" (one forward pass, always a valid letter); other questions get a short
greedy completion, grammar-constrained to one non-empty line. A reader (an instruction-tuned
profile) gets the reader's own chat prompt over the baseline's passages, so that the baselines are
read as longqa's answers are, and only the context differs: its reply less the passage number it
cites, or the option letter it finds most probable.
"""

from __future__ import annotations

from dataclasses import dataclass

from longqa.ask import prompts
from longqa.ask.answer import reader
from longqa.eval import choice
from longqa.eval.retrieved import Passage
from longqa.models import profiles
from longqa.models.chat import Message

ANSWER_TOKENS = 32
# One non-empty line: a completion (base) model, the chooser, often opens with a newline and then
# writes a list of options;
# the grammar makes it commit to an answer on the first line and stop at its end.
ONE_LINE = 'root ::= [^\\n]+ "\\n"'
_SAFETY = 16  # generator tokens kept free besides the answer itself


@dataclass
class Answer:
    text: str
    prompt_tokens: int  # in the generator's own vocabulary
    context_cut: bool  # the context had to be shortened to fit the generator's window


def format_passages(passages: list[Passage]) -> str:
    parts = []
    for n, passage in enumerate(passages, start=1):
        where = " > ".join(part for part in (passage.title, passage.label) if part)
        pages = ""
        if passage.page_start:
            pages = f" (p. {passage.page_start})" if passage.page_start == passage.page_end else (
                f" (pp. {passage.page_start}-{passage.page_end})"
            )
        parts.append(f"[{n}] {where}{pages}\n{passage.text.strip()}")
    return "\n\n".join(parts)


def build_prompt(question: str, passages: list[Passage], is_choice: bool, generator=None) -> str:
    if profiles.is_reader(generator):
        return _reader_prompt(generator, question, passages, is_choice)
    context = f"{format_passages(passages)}\n\n" if passages else ""
    source = "Read the passages, then " if passages else ""
    if is_choice:
        listed = choice.options(question)
        lines = "\n".join(f"({letter}) {text}" for letter, text in listed.items())
        task = "pick the option that answers the question."
        return f"{source}{task}\n\n{context}Question: {choice.stem(question)}\n{lines}\nAnswer: ("
    task = "answer the question with a short phrase taken from them." if passages else (
        "Answer the question with a short phrase.")
    return f"{source}{task}\n\n{context}Question: {question.strip()}\nShort answer:"


def _reader_prompt(generator, question: str, passages: list[Passage], is_choice: bool) -> str:
    options = choice.options(question) if is_choice else {}
    asked = choice.stem(question) if options else question.strip()
    return generator.chat_prompt([Message("system", prompts.READER_SYSTEM),
                                  Message("user", prompts.reader_message(asked, format_passages(passages), options))])


def fit_passages(generator, question: str, passages: list[Passage], is_choice: bool, answer_tokens: int):
    """Drop text from the end of the context until the prompt fits the generator's window."""
    limit = generator.n_ctx - answer_tokens - _SAFETY
    prompt = build_prompt(question, passages, is_choice, generator)
    used = generator.count_tokens(prompt)
    cut = False
    while used > limit and passages:
        cut = True
        last = passages[-1]
        excess = used - limit
        keep_chars = int(len(last.text) * max(0.0, 1 - (excess * 1.1 + 8) / max(generator.count_tokens(last.text), 1)))
        if keep_chars < 200:
            passages = passages[:-1]
        else:
            passages = passages[:-1] + [last.with_text(last.text[:keep_chars])]
        prompt = build_prompt(question, passages, is_choice, generator)
        used = generator.count_tokens(prompt)
    return prompt, used, cut


def answer(generator, question: str, passages: list[Passage], is_choice: bool, answer_tokens: int = ANSWER_TOKENS) -> Answer:
    prompt, used, cut = fit_passages(generator, question, passages, is_choice, answer_tokens)
    reads = profiles.is_reader(generator)
    if is_choice:
        letters = list(choice.options(question)) or ["A", "B", "C", "D"]
        labels = [f"({letter})" for letter in letters] if reads else letters  # the reader replies "(B)"
        probs = generator.label_probs(prompt, labels)
        best = max(zip(letters, labels), key=lambda pair: probs.get(pair[1], 0.0))[0]
        return Answer(text=best, prompt_tokens=used, context_cut=cut)
    if reads:
        text = generator.complete(prompt, max_tokens=answer_tokens, stop=["\n"], temperature=0.0)
        return Answer(text=reader.parse(text).answer, prompt_tokens=used, context_cut=cut)
    text = generator.complete(prompt, max_tokens=answer_tokens, grammar=ONE_LINE, temperature=0.0)
    return Answer(text=text.strip(), prompt_tokens=used, context_cut=cut)
