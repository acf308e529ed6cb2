"""The reader's answer, proven: an instruction-tuned model writes a short answer from the focused
passages, and the answer counts only where it stands word for word in the documents.

1. The reader (a READER profile, models/profiles.py) gets the focused sentences under their
   numbered passage headers and the question, in its own chat template (prompts.READER_SYSTEM),
   and replies "45 seconds [3]", "No [2]" or "unknown".
2. The reply is proven: located, after normalisation (case, spacing, quote and dash forms), in a
   sentence of the passage it names, else in another focused sentence, else anywhere in the
   context. The located slice of the stored text (a figure widened to its unit) is the answer and
   its sentence the quote; what the model wrote is never shown as found.
3. A reply that cannot be proven goes to the span ranker as its draft (choose.py), which picks
   among spans copied from the sentences as for any model. "unknown" from a reader sure of it is
   "The documents do not say." (exit 4); from an unsure one, the ranker's pick, marked unsure.
4. Yes/no questions get Yes or No and the sentence that decides it: the passage the reader named,
   when one of its sentences agrees with the verdict, else the best agreeing sentence.
Confidence is the reader's own probability of its reply (the geometric mean of its tokens'),
with the candidates the ranker read as alternatives.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from longqa.ask import prompts
from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import grounded, reader_confidence
from longqa.ask.answer.focus import Sentence
from longqa.ask.answer.grounded import NO_ANSWER, Grounding, quote_of
from longqa.ask.settings import in_effect
from longqa.models import profiles
from longqa.models.base import SCORES_OPTIONS, supports
from longqa.text import spans

_CITED = re.compile(r"\s*[\[(](\d{1,3})[\])]\s*\.?\s*$")
_REFERENCES = re.compile(r"\[\d{1,3}\]")  # passage numbers anywhere in a reply
_VERDICT = re.compile(r"^(yes|no)\b[\s,.:;!-]*", re.I)
# Characters a reply and a document may spell differently while saying the same.
_SAME = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                       "\u2014": "-", "\u2212": "-", "\u00a0": " "})
_EDGE = " \t\n\"'`.,;:!?()[]{}*"


@dataclass
class Reply:
    """The reader's reply, parsed."""

    raw: str
    answer: str  # without the passage number
    cited: int | None  # the passage number the reader named
    unknown: bool
    verdict: str | None = None  # "Yes" | "No" for a yes/no question
    said: bool = True  # the reply holds an answer (not only passage numbers or punctuation)
    probability: float = 0.0  # the reader's own probability of the reply (per-token geometric mean)


def parse(raw: str, yesno: bool = False) -> Reply:
    """A reply's parts: "45 seconds [3]" -> ("45 seconds", 3); "No [2]" -> verdict No. Passage
    numbers are never an answer: "[1] [3]" says which passages, not what they say (no answer)."""
    text = " ".join(raw.split())
    cited = None
    match = _CITED.search(text)
    if match:
        cited, text = int(match.group(1)), text[:match.start()]
    core = _REFERENCES.sub(" ", text).strip(_EDGE)
    core = " ".join(core.split())
    unknown = core.casefold().rstrip(".") == prompts.READER_UNKNOWN
    verdict = None
    if yesno and not unknown:  # a reply that is no verdict is an answer to prove like any other
        found = _VERDICT.match(core)
        verdict = found.group(1).capitalize() if found else None
    return Reply(raw, core, cited, unknown, verdict, said=any(char.isalnum() for char in core))


def _normalised(text: str) -> tuple[str, list[int]]:
    """`text` case-folded with runs of spaces made one and equivalent characters made the same, and
    for each character of the result the offset of the character it came from."""
    out, where = [], []
    for at, char in enumerate(text):
        char = unicodedata.normalize("NFKC", char).translate(_SAME).casefold()
        if not char:
            continue
        if char.isspace():
            if out and out[-1] == " ":
                continue
            char = " "
        for piece in char:
            out.append(piece)
            where.append(at)
    return "".join(out), where


def locate(answer: str, text: str) -> tuple[int, int] | None:
    """Offsets of `answer` in `text` after normalisation, on word boundaries; None when absent."""
    needle = _normalised(answer.strip(_EDGE))[0].strip()
    if not needle:
        return None
    hay, where = _normalised(text)
    start = 0
    while (at := hay.find(needle, start)) >= 0:
        end = at + len(needle)
        before = hay[at - 1] if at else " "
        after = hay[end] if end < len(hay) else " "
        if not (before.isalnum() and needle[0].isalnum()) and not (after.isalnum() and needle[-1].isalnum()):
            return where[at], where[end - 1] + 1
        start = at + 1
    return None


def prove(reply: Reply, focused: list[Sentence], context: list[Sentence]) -> tuple[Sentence, int, int] | None:
    """Where the reply's answer stands word for word: the named passage's sentences first, then the
    other focused sentences, then the rest of the context (the sentence, and offsets in it)."""
    named = [s for s in focused if reply.cited is not None and s.passage.n == reply.cited]
    seen: set[int] = set()
    for sentence in named + focused + list(context):
        if id(sentence) in seen:
            continue
        seen.add(id(sentence))
        found = locate(reply.answer, sentence.text)
        if found is not None:
            return sentence, found[0], found[1]
    return None


FIGURE_KINDS = ("quantity", "date", "month", "time", "frequency")


def whole_figure(text: str, start: int, end: int) -> tuple[int, int]:
    """The proven slice widened to the figure it is part of, with the unit or the rest of the date
    the sentence gives it ("850" in "850 cubic metres", "March" in "12 March 2024"): a number
    read without its unit says less than the document does."""
    around = [span for span in spans.candidates(text, in_effect().answer.max_phrase_words)
              if span.kind in FIGURE_KINDS and span.start <= start and end <= span.end
              and (span.start, span.end) != (start, end)]
    best = min(around, key=lambda span: span.end - span.start, default=None)
    return (best.start, best.end) if best is not None else (start, end)


def read(generator, prompt: str, asked: Asked, on_draft=None) -> Reply:
    """The reader's reply to `prompt` (temperature 0), with its own probability; `on_draft` is
    given each piece of the reply as it is written (what a terminal shows while it waits for the
    answer to be proven)."""
    settings = in_effect().answer
    pieces = []
    for piece in generator.stream(prompt, max_tokens=settings.reader_tokens_out, stop=["\n"], temperature=0.0):
        pieces.append(piece)
        if on_draft is not None:
            on_draft(piece)
    raw = "".join(pieces)
    reply = parse(raw, yesno=asked.want == "yesno")
    if raw.strip():
        reply.probability = own_probability(generator, prompt, raw)
    return reply


def own_probability(generator, prompt: str, said: str) -> float:
    """The generator's probability of having said `said` after `prompt`: the geometric mean of its
    tokens' (the prompt is in the KV cache by now, so this costs a decode of the reply's tokens).
    Generators that cannot score a continuation give their label probability."""
    if supports(generator, SCORES_OPTIONS):
        logprob = generator.option_logprobs(prompt, [said], max_tokens=in_effect().answer.reader_tokens_out)[0]
    else:
        logprob = math.log(max(generator.label_probs(prompt, [said]).get(said, 0.0), 1e-12))
    return math.exp(min(0.0, logprob))


@dataclass
class Settled:
    """What a reply comes to before the span ranker is asked anything."""

    how: str  # verdict | unknown (sure of it) | unknown-unsure | read (proven) | unproven
    sentence: Sentence | None = None  # for "read": where the answer stands ...
    start: int = 0  # ... and its slice of that sentence, a figure widened to its unit
    end: int = 0

    @property
    def shown(self) -> str:
        return self.sentence.text[self.start:self.end] if self.sentence is not None else ""


def settle(reply: Reply, focused: list[Sentence], context: list[Sentence]) -> Settled:
    """Where a reply stands: a verdict, an "unknown" the reader is sure of or not, an answer
    proven word for word in the sentences, or an answer the documents do not hold."""
    if reply.verdict is not None:
        return Settled("verdict")
    if reply.unknown:
        sure = reply.probability >= in_effect().answer.reader_unknown_sure
        return Settled("unknown" if sure else "unknown-unsure")
    proven = prove(reply, focused, context) if reply.said else None
    if proven is None:
        return Settled("unproven")
    sentence, start, end = proven
    return Settled("read", sentence, *whole_figure(sentence.text, start, end))


def answer(generator, asked: Asked, focused: list[Sentence], context: list[Sentence], prompt: str,
           fallback, on_draft=None) -> tuple[str, Grounding]:
    """The answer line and its grounding (see the module's docstring). `fallback(draft, model)` is
    the span ranker's choice given the reader's reply as its draft, the shortlist scored by the
    model or (model False: for the alternatives of a proven answer) by the prior stage alone."""
    reply = read(generator, prompt, asked, on_draft)
    settled = settle(reply, focused, context)
    if settled.how == "verdict":
        return _verdict(generator, reply, asked, focused, context)
    if settled.how == "unknown":
        return NO_ANSWER, Grounding(mode="none", focused=focused, draft=reply.raw,
                                    confidence=reply.probability, unsure=False)
    if settled.how == "unknown-unsure":
        text, grounding = fallback("", True)
        grounding.unsure = True
        return text, grounding
    if settled.how == "unproven":  # never shown as found: the ranker picks among copied spans instead
        return fallback(reply.answer if reply.said else "", True)
    sentence, shown = settled.sentence, settled.shown
    # The ranker reads the sentences without the reply: its candidates are the alternatives, and
    # whether it picks the same answer is a signal of the confidence.
    _, grounding = fallback("", False)
    grounding.mode, grounding.draft = "read", reply.raw
    grounding.quotes = [quote_of(sentence)]
    _sure(grounding, generator, asked, reply, shown, named=sentence.passage.n == reply.cited,
          in_focus=any(s is sentence for s in focused))
    grounding.alternatives = [c for c in grounding.alternatives if c.text.casefold() != shown.casefold()][:2]
    return f"{shown} [{sentence.passage.n}]", grounding


def _sure(grounding: Grounding, generator, asked: Asked, reply: Reply, shown: str, *, named: bool,
          in_focus: bool) -> None:
    """The grounding's confidence and unsure flag: the reader's fitted table over the reply's
    signals where its profile has one (reader_confidence.py), else its own probability."""
    top = grounding.candidates[0] if grounding.candidates else {}
    probability = max((c.get("probability", 0.0) for c in grounding.candidates
                       if reader_confidence.same_answer(shown, c.get("text", ""))), default=0.0)
    grounding.signals = reader_confidence.signals(
        probability=reply.probability, ranker_top=top.get("text", ""), ranker_probability=probability,
        named_passage=named, in_focus=in_focus, answer=shown, question=asked.question,
        verdict=reply.verdict is not None)
    profile = profiles.profile_of(generator)
    fitted = reader_confidence.calibrated(profile.name if profile else None, grounding.signals)
    grounding.confidence = reply.probability if fitted is None else fitted
    grounding.unsure = grounding.confidence < in_effect().answer.reader_sure


def _verdict(generator, reply: Reply, asked: Asked, focused: list[Sentence], context: list[Sentence]) -> tuple[str, Grounding]:
    """Yes or No, quoting the named passage's sentence that agrees with it, else the best agreeing
    focused sentence; a verdict no sentence agrees with is quoted by the best focused sentence."""
    settings = in_effect().answer
    ranked = sorted(focused, key=lambda s: -s.score)
    named = [s for s in ranked if s.passage.n == reply.cited]
    sentence = (grounded.verdict_quote(reply.verdict, asked, named) if named else None) \
        or grounded.verdict_quote(reply.verdict, asked, ranked[:settings.verdict_sentences]) \
        or (named or ranked or [None])[0]
    grounding = Grounding(mode="yesno", focused=focused, draft=reply.raw)
    _sure(grounding, generator, asked, reply, reply.verdict,
          named=sentence is not None and sentence.passage.n == reply.cited, in_focus=sentence is not None)
    if sentence is None:
        return reply.verdict, grounding
    grounding.quotes = [quote_of(sentence)]
    return f"{reply.verdict} [{sentence.passage.n}]", grounding
