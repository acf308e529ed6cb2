"""Candidate answers copied out of the focused sentences, and what kind of answer a question wants.

A short answer is chosen from these candidates, never written freely, so it cannot hold a number
or a name that the documents do not contain. Candidates are character spans of a sentence:
- quantities: numbers with their currency, scale and unit ("about 52 hours", "$1.2 billion", "12%");
- dates: "March 3, 2019", "June 2020", years; frequencies: "monthly", "every 18 months";
- names: runs of capitalised words ("Lena Marsh", "Bank of England");
- phrases: short runs of content words between function words and punctuation ("late winter");
- yes / no for questions that open with an auxiliary verb, and the alternatives a question names
  ("Which is longer, the Danube or the Rhine?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa.ask.settings import in_effect
from longqa.text.words import STOPWORDS, words
from longqa.ask.analysis.asked import ROLE_OF, Asked

_MONTHS = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
           r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?")
_DATE = re.compile(
    rf"\b(?:{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS},?\s+\d{{4}}|"
    rf"{_MONTHS},?\s+\d{{4}}|(?:1[5-9]|20)\d\d(?:\s*[-–]\s*(?:1[5-9]|20)?\d\d)?)\b"
)
_UNITS = (r"(?:%|percent|per cent|percentage points?|basis points|bps|hours?|hrs?|minutes?|mins?|seconds?|"
          r"days?|weeks?|months?|years?|decades?|centuries|century|times|x|km|kilomet(?:er|re)s?|"
          r"met(?:er|re)s?|m|cm|mm|miles?|feet|foot|ft|inch(?:es)?|kg|kilograms?|grams?|g|tonnes?|tons?|"
          r"pounds?|lbs?|litres?|liters?|l|ml|gallons?|(?:kilo|mega|giga)?watt[- ]hours?|(?:kilo|mega|giga)?watts?|"
          r"kwh|mwh|gwh|kw|mw|gw|w|volts?|v|bar|psi|"
          r"°c|°f|degrees?|people|employees|staff|users|customers|shares|units|stores|members|pages|"
          r"mg/l|m3|m³|cubic met(?:er|re)s?|megalitres?|ml/d|acres?|hectares?|sq\.? ?(?:ft|mi|km)|km2|km²|"
          r"square (?:feet|met(?:er|re)s|miles|kilomet(?:er|re)s))")
_SCALE = r"(?:thousand|million|billion|trillion|mn|bn|m|k|b)"
_QUANTITY = re.compile(
    rf"(?:\b(?:about|approximately|around|roughly|nearly|almost|over|under|up to|at least|at most|"
    rf"more than|less than)\s+)?"
    rf"(?:(?:US|C|A|NZ)?[$€£¥]\s?)?(?<![\w.-])\(?(?:(?<=\s)-|(?<=^)-)?\d[\d,]*(?:\.\d+)?\)?(?![\w-]*[A-Za-z])"
    rf"(?:\s*{_SCALE}\b)?(?:\s*{_UNITS}(?![\w]))?",
    re.IGNORECASE,
)
# Counts written as words ("nine justices", "twelve members"); "one" is left out: it is mostly
# a pronoun ("one of the ...").
_COUNT_WORD = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|a dozen|dozens|"
    r"a hundred|hundreds|a thousand|thousands)\b(?:[ -](?:one|two|three|four|five|six|seven|eight|nine)\b)?"
    r"(?:\s+" + _UNITS + r"(?!\w))?", re.IGNORECASE)
_FREQUENCY = re.compile(
    r"\b(?:(?:hourly|daily|weekly|fortnightly|monthly|quarterly|annually|yearly)|"
    r"(?:once|twice|\d+ times|three times|four times) (?:a|an|per|each|every) \w+|"
    r"every (?:\d+ |other |few |two |three |four |six |twelve )?(?:hours?|days?|weeks?|months?|years?|shifts?))\b",
    re.IGNORECASE,
)
_TIME = re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)|\b\d{1,2}:\d{2}\b|\b(?:noon|midnight)\b",
                   re.IGNORECASE)
_NAME = re.compile(
    r"\b[A-Z][\w'’.&-]*(?:\s+(?:(?:of|the|de|du|von|van|and|for|la|le|del|da)\s+)?[A-Z][\w'’.&-]*)*"
)
# A month or a weekday alone is a "month", not a name: "April" in "(April 14, 1918 – June 12, 2005)"
# answers "in what month", never "who", and rarely "when".
_CALENDAR = re.compile(rf"^(?:{_MONTHS}|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day)$")
# Placeholders that converted papers leave for formulas and references: never an answer.
_MARKUP = re.compile(r"\b(?:INLINEFORM|DISPLAYFORM|BIBREF|TABREF|FIGREF|SECREF|CITEREF)\d*\b")
# Reference marks of encyclopedia pages printed to PDF: "oral argument.[163]", "[note 2]", "[a]".
_FOOTNOTE = re.compile(r"\[(?:\d{1,4}|[a-z]|(?:note|nb|n)\s*\d{1,3}|citation needed)\]", re.I)
_POSSESSIVE = re.compile(r"['’]s?$")
# "(3) Tax Fees for fiscal 2019 ...": a note or list mark opening a sentence, not a quantity
# (elsewhere "(12)" is a negative figure).
_ENUMERATION = re.compile(r"^\(\d{1,2}\)$")
_PHRASE_BREAK = re.compile(r"[,;:()\[\]\"“”]|\s[-–—]\s|\.\s")

_TIME_UNITS = re.compile(r"\b(?:hours?|hrs?|minutes?|mins?|seconds?|days?|weeks?|months?|years?|decades?)\b", re.I)


@dataclass(frozen=True)
class Span:
    text: str
    kind: str  # quantity | date | month | time | frequency | name | phrase (from a sentence); yesno | option
    start: int = -1  # offsets into the sentence; -1 for yes/no and options named by the question
    end: int = -1


def candidates(sentence: str) -> list[Span]:
    """Every candidate span of one sentence, longest first where they overlap the same start."""
    found: dict[tuple[int, int], Span] = {}
    notes = [m.span() for m in _FOOTNOTE.finditer(sentence)]

    def add(start: int, end: int, kind: str) -> None:
        text = sentence[start:end].strip(" .,;:()'\"“”")
        text = _POSSESSIVE.sub("", text)  # "Usher's" answers "who": Usher
        if not text or not any(ch.isalnum() for ch in text) or _MARKUP.search(text):
            return
        start = sentence.index(text, start)
        key = (start, start + len(text))
        if any(a <= key[0] and key[1] <= b for a, b in notes):
            return  # a reference mark ("[163]"), not something the text states
        if key not in found:
            found[key] = Span(text, kind, key[0], key[1])

    for m in _FREQUENCY.finditer(sentence):
        add(m.start(), m.end(), "frequency")
    for m in _TIME.finditer(sentence):
        add(m.start(), m.end(), "time")
    for m in _DATE.finditer(sentence):
        add(m.start(), m.end(), "date")
    for m in _QUANTITY.finditer(sentence):
        if any(ch.isdigit() for ch in m.group()) and not (_ENUMERATION.match(m.group()) and not sentence[:m.start()].strip()):
            add(m.start(), m.end(), "quantity")
    for m in _COUNT_WORD.finditer(sentence):
        add(m.start(), m.end(), "quantity")
    for m in _NAME.finditer(sentence):
        if _CALENDAR.match(m.group()):
            add(m.start(), m.end(), "month")
        elif m.group().lower() not in STOPWORDS:
            add(m.start(), m.end(), "name")
            if " and " in m.group():  # "Neil Young and Astrid Young": each name on its own too
                at = m.start()
                for part in m.group().split(" and "):
                    add(at, at + len(part), "name")
                    at += len(part) + len(" and ")
    for start, end in _phrases(sentence):
        if any(ch.isalpha() for ch in sentence[start:end]):  # figures are quantities or nothing
            add(start, end, "phrase")
    return list(found.values())


def _phrases(sentence: str) -> list[tuple[int, int]]:
    """Runs of up to in_effect().answer.max_phrase_words content words, split at function words and punctuation."""
    out = []
    offset = 0
    for piece in _PHRASE_BREAK.split(sentence):
        base = sentence.find(piece, offset)
        offset = base + len(piece)
        run: list[re.Match] = []
        for m in re.finditer(r"[\w'’.$%-]+", piece):
            if m.group().lower().strip(".") in STOPWORDS:
                if run:
                    out.append((base + run[0].start(), base + run[-1].end()))
                run = []
                continue
            run.append(m)
            if len(run) == in_effect().answer.max_phrase_words:
                out.append((base + run[0].start(), base + run[-1].end()))
                run = []
        if run:
            out.append((base + run[0].start(), base + run[-1].end()))
    return out


_SPECIFIC = re.compile(rf"[$€£¥%]|\b{_SCALE}\b|[a-z]{{2,}}", re.IGNORECASE)


def is_specific(span: Span) -> bool:
    """A quantity that carries a currency, scale or unit ("$3.6 million", "52 hours"), not a bare
    number, which is as often a note mark, a count of something else or part of a code."""
    return span.kind == "quantity" and bool(_SPECIFIC.search(span.text))


def fits(span: Span, want: str) -> float:
    """How well a span's kind fits the answer kind the question wants: 1 fits, 0 neutral, <0 not."""
    if want == "option":
        return 0.0
    if want == "any":  # "what series", "which device": a thing, rarely a bare number or a date
        return -0.3 if span.kind in ("quantity", "date", "time", "month") else 0.0
    if want == "frequency":
        return 1.0 if span.kind == "frequency" else (-0.2 if span.kind == "quantity" else -0.5)
    if want == "duration":
        return 1.0 if span.kind == "quantity" and _TIME_UNITS.search(span.text) else (
            0.3 if span.kind == "quantity" else -0.5)
    if want == "date":  # a time of day ("3 a.m.") answers "what time" and "when"; a month alone, barely
        return 1.0 if span.kind in ("date", "time") else (
            0.3 if span.kind == "month" else -0.2 if span.kind == "quantity" else -0.5)
    if want == "month":
        return 1.0 if span.kind == "month" else (0.5 if span.kind == "date" else -0.5)
    if want == "quantity":
        return (1.0 if is_specific(span) else 0.8) if span.kind == "quantity" else -0.5
    if want == "name":
        return 1.0 if span.kind == "name" else (-0.2 if span.kind == "phrase" else -0.5)
    return 0.0


def names_head(span: Span, head: str | None) -> bool:
    """The span carries the question's head noun ("Avery County" for "what county")."""
    return bool(head) and span.kind in ("name", "phrase") and any(
        w == head or w.rstrip("s") == head.rstrip("s") for w in words(span.text))


_NOT_UNITS = {"about", "around", "over", "under", "nearly", "almost", "roughly", "some", "approximately",
              "more", "less", "than", "up", "to", "at", "least", "most", "of", "a", "an", "the", "and",
              "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
              "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "hundreds", "dozen", "dozens"}


def counts(span: Span, noun: str | None) -> float:
    """+1 when a quantity counts the question's noun ("118,000 people"), -1 when it counts something
    else ("640 kilometres"), 0 for a bare number or no noun."""
    if not noun or span.kind != "quantity":
        return 0.0
    units = [w for w in words(span.text) if w.isalpha() and w not in _NOT_UNITS and not re.fullmatch(_SCALE, w)]
    if not units:
        return 0.0
    stem = noun.rstrip("s")[:5]
    return 1.0 if any(w.rstrip("s")[:5] == stem for w in units) else -1.0


# What a quantity measures, from its unit; and what a question asks to be measured, from the words
# that name the measure unambiguously ("population" is a count, "how far" a length; "growth" or
# "rate" could be a percentage or an amount, so they name none).
_MEASURES = {  # area before length: "square miles" is an area
    "area": re.compile(r"(?:\b(?:acres?|hectares?|sq\.? ?(?:ft|mi|km)|square (?:feet|met(?:er|re)s|miles|kilomet(?:er|re)s)|km2)|"
                      r"km²)$", re.I),
    "length": re.compile(r"\b(?:km|kilomet(?:er|re)s?|met(?:er|re)s?|m|cm|mm|miles?|feet|foot|ft|inch(?:es)?)$", re.I),
    "mass": re.compile(r"\b(?:kg|kilograms?|grams?|g|tonnes?|tons?|pounds?|lbs?)$", re.I),
    "percent": re.compile(r"(?:%|\bpercent|\bper cent|\bpercentage points?|\bbasis points|\bbps)$", re.I),
    "money": re.compile(r"[$€£¥]"),
    "time": _TIME_UNITS,
}


def measures(span: Span, measure: str | None) -> float:
    """+1 when a quantity measures what the question asks ("2,913,123" or "2.9 million people" for a
    population, "$4.1 million" for a cost), -1 when its unit measures something else ("213,100 km"
    for a population, "12%" for a cost), 0 otherwise."""
    if measure is None or span.kind != "quantity":
        return 0.0
    text = span.text.strip()
    own = next((name for name, unit in _MEASURES.items() if unit.search(text)), None)
    if measure == "count":  # a count is a bare number, or a number of people
        if own is not None:
            return -1.0
        return 1.0 if re.search(r"\b(?:people|inhabitants|residents)$", text, re.I) or re.search(r"\d", text) else 0.0
    if own is None:
        return 0.0
    return 1.0 if own == measure else -1.0


_CASTING = r"(?:as|plays|played|portrays|portrayed|voices|voiced)"  # what joins an actor to a role
_CAST_AFTER = re.compile(rf"\s*,?\s+{_CASTING}\s+(?:the\s+)?([\w'’-]+)", re.I)
_CAST_LINE = re.compile(rf"\s*,?\s+{_CASTING}\s+([^.;()\n]{{1,80}})", re.I)  # the whole line after it
_CAST_BEFORE = re.compile(r"((?:[\w'’-]+\s+){0,2}[\w'’-]+)\s*,?\s+(?:is|was|are|were)?\s*(?:played|portrayed|voiced)\s+by\s+$", re.I)


_ROLE_BEFORE = re.compile(rf"((?:[\w'’.-]+\s+){{0,3}}[\w'’.-]+)\s*,?\s+{_CASTING}"
                          r"\s+(?:the\s+)?$", re.I)
_ROLE_AFTER = re.compile(r"\s*,?\s+(?:is|was)?\s*(?:played|portrayed|voiced)\s+by\s+((?:[\w'’.-]+\s+){0,2}[\w'’.-]+)", re.I)


def cast_as(span: Span, sentence: str, actor: set[str]) -> bool:
    """The sentence casts the asked actor as the span: "Ewan McGregor as Lumière", "Lumière is
    voiced by Ewan McGregor"."""
    if not actor or span.kind != "name" or span.start < 0 or set(words(span.text)) & actor:
        return False
    return bool(_named_around(span, sentence, _ROLE_BEFORE, _ROLE_AFTER) & actor)


def casts(span: Span, sentence: str, role: set[str]) -> bool:
    """The sentence casts the span in the asked role: "Rhys Darby as Charles", "Dan Stevens plays
    the Beast", "Charles is played by Rhys Darby". A role asked as someone's relation ("marty's
    sister": `role` holds the ROLE_OF marker) needs both words in what the cast line says of the
    span: "Wendie Jo Sperber as Linda McFly , Marty 's older sister", not "Michael J. Fox as Marty
    McFly"."""
    if not role or span.kind != "name" or span.start < 0:
        return False
    if ROLE_OF not in role:
        return bool(_named_around(span, sentence, _CAST_BEFORE, _CAST_AFTER) & role)
    line = _CAST_LINE.match(sentence, span.end)
    return bool(line) and role - {ROLE_OF} <= set(words(line.group(1)))


def _named_around(span: Span, sentence: str, before: re.Pattern, after: re.Pattern) -> set[str]:
    """The words a cast list gives the span's counterpart: those `before` finds just before the
    span ("Jennifer Parker is played by" / "Ewan McGregor as") and `after` just after it."""
    found = before.search(sentence[max(0, span.start - 60):span.start])
    following = after.match(sentence, span.end)
    return ((set(words(found.group(1))) if found else set())
            | (set(words(following.group(1))) if following else set()))


def defines(span: Span, sentence: str, head: str | None) -> bool:
    """The sentence says the span IS the question's head noun ("Ferric sulphate is the coagulant",
    "the coagulant is ferric sulphate"), for a "what coagulant ..." question."""
    if not head or span.start < 0 or span.kind not in ("name", "phrase"):
        return False
    noun = rf"(?:[\w-]+\s+){{0,2}}{re.escape(head)}s?"
    return bool(re.match(rf"\s*(?:is|was|are|were)\s+(?:the|a|an|its|our)\s+{noun}\b", sentence[span.end:], re.I)
                or re.search(rf"\bthe\s+{noun}\s+(?:used\s+)?(?:is|was|are|were)\s+$", sentence[:span.start], re.I))


YEAR = re.compile(r"\b(?:1[0-9]|20)\d\d\b")  # a year from 1000 to 2099


def year_of(span: Span, asked: Asked) -> Span:
    """For "in what year ...", a date's year alone ("2019" of "December 31, 2019")."""
    if span.kind != "date" or not asked.asks_year:
        return span
    match = YEAR.search(span.text)
    if match is None or match.group() == span.text:
        return span
    start = span.start + match.start() if span.start >= 0 else -1
    return Span(match.group(), "date", start, start + len(match.group()) if start >= 0 else -1)


_LOCATIVE_BEFORE = re.compile(r"\b(?:in|at|from|near|into|outside|inside|within|based in|born in)\s+(?:the\s+)?$", re.I)


def placed(span: Span, sentence: str, asked: Asked) -> bool:
    """For a "where" question, a name the sentence introduces with a place's preposition
    ("formed in Leyton", "recorded in Fujioka"): a place, not a person or a title."""
    return (span.kind in ("name", "phrase") and span.start > 0 and asked.asks_place
            and bool(_LOCATIVE_BEFORE.search(sentence[max(0, span.start - 24):span.start])))


_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:ish|ese|an|ic|ch|i)$")  # French, Swedish, Chinese, Mexican, Iraqi
_NEXT_WORD = re.compile(r"^[\s-]+([a-z][a-z-]*)")


def nationality(span: Span, sentence: str, asked: Asked) -> bool:
    """For a "which country" question, a nationality said of someone ("a French nobleman", "the
    Chinese court"): the word is shaped like one and goes before a noun; the country itself is
    another span ("in Sweden")."""
    if span.kind != "name" or not asked.asks_country or not _DEMONYM.match(span.text):
        return False
    after = _NEXT_WORD.match(sentence[span.end:])
    word = after.group(1) if after else ""
    return bool(word) and word not in STOPWORDS and word not in _VERBS and not word.endswith(("ed", "s"))


# verbs a country's name goes before ("Japan became", "Iran won"), which "-ed" and "-s" miss
_VERBS = {"became", "become", "won", "lost", "left", "took", "sent", "began", "fought", "made", "gave", "held",
          "beat", "ran", "came", "went", "got", "kept", "led", "paid", "sold", "bought", "built", "saw", "had"}


_RANGE_AFTER = re.compile(r"\.?\s*(?:to|until|till|through|thru|[-–—])\s+\S", re.I)
_RANGE_BEFORE = re.compile(r"\b(?:to|until|till|through|thru)\s+$|[-–—]\s*$", re.I)


def range_side(span: Span, sentence: str, end: int) -> float:
    """-1 for a span on the wrong side of a range for the question's `end` (asked_end): the span
    that opens it ("7 a.m." of "7 a.m. to 3 a.m.") when the end is asked, the one that closes it
    when the start is; 0 for a span in no range or a question about neither end."""
    if not end or span.start < 0 or span.kind not in ("date", "time", "quantity"):
        return 0.0
    opens = bool(_RANGE_AFTER.match(sentence, span.end))
    closes = bool(_RANGE_BEFORE.search(sentence[max(0, span.start - 12):span.start]))
    if opens == closes:
        return 0.0
    return -1.0 if (opens and end > 0) or (closes and end < 0) else 0.0


def repeats_question(span: Span, asked: Asked) -> bool:
    """A span made only of the question's own words (a name's words perhaps as the question's
    initials) does not answer it, nor does a figure or date that holds a number the question
    states ("3 June 1925" for "the King who made the 1925 Birthday Honours was born when?", "12
    million" for "how many of the 12 million ...")."""
    said_words = set(asked.words)
    mine = [w for w in words(span.text) if w not in STOPWORDS]
    if span.kind in ("quantity", "date", "time") and any(w in said_words for w in mine if w[:1].isdigit()):
        return True
    # "Robert Clark Seger" repeats "Robert C Seger": a name's word may stand as its initial
    initials = {w for w in said_words if len(w) == 1 and w.isalpha()} if span.kind == "name" else set()
    said = [w in said_words for w in mine]
    return any(said) and all(s or (len(w) > 1 and w[0] in initials) for w, s in zip(mine, said))
