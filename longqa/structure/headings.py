"""Headings for markdown (the `#` marks) and plain text (numbering and short title-like lines)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from longqa.parse.blocks import ParsedDocument
from longqa.parse.doc_title import name_line
from longqa.structure.contents import LEADER_END
from longqa.structure.tree import Heading
from longqa.text import sentences

# "1. Introduction", "2.3 Methods", "Chapter 4", "PART II", "Item 7.", "Appendix A", "Section 5"
NUMBERED = re.compile(
    r"^(?:(?P<dotted>\d{1,2}(?:\.\d{1,2}){0,3})\.?|(?P<word>chapter|part|item|section|article|appendix)"
    r"\s+(?P<label>[0-9]{1,3}[A-Z]?|[IVXLC]{1,6}|[A-Z])\.?)(?=\s+\S|$)",
    re.IGNORECASE,
)
_WORD_LEVEL = {"part": 1, "chapter": 1, "article": 1, "appendix": 1, "item": 2, "section": 2}
MAX_HEADING_CHARS = 90
MAX_SKIPPED = 2
OPENING_SHARE = 0.25  # a numbered run that starts within this share of the blocks frames the document
# Untitled numbered clauses head sections when at least MIN_CLAUSES top-level numbers in sequence
# hold at least FRAME_SHARE of the text from the first to the last; their titles are cut to CLAUSE_TITLE_CHARS.
MIN_CLAUSES = 3
FRAME_SHARE = 0.5
CLAUSE_TITLE_CHARS = 60
CONTENTS_DISTINCT = 0.8  # share of a contents list's titles that differ from each other
MAX_QUESTION_CHARS = 2 * MAX_HEADING_CHARS  # a numbered question heads its answer up to this length


def markdown_headings(doc: ParsedDocument) -> list[Heading]:
    """`#` headings. A lone top-level heading first in the file is the document's title (level 0):
    it names the document node instead of opening a section."""
    headings = [
        Heading(index, block.heading, block.text)
        for index, block in enumerate(doc.blocks)
        if block.heading is not None
    ]
    highest = min((h.level for h in headings), default=1)  # once: per heading it was quadratic
    top = [h for h in headings if h.level == highest]
    if len(top) == 1 and top[0] is headings[0] and len(headings) > 1:
        headings[0] = Heading(headings[0].index, 0, headings[0].title)
    return headings


def numbering_level(text: str) -> int | None:
    """Heading level implied by a numbering prefix ("2.3" → 2, "PART II" → 1), else None."""
    match = NUMBERED.match(text.strip())
    if not match:
        return None
    if match.group("dotted"):
        return match.group("dotted").count(".") + 1
    return _WORD_LEVEL[match.group("word").lower()]


def _title_like(text: str) -> bool:
    """A short line with no sentence punctuation, mostly capitalised words."""
    if "\n" in text or len(text) > MAX_HEADING_CHARS or text.endswith((".", ",", ";", ":", "?")):
        return False
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", text)]
    if not words or len(words) > 12:
        return False
    minor = {"a", "an", "the", "of", "and", "or", "in", "on", "for", "to", "with", "by", "at", "from"}
    capitalised = sum(1 for w in words if w[0].isupper() or w.lower() in minor)
    return capitalised == len(words) and any(w[0].isupper() for w in words)


def text_headings(doc: ParsedDocument) -> list[Heading]:
    """Numbered lines get their numbering's level; other title-like lines are level 1 unless numbered
    headings exist. Then, numbering being the stronger signal, only a title the layout sets apart
    (centred or underlined: "NO WARRANTY" over a licence's last clauses) opens a section between
    the first numbered heading and the last, or before them wherever the run starts; after them,
    and before them where the run starts within OPENING_SHARE of the blocks, the titles the
    document marks otherwise do too, at the top level: lines in capitals, an appendix, exhibit or
    annex, each found once in the document ("Preamble", "TERMS AND CONDITIONS", "END OF TERMS AND
    CONDITIONS"), never a filing's exhibit label (see _FILED).
    Such a title first in the file, centred, underlined or title-like straight over another
    heading, is the document's (level 0): it names the document.

    A numbered paragraph whose number follows the last heading's in sequence ("12." after "11.",
    "4.2" after "4.1") is a heading whatever its length: a one-sentence title of any length, or a
    paragraph that opens with a short title sentence ("2. Grant of Copyright License. Subject to
    ..."), which is split off the paragraph into a block of its own (the document's blocks change).
    A run of numbered clauses without titles ("0. This License applies to any program ...") that
    frames the document heads sections too, each titled by its clause's first words (see _clauses)."""
    in_sequence, clause_titles = _split_run_in(doc, _sequence(doc))
    # A line found more than once is a running head or a caption ("Exhibit 10.38" atop each page of
    # a filing's text), not a title.
    seen = Counter(" ".join(block.text.split()).lower() for block in doc.blocks)
    numbered, titled, marked = [], [], []
    for index, block in enumerate(doc.blocks):
        text = block.text.strip()
        if not text or "\n" in text and index not in in_sequence and block.heading is None:
            continue
        level = numbering_level(text)
        if index in in_sequence or level is not None and len(text) <= MAX_HEADING_CHARS and (
            not text.endswith((".", ",", ";")) or len(text.split()) <= 8
        ):
            numbered.append(Heading(index, level, clause_titles.get(index, text)))
            continue
        if index == 0 and _FILED.match(text):
            continue
        if len(text) <= MAX_HEADING_CHARS and _title_like(text):
            titled.append(Heading(index, 1, text))
        if (block.heading is not None or _shouted(text) or _ANNEX.match(text)) and len(
                text) <= MAX_HEADING_CHARS and seen[" ".join(text.split()).lower()] == 1 and not text.startswith("["):
            marked.append(Heading(index, 1, " ".join(text.split())))
    if len(numbered) < 2:
        # Title-like lines only count when they are followed by body text, not by another title line.
        return [h for h in titled if h.index + 1 < len(doc.blocks) and not _title_like(doc.blocks[h.index + 1].text)]
    first, last = numbered[0].index, numbered[-1].index
    # Marks before the numbered run count where the run is the document's frame, starting early (a
    # licence's "Preamble"), not a licence appended to a book, whose capitals are the book's.
    opens = first <= OPENING_SHARE * len(doc.blocks)
    # A title the layout sets apart (centred or underlined) counts wherever it stands: unlike
    # capitals, it is no book's emphasis but a title ("Preamble" over clauses that follow a long
    # list of definitions, "NO WARRANTY" over a licence's last clauses).
    marked = [h for h in marked if doc.blocks[h.index].heading is not None or h.index > last
              or h.index < first and opens]
    taken = {h.index for h in marked}
    # A title-like first line straight over a heading is the document's title.
    title_line = [h for h in titled if h.index == 0 and 0 not in taken and (
        1 in taken or any(h.index == 1 for h in numbered))]
    headings = sorted(numbered + marked + title_line, key=lambda h: h.index)
    opening = headings[0]
    if opening.index == 0 and opening not in numbered and (
            doc.blocks[0].heading is not None or headings[1].index == 1):
        headings[0] = Heading(0, 0, opening.title)  # a title over no text of its own: the document's
        if name_line(doc.blocks) is None:  # a manual page's NAME line says better what it is
            doc.title = opening.title
    return headings


# "APPENDIX: How to apply ...", "Exhibit A - Source Code Form License Notice", "Annex II"
_ANNEX = re.compile(r"^(?:appendix|addendum|annex|exhibit|schedule)(?:\s*:|\s+(?:[A-Z]|[IVX]{1,4}|\d{1,2})\b)",
                    re.IGNORECASE)
# A filing's label as a document's first line ("Exhibit 10.1", "EXHIBIT 4.46  6 rue ..."): the
# number is the filing's exhibit index, so the line says where the document was filed, not what it
# is; it names neither the document nor a section. Exhibits the document itself appends come after
# its text ("EXHIBIT 1.22" after the clause 1.22 that names it) and stay sections.
_FILED = re.compile(r"^exhibit\s+\d{1,3}\.\d{1,3}\b", re.IGNORECASE)


def _shouted(text: str) -> bool:
    """A one-line title in capitals ("TERMS AND CONDITIONS"): two words or more, no lower-case letter."""
    words = re.findall(r"[^\W\d_]{2,}", text)
    return ("\n" not in text and len(text) <= MAX_HEADING_CHARS and len(words) >= 2 and text == text.upper()
            and not text.endswith((".", ",", ";", ":")))


def _sequence(doc: ParsedDocument) -> set[int]:
    """Blocks whose dotted number continues the last one taken: the next at its depth ("3" after
    "2", "2.2" after "2.1"; up to MAX_SKIPPED numbers may be missing), or the first below it ("2.1"
    after "2"); the first top number is 0 or 1. A subsection's number may jump further ahead
    ("4.3" then "4.10", a FAQ's questions renumbered over the years) where the next number goes
    on from it ("4.11", "4.10.1"). Where a contents list ran through the numbers, the text that
    follows it starts over at the first."""
    numbered: list[tuple[int, tuple[int, ...]]] = []
    for index, block in enumerate(doc.blocks):
        # A block of several lines counts when its first line is a paragraph (a list of short
        # numbered lines in one block is a list).
        match = NUMBERED.match(block.text) if len(block.text.strip().split("\n")[0]) > MAX_HEADING_CHARS or (
            "\n" not in block.text.strip()) else None
        if match and match.group("dotted"):
            numbered.append((index, tuple(int(part) for part in match.group("dotted").split("."))))
    taken: set[int] = set()
    last: tuple[int, ...] = ()
    seen: dict[tuple[int, ...], str] = {}  # numbers taken, with their titles
    for position, (index, number) in enumerate(numbered):
        if number[0] <= 1 and number != last and not any(number[1:]) and _listed(seen, number, doc.blocks[index].text):
            last = ()  # the text starts over where its contents list, which ran through these numbers, ends
        # The level where the number moves on from the last. Below it, under a parent the last
        # shares, levels open at 0 or 1 whether or not a heading titles the parent ("6.6.1" may
        # follow "6.5"); a new top-level part may be numbered as its own first subsection on a
        # heading's line of its own ("2.0 Ports" after "1.13", "1.0 General Concepts" first), but
        # "1.1" alone opens no sequence (a contract's definitions are numbered so under an
        # untitled article), nor does a clause's paragraph ("2.0 SCOPE. This Agreement ...").
        level = next((k for k, part in enumerate(number) if k >= len(last) or part != last[k]), len(number))
        deeper = number[level + 1:]
        if level == len(number) or any(part > (1 if level else 0) for part in deeper) or deeper and not level and (
                len(doc.blocks[index].text) > MAX_HEADING_CHARS or "\n" in doc.blocks[index].text.strip()):
            continue
        if level < len(last):  # a number or two may be missed (set in a box, a heading of its own)
            expected = range(last[level] + 1, last[level] + 2 + MAX_SKIPPED)
            ahead = level > 0 and number[level] > last[level] and position + 1 < len(numbered) and _goes_on(
                number, numbered[position + 1][1])
        else:
            expected, ahead = range(0, 2), False
        if number[level] in expected or ahead:
            taken.add(index)
            seen[number] = _entry_title(doc.blocks[index].text)
            last = number
    return taken if len(taken) >= 2 else set()


def _entry_title(text: str) -> str:
    """A numbered line's title as a contents list and the heading both give it: no number, no dot
    leaders or page number, case and spacing aside."""
    number = NUMBERED.match(text)
    title = LEADER_END.sub("", text[number.end() if number else 0:].split("\n")[0])
    return " ".join(title.split()).rstrip(" .").casefold()


def _listed(seen: dict[tuple[int, ...], str], number: tuple[int, ...], text: str) -> bool:
    """Whether `number` opens the text again after a contents list named it: the list gave the
    same title, and its titles are distinct (a list that repeats one line is no contents list)."""
    titles = list(seen.values())
    return seen.get(number) == _entry_title(text) != "" and len(set(titles)) >= CONTENTS_DISTINCT * len(titles)


def _goes_on(number: tuple[int, ...], following: tuple[int, ...]) -> bool:
    """Whether `following` is the number after `number` at its depth or the first below it."""
    return (following[:-1] == number[:-1] and 0 < following[-1] - number[-1] <= 1 + MAX_SKIPPED
            or following == (*number, 1))


# A short first sentence after the number: the title of a run-in heading.
_RUN_IN = re.compile(r"(?P<title>[^.!?\n]{2,%d}?[.:])\s+(?=[\"“(\[]?[A-Z0-9])" % MAX_HEADING_CHARS)


def _split_run_in(doc: ParsedDocument, numbered: set[int]) -> tuple[set[int], dict[int, str]]:
    """Split each long numbered block in `numbered` that opens with a short title sentence into the
    title and its paragraph; the indices of the numbered headings that remain, in the new blocks,
    and the titles of those that are untitled clauses (see _clauses): each such clause is split
    into its number, the heading's block, and its paragraph. A numbered question (see asked) is
    a heading whole. Any other long numbered paragraph without a title stays body text."""
    kept: set[int] = set()
    titles: dict[int, str] = {}
    clauses = _clauses(doc, numbered)
    blocks = []
    for index, block in enumerate(doc.blocks):
        text = block.text.strip()
        if index in numbered and len(text) > MAX_HEADING_CHARS and asked(text):
            kept.add(len(blocks))  # a FAQ's question, however long, is its answer's heading
        elif index in numbered and len(text) > MAX_HEADING_CHARS:
            run_in = _run_in_title(text)
            if run_in or index in clauses:
                cut = run_in.end("title") if run_in else NUMBERED.match(text).end()
                kept.add(len(blocks))
                if not run_in:
                    titles[len(blocks)] = _clause_title(text)
                blocks.append(replace(block, text=text[:cut]))
                blocks.append(replace(block, text=text[cut:].strip(), heading=None))
                continue
        elif index in numbered:
            kept.add(len(blocks))
        blocks.append(block)
    doc.blocks = blocks
    return kept, titles


def asked(text: str) -> bool:
    """Whether a numbered block is a question and nothing else ("4.21. How do I delete a block of
    text if it contains a certain word?"): at most MAX_QUESTION_CHARS, every sentence asked."""
    spans = sentences.split(text)
    return len(text) <= MAX_QUESTION_CHARS and bool(spans) and all(
        text[start:end].rstrip("\"'”’)").endswith("?") for start, end in spans)


def _run_in_title(text: str) -> re.Match | None:
    number = NUMBERED.match(text)
    return _RUN_IN.match(text, number.end() + 1) if number else None


# A clause opens a sentence after its number and a full stop: "0. This License applies ...".
_CLAUSE = re.compile(r"\d{1,2}\.\s+[\"“(]?[A-Z]")


def _clauses(doc: ParsedDocument, numbered: set[int]) -> set[int]:
    """The numbered paragraphs in `numbered` that head clauses though no title sentence opens them
    (a licence's "0. This License applies to any program ...", "1. You may copy ..."): long
    top-level paragraphs whose number and full stop open a sentence, at least MIN_CLAUSES of them,
    at least half of the top-level numbers in sequence, the blocks from the first to the last
    holding at least FRAME_SHARE of the text, so that they divide the document. A numbered list
    inside a longer text (the conditions of a renewal, the steps of a procedure) stays its text,
    as do page numbers, the text a page break cut ("4 shall secure ...") and a contents list's
    entries (dot leaders and a page number), which a body that starts its numbers over joins to
    the sequence."""
    top = sorted(index for index in numbered if "." not in NUMBERED.match(doc.blocks[index].text).group("dotted"))
    clauses = [index for index in top if len(text := doc.blocks[index].text.strip()) > MAX_HEADING_CHARS
               and _CLAUSE.match(text) and not _run_in_title(text) and not LEADER_END.search(text)]
    sizes = [len(block.text) for block in doc.blocks]
    if len(clauses) < max(MIN_CLAUSES, len(top) / 2) or sum(
            sizes[clauses[0]:clauses[-1] + 1]) < FRAME_SHARE * sum(sizes):
        return set()
    return set(clauses)


def _clause_title(text: str) -> str:
    """An untitled clause's title: its number and its first sentence, cut to its first words when
    longer than CLAUSE_TITLE_CHARS ("0. This License applies to any program or other work…")."""
    first = " ".join(text[slice(*sentences.split(text)[0])].split())
    if len(first) <= CLAUSE_TITLE_CHARS:
        return first
    space = first.rfind(" ", first.find(" ") + 1, CLAUSE_TITLE_CHARS + 1)  # a word after the number
    return f"{first[: space if space > 0 else CLAUSE_TITLE_CHARS].rstrip(',;:')}…"
