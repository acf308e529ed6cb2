"""Multiple-choice questions: read the options out of the question, the gold letter out of the gold
answer, and the chosen letter out of whatever a system answered."""

from __future__ import annotations

import re

from longqa.eval.metrics import token_f1

# "(A) text" at the start of a line (QuALITY puts one option per line, after a blank line).
_OPTION = re.compile(r"^\s*\(([A-J])\)\s*(.+?)\s*$", re.MULTILINE)
# A letter standing alone at the start: "B", "(B)", "B)", "B.", "B:", "[B]".
_LEADING = re.compile(r"^\W*\(?\[?([A-J])\]?\)?(?:[).:\],]|\s*$)")
_ANSWER_IS = re.compile(r"\b(?i:answer|option|choice)\s*(?i:is)?\s*:?\s*\(?([A-J])\b")
_PAREN = re.compile(r"\(([A-J])\)")


def options(question: str) -> dict[str, str]:
    """{'A': text, 'B': text, ...} as listed in the question; empty when it lists none."""
    return {letter: text for letter, text in _OPTION.findall(question)}


def stem(question: str) -> str:
    """The question without its option lines."""
    return _OPTION.sub("", question).strip()


def gold_letter(answers: list[str], question: str) -> str | None:
    """The gold option: the letter a gold answer starts with, else the option whose text it matches."""
    listed = options(question)
    for answer in answers:
        letter = extract_letter(answer, listed)
        if letter:
            return letter
    return None


def extract_letter(answer: str, listed: dict[str, str] | None = None) -> str | None:
    """The option letter an answer names, read robustly.

    In order: a letter at the very start ("B", "(B) ...", "B. ..."), "answer is B", the first
    parenthesised letter, and finally (when the options are known) the option whose text the answer
    matches best by token F1 (at least 0.5). Only letters among the listed options count."""
    allowed = set(listed) if listed else None
    text = answer.strip()
    for pattern in (_LEADING, _ANSWER_IS, _PAREN):
        for match in pattern.finditer(text):
            letter = match.group(1).upper()
            if allowed is None or letter in allowed:
                return letter
            if pattern is _LEADING:
                break
    if listed and text:
        scored = sorted(((token_f1(text, [body]), letter) for letter, body in listed.items()), reverse=True)
        if scored[0][0] >= 0.5:
            return scored[0][1]
    return None
