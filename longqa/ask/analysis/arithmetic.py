"""What a question asks to be read from, or computed over, a table: the operation, the years, the
words that name the row (or the two rows), read once from the question's wording.

"What were maintenance costs in 2021?" is a lookup; "the average ... for 2018 and 2019" a mean; "the
change ... between 2018 and 2019" a change; "... as a percentage" or "percentage change" a
percentage change; "the difference between A and B in 2019" a difference of two rows; "what
percentage of total X were Y" a share. The answer stage (answer/tables.py) applies the reading to
the table rows of the context; it never re-reads the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa.text.words import content_terms

YEAR = re.compile(r"(?<![\d.,$])(?:19|20)\d\d(?!\d|,\d|\.\d)")
RESPECTIVELY = re.compile(r"\brespectively\b", re.I)
_PERCENT_CHANGE = re.compile(r"percentage change|change\b.*\bas a percentage|percent(?:age)? (?:increase|decrease|"
                             r"change|growth)|growth rate|by what percent", re.I)
_MEAN = re.compile(r"\b(?:average|mean)\b", re.I)
_CHANGE = re.compile(r"\b(?:change|difference|increase|decrease|decline|growth)\b", re.I)
_SUM = re.compile(r"\b(?:total|sum|summed|altogether|combined|in all)\b", re.I)
_PERCENT = re.compile(r"percent|%", re.I)
# "what percentage of total sales in 2021 were online sales", "what percentage of total cost is due
# to energy", "X as a percentage of Y"
_SHARE_OF = re.compile(r"\bpercent(?:age)? of (?:the )?(?P<whole>.+?) (?:were|was|is|are)"
                       r"(?: (?:due to|from|made up of|represented by|attributable to|related to))? (?P<part>.+)", re.I)
_SHARE_AS = re.compile(r"^(?:what (?:is|was|were) )?(?:the )?(?P<part>.+?) as a percent(?:age)? of "
                       r"(?:the )?(?P<whole>.+)", re.I)
# "the difference in net sales between A and B in 2019": two rows of one column
_BETWEEN = re.compile(r"\bbetween (?:the )?(?P<a>.+?) and (?:the )?(?P<b>.+?)(?: (?:in|for|at|during|as of)\b.*)?\??$",
                      re.I)
_RANGE = re.compile(r"\b((?:19|20)\d\d)\s*(?:to|through|thru|-|–)\s*((?:19|20)\d\d)\b", re.I)
# Words that name the operation or the period, not the row.
NOT_LABEL = {"average", "mean", "change", "difference", "increase", "decrease", "decline", "growth", "total",
             "sum", "summed", "altogether", "combined", "percentage", "percent", "value", "amount", "respectively",
             "year", "years", "ended", "fiscal", "december", "between", "both", "fy", "million", "millions",
             "thousand", "thousands", "billion", "billions", "dollars", "rate"}


@dataclass(frozen=True)
class Arithmetic:
    """A question's table operation, as read from its wording."""

    operation: str  # lookup | list | sum | mean | change | percent_change | difference | share
    years: tuple[str, ...]  # the columns it reads (a range spelled out for a sum or a mean)
    row: tuple[str, ...] = ()  # the words that name the row (one-row operations)
    rows: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # difference: (a, b); share: (part, whole)
    percent: bool = False  # the question asks for a percentage (of a "$ | %" pair of cells)


def read(question: str) -> Arithmetic | None:
    """The table operation `question` asks for, or None when it asks for none."""
    op = operation(question)
    if op is None:
        return None
    years = question_years(question)
    if op in ("sum", "mean"):
        years = _spanned(question, years)
    if op in ("share", "difference"):
        first, second = _share_phrases(question) if op == "share" else _between_phrases(question)
        return Arithmetic(op, tuple(years), rows=(tuple(row_words(first)), tuple(row_words(second))))
    return Arithmetic(op, tuple(years), row=tuple(row_words(question)), percent=bool(_PERCENT.search(question)))


def operation(question: str) -> str | None:
    years = question_years(question)
    if _PERCENT_CHANGE.search(question) and len(years) >= 2:
        return "percent_change"
    if len(years) == 1 and _share_phrases(question) is not None:
        return "share"
    if _MEAN.search(question) and len(years) >= 2:
        return "mean"
    if _CHANGE.search(question) and len(years) >= 2:
        return "change"
    if _CHANGE.search(question) and len(years) == 1 and _between_phrases(question) is not None:
        return "difference"
    if RESPECTIVELY.search(question) and len(years) >= 2:
        return "list"
    if _SUM.search(question) and len(years) >= 2:
        return "sum"
    if len(years) == 1 and not _CHANGE.search(question):
        return "lookup"
    return None


def question_years(question: str) -> list[str]:
    return list(dict.fromkeys(YEAR.findall(question)))


def row_words(text: str) -> list[str]:
    """The words of `text` that should name a row: no operation or period words, no figures."""
    return [t for t in content_terms(text) if t not in NOT_LABEL and not any(ch.isdigit() for ch in t)]


def _spanned(question: str, years: list[str]) -> list[str]:
    """A total or an average "for fiscal years 2010 to 2012" takes every year of the range."""
    match = _RANGE.search(question)
    if match is None or len(years) != 2:
        return years
    first, last = sorted(int(y) for y in match.groups())
    if last - first > 10:
        return years
    return [str(y) for y in range(first, last + 1)]


def _share_phrases(question: str) -> tuple[str, str] | None:
    """(part, whole) of "what percentage of WHOLE were PART" or "PART as a percentage of WHOLE"."""
    match = _SHARE_OF.search(question)
    if match is not None and not _CHANGE.search(match.group("whole")):
        return _phrase(match.group("part")), _phrase(match.group("whole"))
    match = _SHARE_AS.search(question.strip())
    if match is not None and not _CHANGE.search(match.group("part")):
        return _phrase(match.group("part")), _phrase(match.group("whole"))
    return None


def _between_phrases(question: str) -> tuple[str, str] | None:
    """The two row names of "the difference ... between A and B (in 2019)"; None when A or B is a year."""
    match = _BETWEEN.search(question)
    if match is None:
        return None
    a, b = _phrase(match.group("a")), _phrase(match.group("b"))
    if not a or not b or YEAR.search(a) or YEAR.search(b):
        return None
    return a, b


def _phrase(text: str) -> str:
    """A row name from the question: its years and the period phrase around them left out."""
    text = re.sub(r"\b(?:in|for|at|during|as of)\s+(?:fiscal\s+|fy\s*)?(?:19|20)\d\d\b", " ", text, flags=re.I)
    text = YEAR.sub(" ", text)
    return " ".join(text.rstrip(" ?.").split())
