"""Cues in a paragraph unit's own words that survive the loss of headings.

- An article opener: the unit begins the way an encyclopedia article does, with a name and then
  "is …", "was …" or "are/were a …" ("North Kansas City is a city in Clay County", "The Taos
  Society of Artists was an organization"). Files made of many short articles (HotpotQA and MuSiQue
  contexts, exported wikis) open most units like this; running text almost never does, because a
  paragraph inside a text goes on about a subject already named ("He", "In 1949, Jones", "The model").
- A continuation: the unit begins in the middle of a sentence (a lower-case word or a punctuation
  mark, as when a PDF column or page break cuts a paragraph), so no section can start there.
- A flush start (PDF layout, not words): typeset papers indent the first line of every paragraph
  except the first after a heading. In a document whose paragraphs mostly start indented, a unit
  whose first line is flush left is where a heading was (the parser's Block.indent).
"""

from __future__ import annotations

import bisect
import re

from longqa.parse.blocks import ParsedDocument
from longqa.structure.build import body_text

# Words that begin ordinary sentences of running text, not an article's subject.
_STARTERS = frozenset(
    "in on at it he she they this that these those after before during when while since as his her "
    "their its we our i for from by with however although following later then there here despite "
    "between two one such some many most each both other if but and or so because thus also only all "
    "what which who where how why described".split()
)
_ARTICLES = frozenset(("the", "a", "an"))
# The verb of a definition: "is …", "was …", "are a/an/the …" (a plural subject with "are" alone
# is too often running text: "Results are shown"), "has been", "refers to".
_COPULA = re.compile(r"\b(?:is|was|(?:are|were) (?:a|an|the|one)|has been|had been|refers to)\b")
_SENTENCE_END = re.compile(r"[a-z]{2}[.!?]\s+[A-Z]")  # "explosions. When", not "Jr. was" or "R. Ford"
_ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")  # "(born 1913)", "[1]": skipped before the verb
_QUOTES = "\"“‘'`"
OPENER_WORDS = 20  # the verb must come within this many words of the start (asides removed)
FLUSH_POINTS = 1.0  # a first line within this many points of the other lines' edge is flush left


def opener_subject(text: str) -> str | None:
    """The name an encyclopedia-style unit opens with ("North Kansas City" from "North Kansas City
    is a city …"), or None when the unit does not open like an article: a capitalised name (after
    an optional "The/A/An") as the subject of "is …/was …/are a …" within the first
    OPENER_WORDS words of its first sentence, asides in brackets left out."""
    head = " ".join(_ASIDE.sub(" ", " ".join(text.split()[:2 * OPENER_WORDS])).split()[:OPENER_WORDS])
    verb = _COPULA.search(head)
    if verb is None or _SENTENCE_END.search(head[: verb.start()]):
        return None  # no defining verb in the first sentence
    subject = head[: verb.start()].replace(",", " ").split()
    if not subject or not (subject[0][:1].isupper() or subject[0][:1] in _QUOTES):
        return None
    first = subject[0].strip(_QUOTES).lower()
    if first in _STARTERS:
        return None
    name = subject[1:] if first in _ARTICLES else subject
    # The subject's first word must itself be a name: "A volcano is …" is running text.
    if not name or not (name[0].strip(_QUOTES)[:1].isupper() or name[0][:1].isdigit()):
        return None
    return " ".join(subject).strip(_QUOTES + " ;:")


def article_opener(text: str) -> bool:
    """True when the unit starts like an encyclopedia article (see opener_subject)."""
    return opener_subject(text) is not None


def continues_sentence(text: str) -> bool:
    """True when the unit starts mid-sentence: not a capital, a digit, a quote or a bracket."""
    first = text.lstrip()[:1]
    return bool(first) and not (first.isupper() or first.isdigit() or first in _QUOTES or first in "([")


def unit_indents(doc: ParsedDocument, starts: list[int]) -> list[float | None]:
    """The first-line indent (points, Block.indent) of the block each unit begins with; `starts`
    are the units' character offsets in the body text (build.body_text). None where a unit starts
    inside a block (a long paragraph cut in pieces) or the parser could not tell."""
    _, block_starts = body_text(doc)
    out: list[float | None] = []
    for start in starts:
        at = bisect.bisect_right(block_starts, start) - 1  # the last block starting there (empty ones first)
        if at >= 0 and block_starts[at] == start:
            out.append(doc.blocks[at].indent)
        else:
            out.append(None)
    return out


def first_lines(indents: list[float | None], texts: list[str], indent_points: float,
                indented_share: float, least: int) -> list[int]:
    """Each unit's first line in a document that indents its paragraphs: 1 flush left (a heading
    was likely just before it), -1 indented by `indent_points` or more (a paragraph that goes on
    under the same heading), 0 unknown. The document shows the pattern when at least `least` units
    that start a sentence have a known indent and at least `indented_share` of them are indented;
    all 0 where it does not (web pages, reports and many papers set paragraphs apart by space)."""
    marks = []
    for value, text in zip(indents, texts):
        if value is None or continues_sentence(text):
            marks.append(0)
        else:
            marks.append(1 if abs(value) < FLUSH_POINTS else -1 if value >= indent_points else 0)
    known = sum(1 for mark in marks if mark)
    if known < least or marks.count(-1) < indented_share * known:
        return [0] * len(texts)
    return marks
