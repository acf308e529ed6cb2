"""The seeds' judgements asked of a model in the form it reads: scope, sufficiency, outline choice.

A chooser (a base model continuing documents) is asked through a completion prompt and its
probability of the label words after a label line ("Scope:") is read. A reader (an
instruction-tuned model, models/profiles.is_reader) is asked the same judgement as a task in its
own chat format: a fixed system message (its state kept, as the answer prompt's is), the question
and what it judges as the user's turn, and the probability of each one-word reply as the first
token of its turn. Either way it is one forward pass and no generation. How far a judgement steers
is the model's measured skill at it (models/skill.py, bench/decisions.py), whichever form it took.
"""

from __future__ import annotations

from longqa.ask import prompts
from longqa.models.base import KEEPS_PREFIX, supports
from longqa.models.chat import Message
from longqa.models.profiles import is_reader


def _chat_probs(generator, system: str, user: str, labels: dict[str, str]) -> dict[str, float]:
    """meaning -> probability of the reply word that says it, for a reader."""
    if supports(generator, KEEPS_PREFIX):  # the same system turn opens every such judgement
        generator.keep_prefix(generator.chat_head(system))
    prompt = generator.chat_prompt([Message("system", system), Message("user", user)])
    probs = generator.label_probs(prompt, list(labels.values()))
    return {meaning: probs.get(word, 0.0) for meaning, word in labels.items()}


def scope(generator, question: str) -> dict[str, float]:
    """{"local": p, "global": p}: does the question need a passage or a broad part of a document
    (LongRefiner's R_q)."""
    if is_reader(generator):
        return _chat_probs(generator, prompts.SCOPE_SYSTEM, prompts.scope_message(question), prompts.SCOPE_LABELS)
    probs = generator.label_probs(prompts.analysis_prompt(question), [f" {s}" for s in prompts.SCOPES])
    return {s: probs[f" {s}"] for s in prompts.SCOPES}


def sufficiency(generator, question: str, shown: list[str]) -> float:
    """The model's probability that the passages `shown` state the answer (GARLIC's and PECAN's
    stop). A chooser's prompt puts the question first and appends each passage, so consecutive
    checks share their prefix; a reader's is one turn after its kept system message."""
    if is_reader(generator):
        probs = _chat_probs(generator, prompts.SUFFICIENCY_SYSTEM, prompts.sufficiency_message(question, shown),
                            prompts.SUFFICIENCY_LABELS)
    else:
        raw = generator.label_probs(prompts.sufficiency_prompt(question, shown), [" yes", " no"])
        probs = {"yes": raw[" yes"], "no": raw[" no"]}
    total = probs["yes"] + probs["no"]
    return probs["yes"] / total if total > 0 else 0.5


def outline(generator, lines: list[str], question: str, letters: list[str]) -> dict[str, float]:
    """letter -> the model's probability that the section with that letter (in the table of contents
    `lines`) holds the answer (LongRefiner's global selection)."""
    if is_reader(generator):
        return _chat_probs(generator, prompts.OUTLINE_SYSTEM, prompts.outline_message(lines, question),
                           {letter: letter for letter in letters})
    probs = generator.label_probs(prompts.outline_prompt(lines, question), [f" {letter}" for letter in letters])
    return {letter: probs[f" {letter}"] for letter in letters}
