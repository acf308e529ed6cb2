"""Rule priors for question analysis, where a small model is weak (OkraLong 5.6).

Each rule looks at surface cues only. When a rule fires it overrides the model's label; when none
fires the model decides. Rules are ordered: causes and summaries first ("what drove the increase" is not a
sum), then arithmetic, multi-source, multi-bridge, and the weaker abstractive cues last.
"""

from __future__ import annotations

import re

from longqa.ask.settings import in_effect

_ARITHMETIC = re.compile(
    r"\b(calculat\w*|compute[ds]?|ratio|percentage|percent|average|sum|total|how much|how many|"
    r"year[- ]over[- ]year|yoy|cagr|round(?:ed)? to|per share|"
    r"(?:what|by how)\b[^?]*\b(?:change|growth|increase|decrease|decline|difference) (?:in|of|from|between))\b|%",
    re.IGNORECASE,
)
# Questions about causes and summaries need explanation even when they mention a change.
_CAUSAL = re.compile(
    r"\b(why|drove|drive|drivers?|reasons?|caused?|summari[sz]e|summary|overview|explain|describe|"
    r"main (?:contribution|idea|point|finding)s?|what is the (?:paper|document|report|article) about)\b",
    re.IGNORECASE,
)
_COMPARISON = re.compile(
    r"\b(compare[ds]?|comparison|versus|vs\.?|both|same|in common|differ(?:ence)? between|"
    r"(?:more|less|older|younger|larger|smaller|bigger|higher|lower|earlier|later|first|longer|"
    r"shorter|taller)\b[^?]*\bor\b)",
    re.IGNORECASE,
)
# "X or Y?" between two capitalised names: "Which magazine came first, Arthur's Magazine or First for Women?"
_NAMED_ALTERNATIVES = re.compile(r"[A-Z][\w'’.&-]*(?:\s+[\w'’.&-]+){0,5}\s+or\s+[A-Z][\w'’.&-]*")


def _described(word: str) -> re.Pattern:
    """A noun picked out by a relative clause or a chain of "of the" ("the director of the film
    that ..."), the words before the relative pronoun matching `word`."""
    return re.compile(
        rf"\b(?:the|a|an)\s+(?:{word}\s+){{0,2}}(?:who|whom|whose|that|which|where|when)\s+\w+|"
        r"\bof\s+the\s+[a-z]+\s+(?:of|in|for|from)\s+(?:the\s+)?\w+|"
        r"\w+['’]s\s+\w+['’]s\b",
    )


_BRIDGE = _described("[a-z-]+")
_ABSTRACTIVE = re.compile(
    r"\b(how (?:does|do|did|is|are|was|were)|discuss|key (?:finding|point|takeaway|risk)s?|purpose|"
    r"nature|approach|impact|role|implications?|significance|agenda)\b",
    re.IGNORECASE,
)
_GLOBAL = re.compile(
    r"\b(summari[sz]e|summary|overview|overall|main (?:contribution|idea|point|finding)s?|"
    r"what is the (?:paper|document|report|article|book|story) about|in general|throughout|"
    r"key (?:finding|point|takeaway)s?)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"[\"“”'‘’][^\"“”'‘’]{2,}[\"“”'‘’]")
_IDENTIFIER = re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]+(?:[-./][A-Za-z0-9]+)*\b|\b\d[\d,.]*\b")
_PROPER_NOUN = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-zA-Z]+")


# The same nested description, its words capitalised or not ("the King who made ..."): what the
# answer stage's second hop looks for, whatever type the question was given first ("how many
# stores are in the state where ..." is arithmetic and bridged).
_BRIDGED = _described("[A-Za-z-]+")


_DESCRIBED_HEAD = re.compile(
    r"\b(?:the|a|an)\s+([a-z][a-z-]+)\s+(?:who|whom|whose|that|which|where|when|in which|of|from which)\b",
    re.IGNORECASE)


_ASKS_FOR = re.compile(r"^\s*(?:who|what|which)\s+(?:is|was|are|were)\s*$", re.IGNORECASE)


def described_heads(question: str) -> list[str]:
    """The nouns a question describes its bridges by ("the state where ...", "the performer of
    ...") innermost last: what kind of thing each hop's entity is."""
    found = [m for m in _DESCRIBED_HEAD.finditer(question)
             if m.group(1).lower() not in ("name", "one", "same", "first", "last", "end", "rest")]
    if found and _ASKS_FOR.match(question[:found[0].start()]):  # "Who is the sibling of ...": the answer
        found = found[1:]
    return [m.group(1).lower() for m in found]


def is_bridged(question: str) -> bool:
    """The question reaches its answer through something it only describes."""
    return bool(_BRIDGED.search(question))


def question_type(question: str) -> str | None:
    """The type a rule assigns, or None when no rule fires (the model decides)."""
    if _CAUSAL.search(question):
        return "abstractive"
    if _ARITHMETIC.search(question):
        return "arithmetic"
    if _COMPARISON.search(question) or _NAMED_ALTERNATIVES.search(question):
        return "multi-source"
    if _BRIDGE.search(question):
        return "multi-bridge"
    if _ABSTRACTIVE.search(question):
        return "abstractive"
    return None


def information_pattern(question: str) -> str | None:
    """"exact" when the question hinges on literal strings (quotes, codes, numbers, names)."""
    if _QUOTED.search(question) or _IDENTIFIER.search(question) or _PROPER_NOUN.search(question.strip()):
        return "exact"
    return None


# A question that asks for a figure, a date, a duration, a frequency, a name, one of two options
# or a yes/no verdict is answered by one span of one passage, whatever a model thinks of its scope;
# "who are the ...", "which ... were ..." may want a list, and are left to the model.
_LOCAL_KINDS = ("quantity", "date", "month", "duration", "frequency", "name", "option", "yesno")
_PLURAL = re.compile(r"^\s*(?:who|which\s+\w+|what\s+\w+)\s+(?:are|were)\b", re.I)


def scope_prior(question: str, want: str) -> float | None:
    """R_q forced toward global (search.scope_global) for summary-style questions, toward local
    (search.scope_local) for questions that want (`Asked.want`) one short answer (_LOCAL_KINDS);
    None when no rule fires."""
    if _GLOBAL.search(question):
        return in_effect().search.scope_global
    return in_effect().search.scope_local if want in _LOCAL_KINDS and not _PLURAL.search(question) else None
