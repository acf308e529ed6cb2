"""The outline markup a model writes for an unstructured document, its grammar, its parser, and the
mapping of its anchors back onto the document text.

One syntax, enforced by the grammar (LongRefiner's tags, without its spelling variants):

    <section: Honey bees>
    Honey bees live in <skip> others bring home.
    <br>
    Foraging bees collect nectar <skip> back to the hive.
    <subsection: Beekeeping>
    Beekeepers manage colonies in <skip> calm, healthy and productive.
    </subsection>
    </section>

Each line between tags is one paragraph written as its first k words, `<skip>`, its last k words
(a paragraph of at most 2k words is written whole). `<br>` separates paragraphs of one part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SKIP, BREAK = "<skip>", "<br>"
TITLE_CHARS = 48
_TAG = re.compile(r"<(/?)(section|subsection)(?::\s*([^<>\n]*))?>|<br>")
_NORM = re.compile(r"[\W_]+")
_WORD = re.compile(r"\S+")


class MarkupError(ValueError):
    """The model's output is not well-formed markup."""


# -- writing ------------------------------------------------------------------------------------


def markup_words(text: str) -> list[str]:
    """The words of `text` as markup may quote them (angle brackets would read as tags)."""
    return [w.replace("<", "(").replace(">", ")") for w in text.split()]


def anchor(text: str, k: int) -> str:
    """First k words, <skip>, last k words; the whole paragraph when it has at most 2k words.

    Each side is widened until it holds a word that survives normalisation (a side made only of
    dashes or bullets could not be found again)."""
    words = markup_words(text)
    head = _side(words, k)
    tail = len(words) - _side(words[::-1], k)
    if head >= tail:
        return " ".join(words)
    return f"{' '.join(words[:head])} {SKIP} {' '.join(words[tail:])}"


def _side(words: list[str], k: int) -> int:
    """How many leading words make an anchor side of at least k words with one matchable word."""
    count = min(k, len(words))
    while count < len(words) and not any(normalise(w) for w in words[:count]):
        count += 1
    return count


def clean_title(title: str) -> str:
    """A title fit for a tag: one line, no angle brackets, at most TITLE_CHARS characters."""
    title = " ".join(re.sub(r"[<>]", " ", title).split())
    if len(title) > TITLE_CHARS:  # cut at a word boundary when there is one
        cut = title[: TITLE_CHARS + 1].rfind(" ")
        title = title[: cut if cut > TITLE_CHARS // 2 else TITLE_CHARS]
    return title.rstrip() or "Untitled"


@dataclass
class Part:
    """A section (level 1) or subsection (level 2) and the paragraph anchors written under it."""

    level: int
    title: str
    entries: list[str] = field(default_factory=list)


def render(parts: list[Part]) -> str:
    """Markup text for `parts` (what the grammar accepts; subsections nest in the section before)."""
    lines: list[str] = []
    open_sub = False
    for index, part in enumerate(parts):
        if part.level == 1:
            if open_sub:
                lines.append("</subsection>")
            if index:
                lines.append("</section>")
            lines.append(f"<section: {clean_title(part.title)}>")
            open_sub = False
        else:
            if open_sub:
                lines.append("</subsection>")
            lines.append(f"<subsection: {clean_title(part.title)}>")
            open_sub = True
        lines.append(f"\n{BREAK}\n".join(part.entries))
    if open_sub:
        lines.append("</subsection>")
    lines.append("</section>")
    return "\n".join(line for line in lines if line)


# -- grammar ------------------------------------------------------------------------------------


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def window_grammar(anchors: list[str], subsections: bool = True) -> str:
    """GBNF whose language is exactly the well-formed outlines of these paragraphs, in this order.

    The paragraph anchors are fixed text, so the only choices left to the model are where a
    section (or subsection) starts and what its title is.
    """
    if not anchors:
        raise ValueError("a window needs at least one paragraph")
    n = len(anchors)
    sec, sub = '"\\n</section>\\n<section: " title ">\\n"', '"<subsection: " title ">\\n"'
    rules = [
        'title ::= [^<>\\n ] [^<>\\n]{0,' + str(TITLE_CHARS - 1) + "}",
        'root ::= "<section: " title ">\\n" ' + ("open0" if subsections else "s0"),
    ]
    for i, text in enumerate(anchors):
        rules.append(f"s{i} ::= {_literal(text)} gs{i + 1}")
        if subsections:
            rules.append(f"open{i} ::= s{i} | {sub} u{i}")
            rules.append(f"u{i} ::= {_literal(text)} gu{i + 1}")
    for i in range(1, n):
        brk = '"\\n<br>\\n"'
        if subsections:
            rules.append(f'gs{i} ::= {brk} s{i} | {sec} open{i} | "\\n" {sub} u{i}')
            rules.append(
                f'gu{i} ::= {brk} u{i} | "\\n</subsection>\\n" {sub} u{i} '
                f'| "\\n</subsection>" {sec} open{i}'
            )
        else:
            rules.append(f"gs{i} ::= {brk} s{i} | {sec} s{i}")
    rules.append(f'gs{n} ::= "\\n</section>"')
    if subsections:
        rules.append(f'gu{n} ::= "\\n</subsection>\\n</section>"')
    return "\n".join(rules) + "\n"


# -- reading ------------------------------------------------------------------------------------


def parse(text: str) -> list[Part]:
    """Parts in document order. Raises MarkupError on unbalanced tags or text outside a section."""
    parts: list[Part] = []
    in_section = in_sub = False
    cursor = 0

    def take_entries(chunk: str) -> None:
        entries = [line.strip() for line in chunk.splitlines() if line.strip()]
        if not entries:
            return
        if not in_section:
            raise MarkupError(f"paragraph outside any section: {entries[0][:40]!r}")
        for entry in entries:
            if entry.count(SKIP) > 1:
                raise MarkupError(f"more than one {SKIP} in a paragraph: {entry[:40]!r}")
        parts[-1].entries.extend(entries)

    for match in _TAG.finditer(text):
        take_entries(text[cursor : match.start()])
        cursor = match.end()
        closing, name, title = match.group(1), match.group(2), match.group(3)
        if name is None:  # <br>: a separator; paragraphs are already one per line
            continue
        if name == "section" and not closing:
            if in_section:
                raise MarkupError("<section> opened inside an open section")
            parts.append(Part(1, (title or "").strip()))
            in_section = True
        elif name == "subsection" and not closing:
            if not in_section or in_sub:
                raise MarkupError("<subsection> outside a section or inside an open subsection")
            parts.append(Part(2, (title or "").strip()))
            in_sub = True
        elif name == "subsection":
            if not in_sub:
                raise MarkupError("</subsection> with no open subsection")
            in_sub = False
        else:
            if not in_section or in_sub:
                raise MarkupError("</section> with no open section, or before its subsection closed")
            in_section = False
    take_entries(text[cursor:])
    if in_section:
        raise MarkupError("unclosed <section> (output cut short?)")
    if not any(part.entries for part in parts):
        raise MarkupError("no paragraphs in the outline")
    return parts


# -- mapping anchors onto the text ----------------------------------------------------------------


def normalise(word: str) -> str:
    """Case, punctuation and whitespace do not count when matching anchors."""
    return _NORM.sub("", word.casefold())


@dataclass
class WordIndex:
    """The text's words (normalised, empty ones dropped) with their character spans."""

    words: list[str]
    spans: list[tuple[int, int]]

    @classmethod
    def of(cls, text: str) -> "WordIndex":
        words, spans = [], []
        for match in _WORD.finditer(text):
            norm = normalise(match.group())
            if norm:
                words.append(norm)
                spans.append(match.span())
        return cls(words, spans)

    def find(self, needle: list[str], start: int, allowed: set[int] | None = None) -> int:
        """First word position >= start where `needle` occurs (and begins at an allowed one)."""
        if not needle:
            return -1
        last = len(self.words) - len(needle)
        for i in range(start, last + 1):
            if self.words[i] == needle[0] and self.words[i : i + len(needle)] == needle:
                if allowed is None or i in allowed:
                    return i
        return -1


def entry_words(entry: str) -> tuple[list[str], list[str] | None]:
    """An entry's normalised first and last words (last is None when written whole)."""
    head, _, tail = entry.partition(SKIP)
    first = [w for w in map(normalise, head.split()) if w]
    last = [w for w in map(normalise, tail.split()) if w] if SKIP in entry else None
    return first, last


def map_entries(
    entries: list[str], index: WordIndex, starts: set[int], ends: set[int], cursor: int
) -> list[tuple[int, int]]:
    """Word ranges of the entries, searched forward from `cursor`; a range must begin at one of
    `starts` and end at one of `ends` (paragraph boundaries). Raises MarkupError when one is lost."""
    ranges = []
    for entry in entries:
        first, last = entry_words(entry)
        begin = index.find(first, cursor, starts)
        if begin < 0:
            raise MarkupError(f"anchor not found after word {cursor}: {entry[:50]!r}")
        if last is None:
            end = begin + len(first)
            if end not in ends:
                raise MarkupError(f"paragraph written whole does not end at a boundary: {entry[:50]!r}")
        else:
            tail_starts = {e - len(last) for e in ends if e - len(last) >= begin + len(first)}
            tail = index.find(last, begin + len(first), tail_starts) if last else -1
            if tail < 0:
                raise MarkupError(f"closing anchor not found: {entry[:50]!r}")
            end = tail + len(last)
        ranges.append((begin, end))
        cursor = end
    return ranges
