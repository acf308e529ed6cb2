"""One outcome for every answer: answered or not, what is shown, its quotes, confidence, unsure,
alternatives. The text output, `--json` and the exit code all read this record (`ask` exits 4
when nothing is answered).

An answer is not given when
- the answer stage found none (a reader's "unknown", a reply the documents do not hold word for
  word, a verdict no sentence decides, the ranker's or a chooser's "The documents do not say."), or
- a reader's proven answer is less likely right than the threshold chosen for its profile's
  table on the tune half (or `answer.reader_decline`, where set) by its calibrated confidence
  (reader_confidence.py, the reader's check of its own answer among the signals): the documents
  do not say it, and the answer that was found is kept first among the alternatives. A reader
  without a fitted table (a chat GGUF no profile declares) never declines on its own
  probability: that decision was never measured for it.
Rules never choose the answer here; they only decide whether the reader's stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from longqa.ask.answer.grounded import NO_ANSWER, Grounding
from longqa.ask.context import Quote
from longqa.ask.settings import in_effect

# The replies of a reader, whose confidence is calibrated and may decline them.
READER_MODES = ("read", "verdict", "selection")


@dataclass
class Outcome:
    answered: bool
    answer: str  # the line shown: the answer with its passage number(s), or NO_ANSWER
    mode: str  # how it was reached (Grounding.mode), "none" when not answered
    quotes: list[Quote] = field(default_factory=list)
    confidence: float | None = None
    unsure: bool = False
    alternatives: list = field(default_factory=list)  # candidates (text, kind, probability, sentence)
    declined: str = ""  # why nothing is answered: "" | "no answer found" | "below the reader's confidence"


def threshold(grounding: Grounding) -> float:
    """The confidence a reader's answer must reach (`declining_below`), read from the settings in
    effect when the answer is first settled and kept on its grounding from then on."""
    if grounding.settled_below is None:
        grounding.settled_below = declining_below(in_effect().answer.reader_decline, grounding.decline_below)
    return grounding.settled_below


def declining_below(setting: float, chosen: float | None) -> float:
    """`answer.reader_decline` where it is set (0 to 1), else the threshold chosen for the reader's
    table (none chosen: 0, nothing declined)."""
    if setting >= 0:
        return setting
    return chosen if chosen is not None else 0.0


def settle(text: str | None, grounding: Grounding | None) -> Outcome:
    """The outcome of an answer stage's text and grounding (see the module's docstring); the
    grounding is brought in line with it (a declined answer keeps no quotes)."""
    text = (text or "").strip()
    if grounding is None:  # a completion model's free text with nothing traced: shown as written
        answered = bool(text) and not text.startswith(NO_ANSWER)
        return Outcome(answered, text if answered else NO_ANSWER, "free" if answered else "none",
                       declined="" if answered else "no answer found")
    declined = ""
    if grounding.mode == "none" or (grounding.mode == "free" and text.startswith(NO_ANSWER)) or not text:
        declined = "no answer found"
    elif grounding.mode in READER_MODES and grounding.calibrated and grounding.confidence is not None \
            and grounding.confidence < threshold(grounding):
        declined = "below the reader's confidence"
        if grounding.shown is not None:
            grounding.alternatives = [grounding.shown] + list(grounding.alternatives)
    if declined:
        declined = grounding.declined or declined  # settled once already: its first reason stands
        grounding.declined, grounding.quotes = declined, []
        if grounding.mode != "none":
            grounding.answered_as = grounding.mode
        grounding.mode, grounding.unsure = "none", False
        grounding.alternatives = list(grounding.alternatives)[:in_effect().answer.declined_alternatives]
        return Outcome(False, NO_ANSWER, "none", [], grounding.confidence, False, grounding.alternatives, declined)
    return Outcome(True, text, grounding.mode, list(grounding.quotes), grounding.confidence, grounding.unsure,
                   list(grounding.alternatives))
