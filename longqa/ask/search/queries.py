"""Generated queries for step-wise expansion: next-step queries (multi-bridge) and sub-questions
(multi-source). Generation is grammar-constrained to short single lines; results are deduplicated
against the question and every query already asked."""

from __future__ import annotations

import re

from longqa.ask import prompts
from longqa.ask.settings import in_effect
from longqa.models.base import Generator
from longqa.models.chat import Message
from longqa.text.words import STOPWORDS, content_terms


def bridge_grammar() -> str:
    """The next-step line's grammar, its lengths the expansion settings in effect when it is asked."""
    limits = in_effect().expansion
    return (f'root ::= " " known "\\n{prompts.NEXT_QUERY} " query\n'
            f"known ::= [^\\n]{{3,{limits.max_known_chars}}}\n"
            f"query ::= [^\\n]{{3,{limits.max_query_chars}}}\n")


def split_grammar() -> str:
    """The two sub-questions' grammar, its length the expansion setting in effect when it is asked."""
    return (f'root ::= " " query "\\n{prompts.SECOND_SUB_QUESTION} " query\n'
            f"query ::= [^\\n]{{3,{in_effect().expansion.max_query_chars}}}\n")

# Two capitalised names joined by "or"/"and": the entities a comparison is about. A name is
# capitalised words, possibly linked by small words ("Letters to Cleo", "Bank of America").
_CAPITAL = r"[A-Z0-9][\w'’.&-]*"
_LINK = r"(?:of|for|the|to|de|la|von|van|in|on|at|upon|&)"
_NAME = rf"{_CAPITAL}(?:\s+(?:{_LINK}\s+)*{_CAPITAL})*"
_PAIR = re.compile(rf"(?:\bthe\s+)?({_NAME})\s*,?\s+(or|and|vs\.?|versus)\s+(?:the\s+)?({_NAME})")
_QUESTION_VERBS = {"compare", "contrast", "rank", "between", "among"}


def normalise(query: str) -> frozenset[str]:
    return frozenset(content_terms(query))


def is_new(query: str, asked: list[str]) -> bool:
    """A query is new when its content words are not (nearly) those of a query already asked."""
    terms = normalise(query)
    if len(terms) == 0:
        return False
    for previous in asked:
        old = normalise(previous)
        overlap = len(terms & old) / max(len(terms | old), 1)
        if overlap >= in_effect().expansion.same_query_overlap:
            return False
    return True


def rule_split(question: str) -> list[str]:
    """"Is A or B older?" -> ["Is A older?", "Is B older?"], when two names are compared."""
    # A capitalised first word ("Compare", "Were") is grammar, not part of a name.
    first_word = question.split(" ", 1)[0]
    masked = question
    if first_word.lower() in STOPWORDS or first_word.lower() in _QUESTION_VERBS:
        masked = first_word.lower() + question[len(first_word):]
    pairs = [m for m in _PAIR.finditer(masked) if m.group(1).lower() != m.group(3).lower()]
    # "A or B" names the alternatives being compared; "A and B" may just be a name list
    pairs.sort(key=lambda m: m.group(2) == "and")
    if not pairs:
        return []
    match = pairs[0]
    span = question[match.start():match.end()]
    return [question.replace(span, match.group(1).strip(), 1), question.replace(span, match.group(3).strip(), 1)]


def model_split(generator: Generator, question: str) -> list[str]:
    text = generator.complete(prompts.split_prompt(question), max_tokens=70, grammar=split_grammar())
    parts = text.split("\n" + prompts.SECOND_SUB_QUESTION)
    return [p.strip() for p in parts if p.strip()]


def sub_questions(generator: Generator | None, question: str, limit: int) -> tuple[list[str], str]:
    """Sub-questions, new and distinct, at most `limit`; and who produced them ("rule"/"model")."""
    found, source = rule_split(question), "rule"
    if not found and generator is not None:
        found, source = model_split(generator, question), "model"
    kept: list[str] = []
    for query in found:
        if is_new(query, [question, *kept]) or (source == "rule" and query not in kept):
            kept.append(" ".join(query.split())[:in_effect().expansion.max_query_chars])
    return kept[:limit], source


def reader_next_query(generator: Generator, question: str, shown: list[str]) -> str:
    """A reader's next query for a question whose passages `shown` do not yet answer it, asked in
    its own chat format (prompts.NEXT_QUERY_SYSTEM); "" when it adds no word the question lacks
    (a query that only re-asks the question finds what the question found)."""
    prompt = generator.chat_prompt([Message("system", prompts.NEXT_QUERY_SYSTEM),
                                    Message("user", prompts.next_query_message(question, shown))])
    reply = generator.complete(prompt, max_tokens=in_effect().expansion.reader_query_tokens, stop=["\n"],
                               temperature=0.0)
    query = " ".join(reply.strip().strip("\"'`").split())[:in_effect().expansion.max_query_chars]
    return query if normalise(query) - normalise(question) else ""


def next_query(generator: Generator, question: str, context: str) -> tuple[str, str]:
    """(what the context already shows, the next query to look up) for a multi-bridge question."""
    text = generator.complete(prompts.bridge_prompt(question, context), max_tokens=70, grammar=bridge_grammar())
    known, _, query = text.partition("\n" + prompts.NEXT_QUERY)
    return " ".join(known.split()), " ".join(query.split())[:in_effect().expansion.max_query_chars]
