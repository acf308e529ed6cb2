"""Scoring model structuring against a known structure (bench/structure_boundaries.py, tests).

A document with headings of its own is given its normal tree (what `longqa ingest` stores); its
heading blocks are then removed, and where each heading's section began in the remaining text is
kept as the truth. Predicted section starts count when they lie within TOLERANCE characters of a
true one, matched one to one; titles are scored by token F1 against the true heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa import tokens
from longqa.parse.blocks import ParsedDocument
from longqa.structure.build import body_text
from longqa.structure.tree_source import own_headings
from longqa.structure.tree import Node, walk

TOLERANCE = 300  # characters between a predicted and a true start


@dataclass
class KnownDocument:
    name: str
    doc: ParsedDocument  # headings removed
    truth: list[tuple[int, int, str]]  # (character offset in the body, level 1|2, heading)
    tokens: int


@dataclass
class Score:
    tp: int = 0
    predicted: int = 0
    true: int = 0

    def add(self, other: "Score") -> None:
        self.tp, self.predicted, self.true = self.tp + other.tp, self.predicted + other.predicted, self.true + other.true

    def prf(self) -> tuple[float, float, float]:
        p = self.tp / self.predicted if self.predicted else 0.0
        r = self.tp / self.true if self.true else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    def text(self) -> str:
        p, r, f = self.prf()
        return f"P {p:.2f} R {r:.2f} F1 {f:.2f} ({self.tp}/{self.predicted} of {self.true})"


@dataclass
class BoundaryScores:
    top: Score  # section starts
    sub: Score  # subsection starts that do not coincide with a section start
    any: Score  # starts at any level
    title_f1: list[float]  # per matched start with a predicted title


def strip_headings(parsed: ParsedDocument, max_tokens: int = 0) -> KnownDocument | None:
    """The document without its heading blocks (cut after about `max_tokens` tokens when given)
    and where its sections and subsections start; None when it has no section to find."""
    by_index = {h.index: h for h in own_headings(parsed, "auto")[0]}
    blocks, starts, used, stack = [], [], 0, []
    pending: list[tuple[int, str]] = []  # headings waiting for their first body block
    for i, block in enumerate(parsed.blocks):
        if max_tokens and used >= max_tokens:
            break
        heading = by_index.get(i)
        if heading is not None:
            if heading.level > 0:  # level 0 is the document's own title line
                while stack and stack[-1] >= heading.level:
                    stack.pop()
                pending.append((1 if not stack else 2, heading.title))
                stack.append(heading.level)
            continue
        if not block.text.strip():
            continue
        blocks.append(block)
        used += tokens.count(block.text)
        starts += [(len(blocks) - 1, level, title) for level, title in pending]
        pending = []
    doc = ParsedDocument(parsed.path, parsed.title, parsed.pages, blocks, [], "text")
    offsets = body_text(doc)[1]
    truth = [(offsets[b], level, title) for b, level, title in starts if offsets[b] > 0]
    if not any(level == 1 for _, level, _ in truth):
        return None
    return KnownDocument(parsed.path.name, doc, truth, used)


def match(predicted: list[int], true: list[int]) -> tuple[Score, list[tuple[int, int]]]:
    """One-to-one matches within TOLERANCE, closest pairs first: the score and (i, j) pairs."""
    pairs = sorted((abs(p - t), i, j) for i, p in enumerate(predicted) for j, t in enumerate(true)
                   if abs(p - t) <= TOLERANCE)
    used_p, used_t, matched = set(), set(), []
    for _, i, j in pairs:
        if i not in used_p and j not in used_t:
            used_p.add(i)
            used_t.add(j)
            matched.append((i, j))
    return Score(len(matched), len(predicted), len(true)), matched


def title_f1(predicted: str, true: str) -> float:
    """Token F1 of a title against the true heading, its numbering ("3.1", "II-A") left out."""
    words = lambda s: re.findall(r"[a-z0-9]+", s.lower())  # noqa: E731
    p, t = words(predicted), words(re.sub(r"^[\dIVX]+(?:[.\-][\dA-Z]+)*\.?\s", "", true))
    common = sum(min(p.count(w), t.count(w)) for w in set(p))
    return 2 * common / (len(p) + len(t)) if common else 0.0


def predicted_starts(root: Node | None) -> list[tuple[int, int, str]]:
    """(offset, level, title) of every section and subsection of a tree (none for None)."""
    if root is None:
        return []
    return [(n.char_start, 1 if n.kind == "section" else 2, n.title) for n in walk(root)
            if n.kind in ("section", "subsection")]


def score_starts(known: KnownDocument, predicted: list[tuple[int, int, str]]) -> BoundaryScores:
    """Predicted (offset, level, title) starts against the known ones; offset 0 is no boundary."""
    top_true = [t for t in known.truth if t[1] == 1]
    top_at = {pos for pos, _, _ in top_true}
    sub_true = [t for t in known.truth if t[1] == 2 and t[0] not in top_at]
    pred = [p for p in predicted if p[0] > 0]
    scores, titles = {}, []
    for name, ps, ts in (("top", [p for p in pred if p[1] == 1], top_true),
                         ("sub", [p for p in pred if p[1] == 2], sub_true)):
        scores[name], matched = match([p[0] for p in ps], [t[0] for t in ts])
        titles += [title_f1(ps[i][2], ts[j][2]) for i, j in matched if ps[i][2]]
    anywhere, _ = match(sorted({p[0] for p in pred}), sorted({t[0] for t in known.truth}))
    return BoundaryScores(scores["top"], scores["sub"], anywhere, titles)
