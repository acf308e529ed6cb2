"""Candidate answer spans a sentence holds, by kind, and what a quantity measures.

A short answer is chosen from these spans, never written freely, so it cannot hold a number or a
name that the documents do not contain. Spans are character ranges of a sentence:
- quantities: numbers with their currency, scale and unit ("about 52 hours", "$1.2 billion", "12%");
- dates: "March 3, 2019", "June 2020", years; times of day; frequencies: "monthly", "every 18 months";
- names: runs of capitalised words ("Lena Marsh", "Bank of England");
- phrases: short runs of content words between function words and punctuation ("late winter").
How well a span fits what a question asks is the answer stage's business (ask/answer/span_fit.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa.text.words import STOPWORDS, words

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
# Reference marks of encyclopedia pages printed to PDF: "oral argument.[163]", "[note 2]", "[a]".
_FOOTNOTE = re.compile(r"\[(?:\d{1,4}|[a-z]|(?:note|nb|n)\s*\d{1,3}|citation needed)\]", re.I)
_POSSESSIVE = re.compile(r"['’]s?$")
# "(3) Tax Fees for fiscal 2019 ...": a note or list mark opening a sentence, not a quantity
# (elsewhere "(12)" is a negative figure).
_ENUMERATION = re.compile(r"^\(\d{1,2}\)$")
# References, not quantities: a manual page's section ("git-log(1)", "printf(3p)"), and the number
# after a word that names a part of a document ("section 2.3", "Chapter 4", "§ 12", "see 6.6.1").
_MAN_SECTION = re.compile(r"[\w.+-]\((?=\d[a-z]{0,3}\))")
_PART_WORD = re.compile(r"(?:\b(?:sections?|subsections?|chapters?|clauses?|paragraphs?|articles?|appendix|appendices|"
                        r"parts?|items?|notes?|figures?|fig\.|tables?|see|cf\.)|§§?)\s*$", re.IGNORECASE)
# A section number opening the sentence before its title: "2.3 Methods", "6.6.1. Maximum line length".
_HEADING_NUMBER = re.compile(r"\d{1,2}(?:\.\d{1,2})+\.?(?=\s+[A-Z])")
_PHRASE_BREAK = re.compile(r"[,;:()\[\]\"“”]|\s[-–—]\s|\.\s")

TIME_UNITS = re.compile(r"\b(?:hours?|hrs?|minutes?|mins?|seconds?|days?|weeks?|months?|years?|decades?)\b", re.I)

# Lower-case words inside a name ("Society for the Exploration of ..."); "and" also joins two
# names into one span here ("Ana Ruiz and Tom Hale"), which callers that split on it leave out.
NAME_LINKS = frozenset({"of", "for", "the", "de", "la", "von", "van", "&", "in", "on", "du", "del", "da"})


@dataclass(frozen=True)
class Span:
    text: str
    kind: str  # quantity | date | month | time | frequency | name | phrase (from a sentence); yesno | option
    start: int = -1  # offsets into the sentence; -1 for yes/no and options named by the question
    end: int = -1


def candidates(sentence: str, max_phrase_words: int) -> list[Span]:
    """Every candidate span of one sentence, longest first where they overlap the same start;
    phrases run to at most `max_phrase_words` content words."""
    found: dict[tuple[int, int], Span] = {}
    notes = [m.span() for m in _FOOTNOTE.finditer(sentence)]
    times: list[tuple[int, int]] = []

    def add(start: int, end: int, kind: str) -> None:
        text = sentence[start:end].strip(" .,;:()'\"“”")
        text = _POSSESSIVE.sub("", text)  # "Ana Ruiz's" answers "who": Ana Ruiz
        if not text or not any(ch.isalnum() for ch in text):
            return
        start = sentence.index(text, start)
        key = (start, start + len(text))
        if any(a <= key[0] and key[1] <= b for a, b in notes):
            return  # a reference mark ("[163]"), not something the text states
        if kind != "time" and any(a < key[1] and key[0] < b and not (key[0] <= a and b <= key[1]) for a, b in times):
            return  # a piece of a time of day ("00am" of "1:00am") says no time
        if kind == "time":
            times.append(key)
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
            if not reference(sentence, m.start(), m.end()):
                add(m.start(), m.end(), "quantity")
    for m in _COUNT_WORD.finditer(sentence):
        add(m.start(), m.end(), "quantity")
    for m in _NAME.finditer(sentence):
        if _CALENDAR.match(m.group()):
            add(m.start(), m.end(), "month")
        elif m.group().lower() not in STOPWORDS:
            add(m.start(), m.end(), "name")
            if " and " in m.group():  # "Ana Ruiz and Tom Hale": each name on its own too
                at = m.start()
                for part in m.group().split(" and "):
                    add(at, at + len(part), "name")
                    at += len(part) + len(" and ")
    for start, end in _phrases(sentence, max_phrase_words):
        if any(ch.isalpha() for ch in sentence[start:end]):  # figures are quantities or nothing
            add(start, end, "phrase")
    return list(found.values())


def reference(sentence: str, start: int, end: int) -> bool:
    """Whether the number at sentence[start:end] points somewhere instead of counting anything: a
    manual page's section, a part of a document named by its number, a section number opening the
    sentence before its title."""
    at = next(i for i in range(start, end) if sentence[i].isdigit())
    if at >= 2 and _MAN_SECTION.match(sentence, at - 2):
        return True
    if not re.fullmatch(r"\(?[\d.]+\)?", sentence[start:end].strip()):  # a unit or scale: a quantity
        return False
    opening = sentence[max(0, start - 16):start] + sentence[start:at].rstrip("(")
    return bool(_PART_WORD.search(opening)) or not sentence[:at].strip() and bool(_HEADING_NUMBER.match(sentence, at))


def _phrases(sentence: str, max_words: int) -> list[tuple[int, int]]:
    """Runs of up to `max_words` content words, split at function words and punctuation."""
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
            if len(run) == max_words:
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
    "time": TIME_UNITS,
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

YEAR = re.compile(r"\b(?:1[0-9]|20)\d\d\b")  # a year from 1000 to 2099

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
