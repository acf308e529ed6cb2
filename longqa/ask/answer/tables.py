"""Table arithmetic: an answer read from, or computed over, the cells of a table.

Financial questions ask for a cell ("the value of brand names in 2019"), several cells ("in 2018
and 2019 respectively") or a small computation over them ("the average ... for 2018 and 2019",
"the change ... between 2018 and 2019", "... as a percentage", "the difference between A and B in
2019", "what percentage of total X were Y"). A 270M model cannot do the arithmetic and barely reads
a table; rules can, and show their work:

1. the operation and the years are read from the question's wording (analysis/arithmetic.py);
2. the row is the table line (cells separated by " | ", as the parsers write tables) whose label
   holds most of the question's remaining words, and every remaining word must stand in the label
   or in the prose of the row's passage (its caption, section, document title); among equally good
   labels the passage that retrieval ranked best wins (several filings have an "Audit fees" row);
3. its columns are named by the nearest earlier line of the same table that lists years; the row
   must give one figure per year, or one figure per year followed by extra columns that the
   header names after its years ("2019 | 2018 | Change"), or the same group of cells per year
   ("$ | %": the amount, or the percentage where the question asks for one);
4. a difference between two rows, or a share of a total, takes both rows from the same table;
5. the result is computed and returned with the header and row sentences as its quotes;
6. no such row: a prose sentence listing the years and as many figures "respectively" ("$1.2
   million, $1.5 million and $1.9 million for the years ended June 30, 2021, 2020 and 2019,
   respectively") is read like a row;
7. a lookup in a table with one block of rows per person and the years in the rows ("A. Jones
   | 2019 | 410,000 | —", then "2018 | 385,500 | —") reads the named block's row for the year
   when it holds a single figure and the table's heading lines say most of the question's words.
Whenever a step is not certain, nothing is returned and the answer falls back to span choice: a
wrong computed answer is worse than none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from longqa.ask.analysis.arithmetic import NOT_LABEL, RESPECTIVELY, YEAR, Arithmetic
from longqa.ask.answer.focus import Sentence
from longqa.ask.settings import in_effect
from longqa.text.figures import FIGURE, Cell, figure_value, format_figure, row_cells
from longqa.text.words import content_terms

# What may stand between two years of a header: separators and the words of a period
_PERIOD_WORDS = re.compile(r"(?:[\s|,]|fiscal|fy|years?|ended|as of|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                           r"[a-z]*\.?|\d{1,2}\b)*", re.I)
PROSE_WORDS = 8  # a line without cells and longer than this is prose: the table has ended


@dataclass
class Computed:
    text: str  # the answer, e.g. "857.5" or "17,520; 17,332"
    operation: str  # lookup | list | sum | mean | change | percent_change | difference | share
    row: Sentence
    header: Sentence
    cells: list[tuple[str, str]]  # (year or row label, cell text) the answer used
    rows: list[Sentence] = field(default_factory=list)  # every row used (two for difference, share)

    @property
    def sources(self) -> list[Sentence]:
        """The sentences that prove the answer: the header, then the rows, in table order."""
        rows = sorted(self.rows or [self.row], key=lambda s: s.order)
        return [self.header] + [row for row in rows if row is not self.header]  # one prose sentence: itself


@dataclass
class _Row:
    index: int  # into the sentence list
    sentence: Sentence
    label: str
    terms: set[str]  # the label's content words (figures left out)
    cells: list[Cell] | None  # None when a cell holds words: not a row of figures


def compute(asked: Arithmetic | None, sentences: list[Sentence]) -> Computed | None:
    """The answer to the question's table operation (analysis/arithmetic.py) computed from the
    table rows of `sentences` (context order), or None."""
    if asked is None:
        return None
    op, years = asked.operation, list(asked.years)
    rows = [_row(i, s) for i, s in enumerate(sentences) if " | " in s.text]
    if asked.rows is not None:  # a difference or a share of two rows
        first, second = asked.rows
        return _two_rows(op, sentences, rows, list(first), list(second), years[0])
    wanted = list(asked.row)
    if not wanted:
        return None
    for row in _ranked(rows, wanted, sentences, need_context=True):
        read = _read(sentences, row, years, want_percent=op in ("lookup", "list") and asked.percent)
        if read is None:
            continue
        header, by_year = read
        used = [(y, by_year[y]) for y in years]
        return _result(op, used, years, row, header)
    if op == "lookup":
        found = _by_name_and_year(sentences, rows, years[0], wanted)
        if found is not None:
            return found
    return _stated_respectively(sentences, op, years, wanted)


def _by_name_and_year(sentences: list[Sentence], rows: list[_Row], year: str, wanted: list[str]) -> Computed | None:
    """A table with one block of rows per person and the year in the rows ("A. Jones | 2019 |
    410,000 | —", then "2018 | 385,500 | —"): the row of the block whose label the question names
    in full, for the asked year, when it holds exactly one figure besides the year. The question's
    other words must mostly stand in the lines without cells above it (its column headings)."""
    for position, row in enumerate(rows):
        if not row.terms or not row.terms <= set(wanted) or not row.cells:
            continue
        block = [row] + list(_year_rows(rows[position + 1:]))
        # the named row is for the year in its first cell, the rows after it for the year they are labelled
        hit = next((r for r in block if (r.cells[0].text.strip() if r is row else r.label.strip()) == year), None)
        if hit is None:
            continue
        figures = [c for c in (hit.cells[1:] if hit is row else hit.cells) if c.value is not None]
        if len(figures) != 1:
            continue
        rest = [t for t in wanted if t not in row.terms]
        headings = _heading_terms(sentences, row.index)
        if rest and sum(t in headings for t in rest) / len(rest) < in_effect().answer.min_label_match:
            continue
        return Computed(figures[0].text, "lookup", hit.sentence, row.sentence, [(year, figures[0].text)],
                        rows=[row.sentence, hit.sentence])
    return None


def _heading_terms(sentences: list[Sentence], row_index: int) -> set[str]:
    """Content words of the table's own heading lines above a row: the short lines without cells
    between it and the prose above the table, in the same document and within in_effect().answer.header_lookback
    sentences (the parser may have left them in the paragraph before the row's)."""
    row = sentences[row_index]
    lines = []
    for sentence in reversed(sentences[max(0, row_index - in_effect().answer.header_lookback):row_index]):
        if sentence.passage.doc_id != row.passage.doc_id:
            break
        if " | " in sentence.text:
            continue
        if len(sentence.text.split()) > PROSE_WORDS:
            break  # prose: the table starts below it
        lines.append(sentence.text)
    return set(content_terms(" ".join(lines)))


def _year_rows(rows: list[_Row]):
    """The rows right after a named row whose label is a year: the rest of its block."""
    for row in rows:
        if not YEAR.fullmatch(row.label.strip()) or not row.cells:
            return
        yield row


# Prose that gives one figure per year "respectively": "At December 31, 2021 and 2020, the company
# held $45,000 and $90,000, respectively"; "maintenance cost $1.2 million, $1.5 million and $1.9
# million for the years ended June 30, 2021, 2020 and 2019, respectively".
# A stated figure: "$45,000", "$1.2 million", "12%", "4 million", "1,008", "3.5"; never a bare year.
_STATED_FIGURE = (r"\$\s?\d(?:[\d,]*\d)?(?:\.\d+)?(?:\s(?:million|billion|thousand))?"
                  r"|\d(?:[\d,]*\d)?(?:\.\d+)?(?:%|\s(?:million|billion|thousand)\b)"
                  r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+")
_SEPARATOR = r",?\s+and\s+|,\s*"
_STATED = re.compile(rf"(?:{_STATED_FIGURE})(?:(?:{_SEPARATOR})(?:{_STATED_FIGURE}))+")
_STATED_ONE = re.compile(_STATED_FIGURE)
_STATEDYEARS = re.compile(rf"(?:19|20)\d\d(?:(?:{_SEPARATOR})(?:19|20)\d\d)+")
_UNIT = re.compile(r"^(\$?)\s?[\d,.]+(%|\s(?:million|billion|thousand))?$")


def _stated_respectively(sentences: list[Sentence], op: str, years: list[str], wanted: list[str]) -> Computed | None:
    """The answer read from a prose sentence that gives one figure per year "respectively": the
    sentence lists the years and as many figures, says every word that names the row, and holds
    every year the question needs; a lookup, a list in the question's year order, or a sum, mean
    or change over those figures (`_result`'s operations)."""
    for sentence in sentences:
        text = sentence.text
        if not RESPECTIVELY.search(text) or not set(wanted) <= set(content_terms(text)):
            continue
        year_runs = list(_STATEDYEARS.finditer(text))
        figure_runs = [m for m in _STATED.finditer(text)
                       if not any(m.start() < y.end() and y.start() < m.end() for y in year_runs)]
        if len(year_runs) != 1 or len(figure_runs) != 1:
            continue  # two lists of years or of figures: which goes with which is not certain
        order = YEAR.findall(year_runs[0].group())
        figures = [f.group().strip() for f in _STATED_ONE.finditer(figure_runs[0].group())]
        if len(order) != len(figures) or len(set(order)) != len(order) or not set(years) <= set(order):
            continue
        by_year = dict(zip(order, figures))
        units = {unit.groups() if unit else None for unit in map(_UNIT.match, figures)}
        if None in units or len(units) != 1:
            continue  # figures in different units cannot be added
        prefix, suffix = units.pop()
        used = [(y, Cell(by_year[y], figure_value(by_year[y]), suffix == "%")) for y in years]
        computed = _result(op, used, years, _Row(0, sentence, "", set(), None), sentence)
        if computed is None:
            return None
        if op in ("sum", "mean", "change"):  # in the unit the sentence states: "$6.5 million"
            sign, figure = ("-", computed.text[1:]) if computed.text.startswith("-") else ("", computed.text)
            computed.text = f"{sign}{prefix}{figure}{suffix or ''}"
        return computed
    return None


def _result(op: str, used: list[tuple[str, Cell]], years: list[str], row: _Row, header: Sentence) -> Computed | None:
    values = [cell.value for _, cell in used]
    if any(v is None for v in values):
        return None  # an empty cell: nothing to read or add
    if op == "lookup":
        text = used[0][1].text
    elif op == "list":
        text = "; ".join(cell.text for _, cell in used)
    elif op == "sum":
        text = format_figure(sum(values))
    elif op == "mean":
        text = format_figure(sum(values) / len(values))
    else:
        ordered = sorted(zip(years, values))
        old, new = ordered[0][1], ordered[-1][1]
        if op == "change":
            text = format_figure(new - old)
        elif old == 0:
            return None
        else:
            text = format_figure((new - old) / abs(old) * 100) + "%"
    return Computed(text, op, row.sentence, header, [(y, cell.text) for y, cell in used])


def _two_rows(op: str, sentences: list[Sentence], rows: list[_Row], a_terms: list[str], b_terms: list[str],
              year: str) -> Computed | None:
    """A difference (first - second) or a share (first / second, as a percentage) of two rows of
    one table, in the column of `year`. Each row's words must name it, all of them."""
    if not a_terms or not b_terms or set(a_terms) == set(b_terms):
        return None
    for a in _ranked(rows, a_terms, sentences, need_context=False, full=True):
        read_a = _read(sentences, a, [year], want_percent=False)
        if read_a is None:
            continue
        header, cells_a = read_a
        partners = [r for r in _ranked(rows, b_terms, sentences, need_context=False, full=True)
                    if r.sentence.passage is a.sentence.passage and r.index != a.index]
        for b in partners:
            read_b = _read(sentences, b, [year], want_percent=False)
            if read_b is None or read_b[0] is not header:
                continue
            x, y = cells_a[year].value, read_b[1][year].value
            if x is None or y is None:
                return None
            if op == "difference":
                text = format_figure(x - y)
            elif y == 0:
                return None
            else:
                text = format_figure(x / y * 100) + "%"
            return Computed(text, op, a.sentence, header, [(a.label.strip(), cells_a[year].text),
                                                          (b.label.strip(), read_b[1][year].text)],
                            rows=[a.sentence, b.sentence])
    return None


def _row(index: int, sentence: Sentence) -> _Row:
    label, rest = sentence.text.split(" | ", 1)
    terms = {t for t in content_terms(label) if not any(ch.isdigit() for ch in t)}
    return _Row(index, sentence, label, terms, row_cells(rest))


def _ranked(rows: list[_Row], wanted: list[str], sentences: list[Sentence], need_context: bool,
            full: bool = False) -> list[_Row]:
    """Rows whose label holds at least in_effect().answer.min_label_match of `wanted` (all of it with `full`), the
    best first; only the rows as good as the best one (same share, same number of other words)
    are kept, in the order retrieval ranked their passages. With `need_context`, words that the
    table's caption states ("Net sales of products by category ...") need not stand in the label
    (the row is then "Cheese"), and a wanted word missing from the label must stand in the prose
    of the row's passage."""
    scored = []
    prose: dict[int, set[str]] = {}
    for row in rows:
        if row.cells is None or not row.cells:
            continue
        own = wanted
        if need_context:
            caption = _caption_terms(sentences, row.index)
            own = [t for t in wanted if t not in caption] or wanted
        share = sum(1 for t in own if t in row.terms) / len(own)
        if share < (1.0 if full else in_effect().answer.min_label_match):
            continue
        if need_context and any(t not in row.terms for t in wanted):
            key = id(row.sentence.passage)
            if key not in prose:
                prose[key] = _prose_terms(row.sentence, sentences)
            if any(t not in row.terms and t not in prose[key] for t in wanted):
                continue
        extra = len(row.terms - set(wanted))
        scored.append(((share, -extra), (row.sentence.passage.score, row.sentence.score), row))
    if not scored:
        return []
    best = max(quality for quality, _, _ in scored)
    tied = [(rank, row) for quality, rank, row in scored if quality == best]
    return [row for _, row in sorted(tied, key=lambda t: (-t[0][0], -t[0][1], t[1].index))]


def _prose_terms(row: Sentence, sentences: list[Sentence]) -> set[str]:
    """Content words of the lines of `row`'s passage that are not table rows, and of its titles."""
    passage = row.passage
    text = " ".join([passage.doc, passage.section] + [s.text for s in sentences
                                                      if s.passage is passage and " | " not in s.text])
    return set(content_terms(text))


def _caption_terms(sentences: list[Sentence], row_index: int) -> set[str]:
    """Content words of the prose line right above the row's table (above its year header)."""
    found = _header(sentences, row_index)
    if found is None:
        return set()
    at = found[0].order
    passage = sentences[row_index].passage
    for sentence in reversed(sentences[max(0, row_index - in_effect().answer.header_lookback):row_index]):
        if sentence.order >= at or " | " in sentence.text:
            continue
        if sentence.passage is not passage:
            break
        return {t for t in content_terms(sentence.text) if t not in NOT_LABEL}
    return set()


def _read(sentences: list[Sentence], row: _Row, years: list[str],
          want_percent: bool) -> tuple[Sentence, dict[str, Cell]] | None:
    """The row's cell for each of `years`, under its table's year header; None unless certain."""
    found = _header(sentences, row.index)
    if found is None:
        return None
    header, columns, trailing = found
    if len(set(columns)) != len(columns) or not all(y in columns for y in years):
        return None
    cells, n = row.cells, len(columns)
    if len(cells) == n:
        chosen = cells
    elif len(cells) > n and trailing:  # "2019 | 2018 | Change": the years' figures come first
        chosen = cells[:n]
    elif len(cells) % n == 0:  # "2019 | 2018" over "$ | % | $ | %": one group of cells per year
        chosen = _from_groups(cells, n, want_percent)
        if chosen is None:
            return None
    else:
        return None
    if any(c.percent for c in chosen) and not all(c.percent for c in chosen):
        return None
    return header, dict(zip(columns, chosen))


def _from_groups(cells: list[Cell], n: int, want_percent: bool) -> list[Cell] | None:
    """From n equal groups, the one amount of each group (or its one percentage, when asked for);
    None unless every group has the same shape: one amount, the rest percentages."""
    size = len(cells) // n
    groups = [cells[i * size:(i + 1) * size] for i in range(n)]
    shape = [c.percent for c in groups[0]]
    if shape.count(False) != 1 or any([c.percent for c in g] != shape for g in groups):
        return None
    if want_percent:
        if shape.count(True) != 1:
            return None
        return [g[shape.index(True)] for g in groups]
    return [g[shape.index(False)] for g in groups]


def _header(sentences: list[Sentence], row_index: int) -> tuple[Sentence, list[str], bool] | None:
    """The table's year header above the row: (sentence, its years in order, whether it names
    columns after its years). Searched backwards through the rows of figures of the same passage;
    a line of cells without figures right below the header is a sub-header ("$ | %"); any other
    such line, or prose, means the row's table has no year header."""
    row = sentences[row_index]
    lines = sentences[max(0, row_index - in_effect().answer.header_lookback):row_index]
    for position in range(len(lines) - 1, -1, -1):
        sentence = lines[position]
        if sentence.passage is not row.passage:
            return None
        text = sentence.text
        if _is_year_header(text):
            marks = list(YEAR.finditer(text))
            between = [text[a.end():b.start()] for a, b in zip(marks, marks[1:])]
            if any(not _PERIOD_WORDS.fullmatch(gap) for gap in between):
                return None  # "2019 | % of total | 2018": columns between the years, not one per year
            return sentence, [m.group() for m in marks], bool(re.search(r"[^\s|]", text[marks[-1].end():]))
        if " | " not in text:
            if len(text.split()) > PROSE_WORDS:
                return None  # prose: the table ended above
            continue  # a group label inside the table: "Loans and securities backed by:"
        if not re.search(r"\d", text.split(" | ", 1)[1]):  # cells without figures: a header of its own
            above = lines[position - 1].text if position > 0 else ""
            if position > 0 and lines[position - 1].passage is row.passage and _is_year_header(above):
                continue  # a sub-header under the year header
            return None
    return None


def _is_year_header(text: str) -> bool:
    years = YEAR.findall(text)
    return len(years) >= 2 and len(years) >= len(FIGURE.findall(text)) - 1
