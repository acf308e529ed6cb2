"""How sure a reader's proven answer is: named signals, weighted by a logistic model fitted per
reader profile on the tune half (bench/reader_confidence.py), so that "0.8" means right about
eight times in ten for that reader.

The reader's own probability of its reply is one signal among several: a small model is often
sure of a wrong span that repeats the question's words, and a span the ranker (which never saw
the reply) also picks is more often right. A profile with no fitted table keeps its own
probability, uncalibrated, as the confidence (and its reports say so).
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

from longqa.ask.answer import check
from longqa.linear import Stage, read_stage
from longqa.probabilities import sigmoid
from longqa.text.words import content_terms

TABLES = Path(__file__).with_name("reader_confidence")

# name -> why it tells a right answer from a wrong one
SIGNALS = {
    "own_logprob": "the reader's own log-probability of its reply (per-token mean)",
    "ranker_agrees": "the span ranker, reading the sentences without the reply, picks the same answer",
    "ranker_probability": "the span ranker's probability of the reader's answer among its candidates",
    "named_passage": "the answer stands in the passage the reader named, not only elsewhere",
    "in_focus": "the answer stands in a sentence the reader was given, not only in the wider context",
    "answer_words": "log(1 + words) of the answer: long replies are more often a sentence's fragment",
    "repeats_question": "share of the answer's content words the question already says",
    "verdict": "a Yes/No reply (its probability means something else than a span's)",
    "selection": "sentences the reader selected (a how/why/steps or summary reply), not a span",
    "checked": "the reader's log-odds that the quoted sentence states the answer, asked on its own (check.py)",
    "said_unknown": "the reader's probability of its first reply, 'unknown', before it was asked for its best answer",
    "copied_again": "the first reply was not word for word in the documents; this one was asked to be copied",
}


def signals(*, probability: float, ranker_top: str, ranker_probability: float, named_passage: bool,
            in_focus: bool, answer: str, question: str, verdict: bool, checked: float | None = None,
            selection: bool = False, said_unknown: float = 0.0, copied_again: bool = False) -> dict[str, float]:
    """The named signals of one proven reply (`checked`: the reader's check, None when not asked)."""
    said = set(content_terms(answer))
    asked = set(content_terms(question))
    return {
        "own_logprob": math.log(max(probability, 1e-6)),
        "ranker_agrees": float(same_answer(answer, ranker_top)),
        "ranker_probability": ranker_probability,
        "named_passage": float(named_passage),
        "in_focus": float(in_focus),
        "answer_words": math.log1p(len(answer.split())),
        "repeats_question": len(said & asked) / len(said) if said else 0.0,
        "verdict": float(verdict),
        "selection": float(selection),
        "checked": check.log_odds(checked),
        "said_unknown": said_unknown,
        "copied_again": float(copied_again),
    }


def same_answer(one: str, other: str) -> bool:
    """Whether two answers say the same: one's content words hold the other's ("52 hours" and
    "about 52 hours"), or the same text when neither has content words ("Yes")."""
    a, b = set(content_terms(one)), set(content_terms(other))
    if not a or not b:
        return one.strip().casefold() == other.strip().casefold() and bool(one.strip())
    return a <= b or b <= a


def calibrated(profile: str | None, named: dict[str, float]) -> float | None:
    """The fitted probability that the answer is right, or None when `profile` has no table."""
    stage = table_of(profile) if profile else None
    return None if stage is None else sigmoid(stage.score(named))


def table_of(profile: str) -> Stage | None:
    """The profile's fitted weights (reader_confidence/PROFILE.json), or None when it has none."""
    shipped = _shipped(profile)
    return None if shipped is None else shipped[0]


def decline_below(profile: str | None) -> float | None:
    """The confidence below which the profile's answers are declined, chosen for its table on the
    tune half (bench/refusal.py --choose --write, kept in the table's provenance); None where none
    was chosen: such a reader never declines on its confidence."""
    shipped = _shipped(profile) if profile else None
    chosen = None if shipped is None else shipped[1].get("decline_below")
    return float(chosen) if isinstance(chosen, (int, float)) and 0 <= chosen <= 1 else None


def forget() -> None:
    """Read the tables again at their next use (they are read once per process)."""
    _shipped.cache_clear()


@lru_cache(maxsize=8)
def _shipped(profile: str):
    if not profile or "/" in profile or profile.startswith("."):
        return None
    return read_stage(TABLES / f"{profile}.json", set(SIGNALS), "a reader confidence table")
