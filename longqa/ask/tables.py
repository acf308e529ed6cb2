"""Table arithmetic: an answer read from, or computed over, the cells of one table row.

Financial questions ask for a cell ("the value of brand names in 2019"), several cells ("in 2018
and 2019 respectively") or a small computation over them ("the average ... for 2018 and 2019",
"the change ... between 2018 and 2019", "... as a percentage"). A 270M model cannot do the
arithmetic and barely reads a table; rules can, and show their work:

1. the operation comes from the question's wording, the years from the years it names;
2. the row is the table line (cells separated by " | ", as the parsers write tables) whose label
   holds most of the question's remaining words;
3. its columns are named by the nearest earlier line of the same passage that lists years, and
   the row must have exactly one number per year;
4. the result is computed and returned with the row and header sentences as its quotes.
Whenever a step is not certain, nothing is returned and the answer falls back to span choice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa.ask.focus import Sentence
from longqa.ask.settings import ANSWER
from longqa.retrieve.terms import content_terms

_YEAR = re.compile(r"(?<![\d.,$])(?:19|20)\d\d(?![\d,]|\.\d)")
_NUMBER = re.compile(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?")
_PERCENT_CHANGE = re.compile(r"percentage change|change\b.*\bas a percentage|percent(?:age)? (?:increase|decrease|"
                             r"change|growth)|growth rate|by what percent", re.I)
_MEAN = re.compile(r"\b(?:average|mean)\b", re.I)
_CHANGE = re.compile(r"\b(?:change|difference|increase|decrease|decline|growth)\b", re.I)
_SUM = re.compile(r"\b(?:total|sum|summed|altogether|combined|in all)\b", re.I)
_RESPECTIVELY = re.compile(r"\brespectively\b", re.I)
# Words that name the operation or the period, not the row.
_NOT_LABEL = {"average", "mean", "change", "difference", "increase", "decrease", "decline", "growth", "total",
              "sum", "summed", "altogether", "combined", "percentage", "percent", "value", "amount", "respectively",
              "year", "years", "ended", "fiscal", "december", "between", "both", "fy", "million", "millions",
              "thousand", "thousands", "billion", "billions", "dollars", "rate"}
MIN_LABEL_MATCH = ANSWER.min_label_match  # tunables: ask/settings.py AnswerSettings
HEADER_LOOKBACK = ANSWER.header_lookback


@dataclass
class Computed:
    text: str  # the answer, e.g. "857.5" or "17,520; 17,332"
    operation: str  # lookup | list | sum | mean | change | percent_change
    row: Sentence
    header: Sentence
    cells: list[tuple[str, str]]  # (year, cell text) the answer used


def operation(question: str) -> str | None:
    years = question_years(question)
    if _PERCENT_CHANGE.search(question) and len(years) >= 2:
        return "percent_change"
    if _MEAN.search(question) and len(years) >= 2:
        return "mean"
    if _CHANGE.search(question) and len(years) >= 2:
        return "change"
    if _RESPECTIVELY.search(question) and len(years) >= 2:
        return "list"
    if _SUM.search(question) and len(years) >= 2:
        return "sum"
    if len(years) == 1 and not _CHANGE.search(question):
        return "lookup"
    return None


def question_years(question: str) -> list[str]:
    return list(dict.fromkeys(_YEAR.findall(question)))


def compute(question: str, sentences: list[Sentence]) -> Computed | None:
    """The answer computed from one table row of `sentences` (context order), or None."""
    op = operation(question)
    if op is None:
        return None
    years = question_years(question)
    wanted = [t for t in content_terms(question) if t not in _NOT_LABEL and not _YEAR.fullmatch(t)]
    if not wanted:
        return None
    best: tuple[tuple[float, int], int] | None = None
    for index, sentence in enumerate(sentences):
        if " | " not in sentence.text:
            continue
        label, _ = _split_row(sentence.text)
        words = content_terms(label)
        share = sum(1 for t in wanted if t in words) / len(wanted)
        key = (share, -len(words))  # ties: the label with the fewest other words
        if share >= MIN_LABEL_MATCH and (best is None or key > best[0]):
            best = (key, index)
    if best is None:
        return None
    row = sentences[best[1]]
    header = _header(sentences, best[1])
    if header is None:
        return None
    columns = _YEAR.findall(header.text)
    _, cells = _split_row(row.text)
    if len(cells) != len(columns) or not all(y in columns for y in years):
        return None
    by_year = dict(zip(columns, cells))
    used = [(y, by_year[y]) for y in years]
    values = [_value(cell) for _, cell in used]
    if any(v is None for v in values):
        return None
    if op == "lookup":
        text = used[0][1].strip()
    elif op == "list":
        text = "; ".join(cell.strip() for _, cell in used)
    elif op == "sum":
        text = _format(sum(values))
    elif op == "mean":
        text = _format(sum(values) / len(values))
    else:
        ordered = sorted(zip(years, values))
        old, new = ordered[0][1], ordered[-1][1]
        if op == "change":
            text = _format(new - old)
        elif old == 0:
            return None
        else:
            text = _format((new - old) / abs(old) * 100) + "%"
    return Computed(text, op, row, header, used)


def _split_row(text: str) -> tuple[str, list[str]]:
    """A table row's label (its first cell) and the numbers of its other cells, in order."""
    if " | " not in text:
        return text, []
    label, rest = text.split(" | ", 1)
    return label, [m.group() for m in _NUMBER.finditer(rest) if re.search(r"\d", m.group())]


def _header(sentences: list[Sentence], row_index: int) -> Sentence | None:
    """The nearest earlier line of the same passage that names two or more years (and is not
    itself a row of figures)."""
    row = sentences[row_index]
    for sentence in reversed(sentences[max(0, row_index - HEADER_LOOKBACK):row_index]):
        if sentence.passage is not row.passage:
            break
        years = _YEAR.findall(sentence.text)
        if len(years) >= 2 and len(years) >= len(_NUMBER.findall(sentence.text)) - 1:
            return sentence
    return None


def _value(cell: str) -> float | None:
    text = cell.strip()
    negative = text.startswith("(") and text.endswith(")") or text.lstrip("($ ").startswith("-")
    digits = re.sub(r"[^\d.]", "", text)
    if not digits or digits.count(".") > 1:
        return None
    value = float(digits)
    return -value if negative else value


def _format(value: float) -> str:
    if abs(value - round(value)) < 1e-9:
        return f"{int(round(value)):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")
