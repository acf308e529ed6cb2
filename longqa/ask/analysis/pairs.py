"""Two names a question joins with "and" and asks one thing of.

A yes/no question may ask the same of two names ("Are the Main Street and Harbour Road sites both
listed buildings?"): the answer is "yes" only when each is said to be so. A wh-question may ask
what two names share ("What material do the Alder and Birch frames use?"): the answer is said of
each of them. Questions that set the two apart ("the same neighbourhood", "older", "between")
are not read as pairs: no sentence about one of them settles those.
"""

from __future__ import annotations

import re

from longqa.text.spans import NAME_LINKS

_JOINED_VERDICT = re.compile(r"^\s*(?:are|were|is|was|do|does|did|have|has)\b", re.I)
_COMPARED = re.compile(r"\b(?:same|different|similar|related|together|each other|one another)\b", re.I)
_ASKS_SHARED = re.compile(r"^\s*(?:what|which|where|who|when|in what|in which|from what|from which)\b", re.I)
_NOT_SHARED = re.compile(r"\b(?:between|differ\w*|older|younger|first|more|less|larger|smaller|higher|lower)\b",
                         re.I)
_AUXILIARIES = {"do", "does", "did", "are", "were", "is", "was", "have", "has", "had"}


def joined_names(core: str) -> tuple[str, str] | None:
    """The two names a yes/no question joins with "and" and asks the same thing of ("Are Form A
    and Form B both required?"); None for any other question, and for one that compares the two
    ("located in the same building")."""
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


def shared_names(core: str) -> tuple[str, str] | None:
    """The two names a wh-question joins with "and" and asks one thing of ("Which standard do
    Model X and Model Y meet?"); None for other questions, and for those that set the two apart
    ("between", "older", "first")."""
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
    # inside it ("the report Profit and Loss"); a year is not a name
    if not first or not second or not opening or opening[-1] not in _AUXILIARIES:
        return None
    if any(not re.search(r"[A-Za-z]{2}", name) for name in (first, second)):
        return None
    return " ".join(reversed(first.split())), second


def _leading_name(tokens: list[str]) -> str:
    """The name the tokens open with ("Model Y" of "Model Y meet?"), or ""."""
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


def _name_word(token: str) -> bool:
    return token[:1].isupper() or token[:1].isdigit()


def _is_name(tokens: list[str]) -> bool:
    """Every word capitalised, a number or a linking word: "Harbour Road Depot", "Bank of
    England"."""
    return bool(tokens) and _name_word(tokens[0]) and all(_name_word(t) or t.lower() in NAME_LINKS for t in tokens)
