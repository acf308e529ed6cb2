"""Crude stems, one module for all of them. They differ on purpose, and their names say how:

- `suffix_stem`: strips -ies/-es/-ed/-ing/-ly and a plural s ("acquisitions" meets "acquisition",
  "raised" meets "raise"); the relevance gate compares question and store words with it.
- `short_stem`: a suffix strip, then the first `chars` letters ("generators" meets "generator",
  "supplies" meets "supply"); the answer stage matches question words in sentences with it.
- `prefix_stem`: the first five letters without a plural s ("located" meets "location"); labels
  of fields are matched with it, where word endings vary most.
- `singular_phrase`: each word of a phrase without its plural s ("net revenues" is "net revenue").
"""

from __future__ import annotations

import re


def suffix_stem(word: str) -> str:
    if len(word) > 5:
        word = re.sub(r"(?:ies|es|ed|ing|ly)$", "", word)
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word


def short_stem(word: str, chars: int = 6) -> str:
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith(("ed", "ing")):
        word = word[:-2] if word.endswith("ed") else word[:-3]
    return word[:chars] if len(word) > chars else word.rstrip("s") or word


def prefix_stem(word: str) -> str:
    return word.lower().rstrip("s")[:5]


def singular_phrase(said: list[str]) -> str:
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in said)
