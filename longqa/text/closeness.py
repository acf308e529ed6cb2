"""How near words lie to a span of a sentence, and how far two short texts agree.

The answer stage reads these as features of a candidate span: the question's words close around it
("the standby generators run for about 52 hours": "52 hours" sits next to "generators" and "run"),
a named entity's words right before it, and how much of a draft answer it repeats.
"""

from __future__ import annotations

import re

from longqa.text.words import words


def proximity(stems: dict[str, set[str]], near: list[tuple[int, str, float]], start: int, end: int,
              reach: float) -> float:
    """Each distinct question stem in the sentence counts 1 - distance / reach (0 beyond),
    summed over the question's stems."""
    if not stems:
        return 0.0
    middle = (start + end) / 2
    nearest: dict[str, float] = {}
    for position, stem, credit in near:
        if not (start <= position < end):
            nearest[stem] = max(max(0.0, 1 - abs(position - middle) / reach) * credit, nearest.get(stem, 0.0))
    return sum(nearest.values()) / len(stems)


def mentions(own: set[str], sentence: str) -> list[tuple[int, int]]:
    """Character spans of the sentence's words that are `own` words."""
    return [(m.start(), m.end()) for m in re.finditer(r"[^\W_]+", sentence) if m.group().lower() in own]


def closeness(found: list[tuple[int, int]], start: int, end: int, reach: float) -> float:
    """1 right after one of the found words, falling to 0 at `reach` characters; before it, half."""
    best = 0.0
    for m_start, m_end in found:
        if start <= m_start < end:
            continue
        after = m_end <= start
        gap = start - m_end if after else m_start - end
        best = max(best, max(0.0, 1 - max(gap, 0) / reach) * (1.0 if after else 0.5))
    return best


def agreement(candidate: str, draft: str) -> float:
    """Token F1 between a candidate and the draft; 0 when a figure of the candidate is not in it."""
    a, b = words(candidate), words(draft)
    figures = [w for w in a if any(ch.isdigit() for ch in w)]
    if figures and not any(w in b for w in figures):
        return 0.0
    common = sum(min(a.count(w), b.count(w)) for w in set(a))
    if not a or not b or not common:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)
