"""Plain text: paragraphs split on blank lines, pages split on form feeds (a text that is a web page
saved with its HTML tags is read by its tags instead: dispatch.py sends it to tagged.py).

A hard-wrapped text (a licence or a README filled to 72 columns) is read as its author wrote it: a
line that ends only because the next word would not have fitted joins the next line, so a
paragraph is one line and sentences never end at a wrapped break. A line that starts a list item
or a numbered heading after a finished sentence, and a line after a short numbered one, open a new
paragraph, unless the numbered line runs on into a lower-case one (a defined term and its
definition); table rows and lines that stop short keep their line breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from longqa.parse.blocks import Block, ParsedDocument
from longqa.parse.doc_title import name_line

_BLANK_LINES = re.compile(r"\n[ \t]*\n")
# "- item", "• item", "(a) term", "b) term", "iv) term", "3. Title", "3) step", "2.1 Scope"
MARKER = re.compile(
    r"^\s*(?:[-*+•●▪◦‣]\s|\(?(?:\d{1,3}|[a-zA-Z]|[ivxlc]{1,5})[.)]\s|\(\w{1,5}\)\s|\d{1,2}(?:\.\d{1,2})+\.?\s)"
)
# A table row: cells parted by bars or by runs of three or more spaces inside the line.
_TABLE_ROW = re.compile(r"\|.*\||\S {3,}\S|^\s*\+[-=+]{3,}")
# A rule drawn under a title or between parts ("-----", "=====", "* * *"): a boundary, not text.
_RULE = re.compile(r"^\s*([-=_*~#+]\s*){3,}$")
# A line of a boxed notice ("*  6. Disclaimer of Warranty    *"): its text is the line's inside.
_FRAMED = re.compile(r"^[ \t]*\*(?=[ \t])(.*?)[ \t]\*[ \t]*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"[.!?:;][\"'”’)\]]*$")
# A line that ends a sentence or a clause ("lead us,"): a verse's line or a paragraph's end, no term.
_CLAUSE_END = re.compile(r"[.!?:;,][\"'”’)\]]*$")
_WORD = re.compile(r"[^\W\d_]+")
_HYPHENATED = re.compile(r"([^\W\d_]+)-$")

# A text is hard-wrapped when its long lines stop at about one width: the width (the 95th
# percentile of line lengths) is at most MAX_WRAP, and at least WRAP_SHARE of its lines come
# within WRAP_SLACK characters of it. Text written a paragraph per line is never rejoined.
MAX_WRAP = 120
MIN_WRAP = 30
WRAP_SHARE = 0.3
WRAP_SLACK = 12
MIN_WRAP_LINES = 5
LONG_LINE = 0.6  # share of the width from which a line that stops mid-sentence was wrapped
# A title set in the middle of a fixed-width text ("GNU GENERAL PUBLIC LICENSE", "Preamble"): a
# part of at most MAX_CENTRED lines, each indented at least MIN_CENTRE_INDENT, its middle within
# CENTRE_SLACK of the width's and its right margin at least half its left one.
MAX_CENTRED = 3
MIN_CENTRE_INDENT = 10
CENTRE_SLACK = 0.1
UNDERLINE = 0.8  # a rule at least this share of the line above's length underlines it


@dataclass
class Wrap:
    """How a text was wrapped: its width in characters (0: not hard-wrapped) and its words, which
    decide whether a hyphen at a line end split a word ("docu-" "ment") or joins two ("well-known")."""

    width: int = 0
    words: frozenset[str] = frozenset()

    @classmethod
    def of(cls, text: str) -> "Wrap":
        lengths = sorted(len(line.rstrip().expandtabs()) for line in text.split("\n") if line.strip())
        if len(lengths) < MIN_WRAP_LINES:
            return cls()
        width = lengths[int(0.95 * (len(lengths) - 1))]
        near = sum(1 for length in lengths if length >= width - WRAP_SLACK)
        if not MIN_WRAP <= width <= MAX_WRAP or near < WRAP_SHARE * len(lengths):
            return cls()
        return cls(width, frozenset(word.lower() for word in _WORD.findall(text)))

    def overflows(self, line: str, following: str) -> bool:
        """Whether `following`'s first word would not have fitted on `line`."""
        first = following.split(maxsplit=1)[0] if following.strip() else ""
        return len(line.rstrip().expandtabs()) + 1 + len(first) > self.width

    def wrapped(self, line: str, following: str, prose: bool = False) -> bool:
        """Whether `line` was cut by the wrapping: the next word would not have fitted, a word was
        hyphenated, or a line of most of the width stops mid-sentence (texts wrapped by hand stop
        early at times: "... recipients of the Work or" / "Derivative Works"). A comma, colon or
        semicolon counts as mid-sentence only before a lower-case word: verse ends its lines with
        commas. In `prose` (a paragraph already rejoined once) a comma also runs on before a capital
        ('on an "AS IS" BASIS,' / "WITHOUT WARRANTIES ...")."""
        if self.overflows(line, following):
            return True
        first = following.lstrip()[:1]
        if _HYPHENATED.search(line.rstrip()) and first.islower():
            return True
        end = line.rstrip()[-1:]
        long = len(line.rstrip().expandtabs()) >= LONG_LINE * self.width
        return long and end not in ".!?" and (end not in ",:;" or first.islower() or prose and end == ",")

    def centred(self, line: str) -> bool:
        """Whether `line` is set in the middle of the width, like a title."""
        expanded = line.rstrip().expandtabs()
        indent = len(expanded) - len(expanded.lstrip())
        middle = indent + (len(expanded) - indent) / 2
        return bool(self.width) and indent >= MIN_CENTRE_INDENT and self.width - len(expanded) >= indent / 2 and abs(
            middle - self.width / 2) <= CENTRE_SLACK * self.width

    def join(self, line: str, following: str) -> str:
        """`line` and `following` as one line; a hyphen at the break is dropped only where the whole
        word is found elsewhere in the text."""
        line, following = line.rstrip(), following.strip()
        hyphen = _HYPHENATED.search(line)
        if hyphen and following[:1].islower():
            rest = _WORD.match(following)
            if rest and (hyphen.group(1) + rest.group()).lower() in self.words:
                return line[:-1] + following
            return line + following
        return f"{line} {following}"


def paragraphs(text: str, wrap: Wrap | None = None) -> list[str]:
    """Blank-line separated paragraphs, whitespace-trimmed, empty ones dropped; in a hard-wrapped
    text (`wrap`), wrapped lines rejoined (see the module's docstring).

    Text with no blank lines at all (one paragraph per line) is split on single newlines instead.
    """
    return [paragraph for paragraph, _ in marked_paragraphs(text, wrap, layout=False)]


def marked_paragraphs(text: str, wrap: Wrap | None = None, layout: bool = True) -> list[tuple[str, int | None]]:
    """The paragraphs, each with the heading level its layout marks in a hard-wrapped text: 1 for
    a centred part or a line underlined with "=", 2 for one underlined with "-"; else None. Only
    with `layout` (plain text, not markdown, where an indented line is code) are centred parts kept
    apart and a sentence run on into a line shown on its own."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if wrap and wrap.width:
        text = _FRAMED.sub(r"\1", text)
    parts = _BLANK_LINES.split(text)
    if len(parts) == 1 and text.count("\n") > 3 and not (wrap and wrap.width):
        parts = text.split("\n")
    if not (wrap and wrap.width):
        return [(part.strip(), None) for part in parts if part.strip()]
    marked: list[tuple[str, int | None]] = []
    last_part = ""
    for part in parts:
        lines = [line for line in part.split("\n") if line.strip()]
        if not lines:
            continue
        if layout and len(lines) <= MAX_CENTRED and all(wrap.centred(line) for line in lines):
            marked.append(("\n".join(line.strip() for line in lines), 1))
        elif layout and marked and _displayed(last_part, lines) and marked[-1][1] is None:
            marked[-1] = (f"{marked[-1][0]} {lines[0].strip()}", None)
        else:
            marked += unwrap(part, wrap)
        last_part = part
    return [(paragraph.strip(), mark) for paragraph, mark in marked if paragraph.strip()]


def _displayed(before: str, lines: list[str]) -> bool:
    """Whether `lines` is one word set off on a line of its own, indented deeper than `before`, which
    stops mid-sentence to lead into it ("You may obtain a copy of the License at" / an address)."""
    last = before.rstrip().split("\n")[-1] if before.strip() else ""
    indent = len(last.expandtabs()) - len(last.expandtabs().lstrip())
    shown = lines[0].expandtabs()
    return len(lines) == 1 and len(shown.split()) == 1 and len(shown) - len(shown.lstrip()) > indent and bool(
        re.search(r"\b[a-z]+$", last))


def unwrap(part: str, wrap: Wrap) -> list[tuple[str, int | None]]:
    """The paragraphs of one blank-line separated part of a hard-wrapped text, with the level of a
    line underlined by a rule ("Exhibit A" over "--------")."""
    kept: list[list[str]] = []  # each paragraph as the lines it keeps apart
    marks: dict[int, int] = {}  # paragraph → heading level of its underline
    last = ""  # the previous line as written (a joined line's length is not its own)
    terms: set[int] = set()  # columns of the paragraph's lines that have deeper lines under them
    prose = False  # the line being built already joins a wrapped line: it is prose, not verse
    for line in part.split("\n"):
        if not line.strip():
            continue
        if _RULE.match(line):
            if last and kept[-1] == [last] and len(line.strip()) >= UNDERLINE * len(last.strip()):
                marks[len(kept) - 1] = 1 if line.strip()[0] == "=" else 2
            last = ""
            continue
        item = bool(kept and last) and _next_item(terms, last, line)
        joins = bool(kept and last) and not item and _joins(last, line, wrap, prose)
        if not kept or not last or item or _opens(last, line) and not joins:
            kept.append([line])
            terms = set()
            prose = False
        elif joins:
            kept[-1][-1] = wrap.join(kept[-1][-1], line)
            prose = True
        else:
            kept[-1].append(line)
            prose = False
        if kept[-1][0] is not line and _indent(line) > _indent(last) and not _CLAUSE_END.search(last.rstrip()):
            terms.add(_indent(last))  # a term (or an item's first line) with its description under it
        last = line
    return [("\n".join(lines), marks.get(number)) for number, lines in enumerate(kept)]


def table_row(line: str) -> bool:
    """Whether `line` reads as a table row. The gap after a number or list mark is no cell break:
    "4.33.   How do I handle shell quoting?" is a numbered line, aligned as typed."""
    marker = MARKER.match(line)
    return bool(_TABLE_ROW.search(line[marker.end():] if marker else line))


def _indent(line: str) -> int:
    expanded = line.expandtabs()
    return len(expanded) - len(expanded.lstrip())


def _next_item(terms: set[int], line: str, following: str) -> bool:
    """Whether `following` opens the next item of a list set with a hanging indent (a manual
    page's options or FILES: each term at one column, its description indented below it): it
    goes back from `line` to a column that `terms` holds, one where an earlier line of the
    paragraph that ends no sentence or clause had deeper lines under it (a paragraph's last line
    under the indented first line of the next, a verse's line over its indented rhyme, is no
    term). A term never runs on into the description before it."""
    return _indent(following) < _indent(line) and _indent(following) in terms


def _joins(line: str, following: str, wrap: Wrap, prose: bool = False) -> bool:
    if table_row(line) or table_row(following):
        return False
    if _run_in(line, following):
        return True
    if MARKER.match(following):
        # A list item or numbered heading opens a paragraph unless the wrapping put it at the line
        # start mid-sentence ("... added under section" / "7.  This requirement modifies ...").
        return wrap.overflows(line, following) and not _SENTENCE_END.search(line.rstrip())
    return wrap.wrapped(line, following, prose)


def _opens(line: str, following: str) -> bool:
    """Whether an unjoined `following` opens a paragraph of its own: a list item or a numbered
    heading, or the line after a short numbered one ("1. Definitions." then its text)."""
    return bool(MARKER.match(following) or MARKER.match(line) and not _run_in(line, following)) and not (
        table_row(line) and table_row(following))


def _run_in(line: str, following: str) -> bool:
    """Whether a numbered line runs on into the next: a defined term and its definition
    ('1.3. "Licensee"' / "means the person who ...") are one sentence, so a numbered line without
    sentence punctuation before a lower-case word is not a heading of its own."""
    first = following.lstrip()[:1]
    return bool(MARKER.match(line)) and not MARKER.match(following) and first.islower() and not _SENTENCE_END.search(
        line.rstrip())


def text_document(path: Path, text: str) -> ParsedDocument:
    """The blocks of a plain text, a page per form feed."""
    wrap = Wrap.of(text)
    pages = text.split("\f")
    blocks = [
        Block(text=paragraph, page=page_no, heading=mark)
        for page_no, page_text in enumerate(pages, start=1)
        for paragraph, mark in marked_paragraphs(page_text, wrap)
    ]
    # A manual page's NAME line names it; else a title the layout marks first in the file does, as
    # a markdown file's first "#" does.
    title = name_line(blocks) or (" ".join(blocks[0].text.split()) if blocks and blocks[0].heading == 1 else path.stem)
    return ParsedDocument(path=path, title=title, pages=len(pages), blocks=blocks, format="text")
