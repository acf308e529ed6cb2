"""The reader's answer, proven: an instruction-tuned model writes a short answer from the focused
passages, and the answer counts only where it stands word for word in the documents.

1. The reader (a READER profile, models/profiles.py) gets the focused sentences under their
   numbered passage headers and the question, in its own chat template (prompts.READER_SYSTEM),
   and replies "45 seconds [3]", "No [2]" or "unknown".
2. The reply is proven: located, after normalisation (case, spacing, quote and dash forms), in a
   sentence of the passage it names, else in another focused sentence, else anywhere in the
   context. The located slice of the stored text (a figure widened to its unit) is the answer and
   its sentence the quote; what the model wrote is never shown as found.
3. "unknown" is the reader's judgement, not the decision: its best answer is asked for in the same
   conversation, and how sure it was that the passages do not say is a signal of the confidence.
   A reply that cannot be proven is asked once more to be copied exactly; if it still cannot be,
   the documents do not say (exit 4), with the span ranker's candidates (which never pick the
   answer) as the alternatives.
4. The reader then checks its proven answer against the sentence that proves it (check.py); that
   probability, its own and the ranker's agreement make the answer's calibrated confidence
   (reader_confidence.py), on which the answer is shown, shown unsure or declined (outcome.py).
Yes/no questions and those answered by whole sentences are read over numbered sentences
(selection.py).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from longqa.ask import prompts
from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import check, focus, grounded, reader_confidence
from longqa.ask.answer.candidates import Candidate
from longqa.ask.answer.focus import Sentence
from longqa.ask.answer.grounded import NO_ANSWER, Grounding, quote_of
from longqa.ask.settings import in_effect
from longqa.models import profiles
from longqa.models.base import SCORES_OPTIONS, supports
from longqa.models.chat import Message
from longqa.text import spans

_CITED = re.compile(r"\s*[\[(](\d{1,3})[\])]\s*\.?\s*$")
_REFERENCES = re.compile(r"\[\d{1,3}\]")  # passage numbers anywhere in a reply
_VERDICT = re.compile(r"^(yes|no)\b[\s,.:;!-]*", re.I)
# Characters a reply and a document may spell differently while saying the same.
_SAME = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                       "\u2014": "-", "\u2212": "-", "\u00a0": " "})
_EDGE = " \t\n\"'`.,;:!?()[]{}*"
_CODE_OPENING = re.compile(r"^(?:\.|--?)[A-Za-z]")  # a dot-command (".tables") or a flag ("--force")


def trimmed(text: str) -> str:
    """`text` without quotes, brackets and punctuation around it; the dot or dash that opens a
    dot-command or a flag is part of the answer."""
    text = text.strip(" \t\n").rstrip(_EDGE)
    opening = text.lstrip(_EDGE)
    at = len(text) - len(opening)
    if at and _CODE_OPENING.match(text[at - 1:]) and (at < 2 or text[at - 2] not in ".-"):
        return text[at - 1:]
    return opening


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
    core = trimmed(_REFERENCES.sub(" ", text))
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
    needle = _normalised(trimmed(answer))[0].strip()
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
        for said in spellings(reply.answer):
            found = locate(said, sentence.text)
            if found is not None:
                return sentence, found[0], found[1]
    return None


_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                 "fifteen sixteen seventeen eighteen nineteen twenty").split()
_COUNT = re.compile(r"^(\d{1,2})\b(.*)$")


def spellings(answer: str) -> list[str]:
    """The answer, then the same count written in words where it is a small number ("3 pumps",
    "three pumps"): documents write counts up to twenty in words, and the reader often gives
    digits. What is shown is still the stored text's own slice."""
    match = _COUNT.match(answer.strip())
    if match is None or int(match.group(1)) >= len(_NUMBER_WORDS):
        return [answer]
    return [answer, _NUMBER_WORDS[int(match.group(1))] + match.group(2)]


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
    raw = written(generator, prompt, on_draft, in_effect().answer.reader_tokens_out)
    reply = parse(raw, yesno=asked.want == "yesno")
    if raw.strip():
        reply.probability = own_probability(generator, prompt, raw)
    return reply


def written(generator, prompt: str, on_draft, max_tokens: int) -> str:
    """The reader's one-line reply at temperature 0, each piece given to `on_draft` as written."""
    pieces = []
    for piece in generator.stream(prompt, max_tokens=max_tokens, stop=["\n"], temperature=0.0):
        pieces.append(piece)
        if on_draft is not None:
            on_draft(piece)
    return "".join(pieces)


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

    how: str  # verdict | unknown | read (proven) | unproven
    sentence: Sentence | None = None  # for "read": where the answer stands ...
    start: int = 0  # ... and its slice of that sentence, a figure widened to its unit
    end: int = 0

    @property
    def shown(self) -> str:
        return self.sentence.text[self.start:self.end] if self.sentence is not None else ""


def settle(reply: Reply, focused: list[Sentence], context: list[Sentence]) -> Settled:
    """Where a reply stands: a verdict, "unknown", an answer proven word for word in the
    sentences, or an answer the documents do not hold."""
    if reply.verdict is not None:
        return Settled("verdict")
    if reply.unknown:
        return Settled("unknown")
    proven = prove(reply, focused, context) if reply.said else None
    if proven is None:
        return Settled("unproven")
    sentence, start, end = proven
    return Settled("read", sentence, *whole_figure(sentence.text, start, end))


def answer(generator, asked: Asked, focused: list[Sentence], context: list[Sentence], prompt: str,
           fallback, on_draft=None) -> tuple[str, Grounding]:
    """The answer line and its grounding (see the module's docstring). `fallback(draft, model)` is
    the span ranker given the reply as its draft; it never picks the answer here: its candidates,
    ranked without the model (model False), are the alternatives shown beside the reader's
    answer, or beside "The documents do not say." when the reader's answer cannot stand."""
    reply = read(generator, prompt, asked, on_draft)
    settled = settle(reply, focused, context)
    said_unknown = 0.0
    if settled.how == "unknown":  # its best answer, whose standing the confidence decides
        said_unknown = reply.probability
        reply = read_again(generator, asked, focused, reply, prompts.READER_BEST_GUESS)
        settled = settle(reply, focused, context)
    copied_again = settled.how == "unproven"
    if copied_again:
        reply = read_again(generator, asked, focused, reply, prompts.READER_COPY_AGAIN)
        settled = settle(reply, focused, context)
    if settled.how != "read":  # "unknown", or an answer the documents do not hold word for word
        _, grounding = fallback("", False)
        grounding.mode, grounding.draft = "none", reply.raw
        grounding.alternatives = grounding.ranked[:2]  # the ranker's own pick among them
        grounding.confidence, grounding.unsure = reply.probability, False
        return NO_ANSWER, grounding
    sentence, shown = settled.sentence, settled.shown
    # The ranker reads the sentences without the reply: its candidates are the alternatives, and
    # whether it picks the same answer is a signal of the confidence.
    _, grounding = fallback("", False)
    grounding.mode, grounding.draft = "read", reply.raw
    grounding.quotes = [quote_of(sentence)]
    checked = check.asked_of(generator, asked.question, sentence.text, shown)
    confident(grounding, generator, asked, probability=reply.probability, shown=shown,
              named=sentence.passage.n == reply.cited, in_focus=any(s is sentence for s in focused),
              verdict=False, checked=checked, said_unknown=said_unknown, copied_again=copied_again)
    # the ranker's answers other than the reader's, its own pick among them
    grounding.alternatives = [c for c in grounding.ranked if c.text.casefold() != shown.casefold()][:2]
    grounding.shown = as_candidate(shown, "read", sentence, grounding.confidence)
    return f"{shown} [{sentence.passage.n}]", grounding


def as_candidate(text: str, kind: str, sentence: Sentence, probability: float | None) -> Candidate:
    """A reader's answer as a candidate: what the alternatives show when the outcome declines it."""
    return Candidate(text, kind, sentence, source="reader", probability=probability or 0.0)


def messages(asked: Asked, passages: str) -> list[Message]:
    """The reader's conversation: the fixed system message, then the passages and the question (a
    lettered question's stem and its options)."""
    question = asked.stem if asked.letters else asked.question
    return [Message("system", prompts.READER_SYSTEM),
            Message("user", prompts.reader_message(question, passages, asked.letters))]


def read_again(generator, asked: Asked, focused: list[Sentence], reply: Reply, request: str) -> Reply:
    """The reader's next reply after `request` (its best answer instead of "unknown", or its
    answer copied exactly): the same conversation continued, so the passages' states are reused,
    not read again."""
    again = generator.chat_prompt(messages(asked, focus.reader_text(focused, "short")) + [
        Message("assistant", reply.raw.strip()), Message("user", request)])
    second = read(generator, again, asked)
    return second if second.raw.strip() else reply


def confident(grounding: Grounding, generator, asked: Asked, *, probability: float, shown: str, named: bool,
              in_focus: bool, verdict: bool, checked: float | None, said_unknown: float = 0.0,
              copied_again: bool = False) -> None:
    """The grounding's confidence and unsure flag: the reader's fitted table over the reply's
    signals where its profile has one (reader_confidence.py), else its own probability."""
    top = grounding.candidates[0] if grounding.candidates else {}
    ranked = max((c.get("probability", 0.0) for c in grounding.candidates
                  if reader_confidence.same_answer(shown, c.get("text", ""))), default=0.0)
    grounding.signals = reader_confidence.signals(
        probability=probability, ranker_top=top.get("text", ""), ranker_probability=ranked,
        named_passage=named, in_focus=in_focus, answer=shown, question=asked.question,
        verdict=verdict, checked=checked, selection=grounding.mode == "selection", said_unknown=said_unknown,
        copied_again=copied_again)
    profile = profiles.profile_of(generator)
    fitted = reader_confidence.calibrated(profile.name if profile else None, grounding.signals)
    grounding.confidence = probability if fitted is None else fitted
    grounding.calibrated = fitted is not None  # only a calibrated confidence may decline (outcome.py)
    grounding.decline_below = reader_confidence.decline_below(profile.name) if fitted is not None else None
    grounding.unsure = grounding.confidence < in_effect().answer.reader_sure
