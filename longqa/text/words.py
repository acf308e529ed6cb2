"""Words of free text: lower-cased tokens, stopwords, and the content terms that carry a topic.

The bottom floor every package reads words through (retrieval, the answer stage, the graph).
"""

from __future__ import annotations

import re

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


def overlap(claim: str, source: str) -> float:
    """Share of the claim's content words (stopwords aside) that the source contains."""
    mine = {w for w in words(claim) if w not in STOPWORDS}
    return len(mine & set(words(source))) / len(mine) if mine else 0.0
