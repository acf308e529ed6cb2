"""Turning free user text into search terms: words, stopwords, and a safe FTS5 MATCH expression.

Users type anything: quotes, `AND`, `NEAR(`, `*`, `-`, brackets, emoji. FTS5 gives all of these
meaning, so the MATCH expression is never built from the raw text: it is an OR of double-quoted
plain words (FTS5 treats a quoted string as a phrase of literal tokens), which cannot be a syntax
error whatever the input.
"""

from __future__ import annotations

import re

from longqa.retrieve.equivalents import equivalent_phrases

# Function words plus the scaffolding of questions ("what was the ..."). They carry no topic, and
# leaving them out keeps BM25 from ranking passages by how often they say "the".
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before
    being below between both but by can cannot could did didn do does doesn doing don down during
    each either else ever few for from further had has have having he her here hers herself him
    himself his how however i if in into is isn it its itself just let me more most much must my
    myself neither no nor not now of off on once only or other others our ours ourselves out over
    own per please same shall she should so some such than that the their theirs them themselves
    then there these they this those through thus to too under until up upon us very via was wasn
    we were weren what whatever when where whether which while who whom whose why will with within
    without would yes yet you your yours yourself
    tell give show list describe explain name find according based provided using use many
    """.split()
)

# Words, numbers, and numbers glued to letters (FY2017, 10-K pieces, Q2). Apostrophes end a word,
# so "Amazon's" yields "amazon" and the dangling "s" is dropped by the length rule.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased word tokens of `text`, in order, duplicates kept."""
    return [w.lower() for w in _WORD.findall(text)]


def content_terms(text: str) -> list[str]:
    """The words of `text` that can carry its topic: no stopwords, no single letters; unique, in order.

    A fiscal-year token like "fy2017" also yields its year "2017", which is how documents name it.
    """
    seen: dict[str, None] = {}
    for word in words(text):
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        seen.setdefault(word, None)
        year = re.fullmatch(r"(?:fy|q[1-4]|h[12])((?:19|20)\d\d)", word)
        if year:
            seen.setdefault(year.group(1), None)
    return list(seen)


def fts_match(text: str, max_terms: int = 32) -> str | None:
    """An FTS5 MATCH expression that ORs the quoted content terms of `text` and the other names of
    the financial captions it says (equivalents.py); None if it has no content term."""
    terms = content_terms(text)[:max_terms]
    if not terms:
        return None
    # A term is letters and digits only, so it needs no escaping inside double quotes; so is each
    # word of an equivalent caption, which FTS5 reads as a phrase ("statement of operations").
    return " OR ".join(f'"{term}"' for term in terms + equivalent_phrases(text))
