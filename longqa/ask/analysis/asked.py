"""What a question asks, read once: the `Asked` record every later step consults.

The question's wording decides the answer's kind ("how long" wants a duration, "who" a name, an
opening auxiliary verb a yes or no), the noun it names ("which county"), what it counts, the measure
it wants, the options it offers. These are read here, once per question, and travel on the
analysis; the search and the answer stage never re-read the question string for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from longqa.ask.analysis import arithmetic, rules
from longqa.ask.analysis.arithmetic import Arithmetic
from longqa.text.words import STOPWORDS, content_terms, words


# What a question asks for, from its wording.
# A passage to quote: "Quote the clauses of the lease that ...", and requests for a procedure or
# an explanation ("What do I do if ...", "Could you explain ..."), whose answer is a sentence of
# the documents, not a span of one. It decides before anything else the question asks.
_SENTENCE = re.compile(r"^\s*(?:highlight|quote|cite|find|show|extract)\b[^?]*\b(?:parts?|clauses?|sentences?|"
                       r"passages?|provisions?|language|text)\b|"
                       r"\b(?:what (?:do|should|can|must) (?:i|we)|how (?:do|can|should|would) (?:i|we)|"
                       r"(?:could|can|would) you (?:please )?(?:explain|tell me|describe)|"
                       r"what (?:is|are) the (?:steps|requirements|process|procedure))\b|"
                       # A user speaking for themselves ("I want to know which filter fits
                       # my boiler", "Can I run it while the pump is out?") or a role to play ("act
                       # as the site's safety officer and answer") wants the sentence that tells them.
                       r"(?-i:(?:^|[\s,.!?])(?:I['’]m|I['’]ve|My|my|me)(?=[\s,.!?]|$))|"
                       r"\b(?:can|do|should|am|could|may|would|will|did|must|have) (?-i:I)\b|"
                       r"(?-i:\bI) (?:am|was|want|wanted|need|have|had|can|could|should|would|will|do|did|"
                       r"don['’]t|get|got|ask|think|know|live|work|just|also|still|plan|hope|lost|received|"
                       r"applied|moved|owe|use|pay|recently|already)\b|\bact as\b", re.I)


_WANTS = [
    ("yesno", re.compile(r"^\s*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|"
                          r"shall|may|might|must)\b", re.I)),
    ("frequency", re.compile(r"\bhow often\b|\bhow frequently\b|\bat what interval", re.I)),
    ("duration", re.compile(r"\bhow (?:long|many (?:hours|days|weeks|months|years|minutes|seconds))\b", re.I)),
    ("month", re.compile(r"\b(?:what|which) (?:month|day of the week)\b", re.I)),
    ("date", re.compile(r"\b(?:when|what (?:year|date|day|month|time)|which (?:year|date|day|month)|"
                        r"in what year)\b", re.I)),
    ("quantity", re.compile(r"\b(?:how (?:many|much|far|large|big|high|tall|old|deep|wide|often|heavy)|"
                            r"what (?:percentage|percent|proportion|share|amount|number|ratio|rate|total|"
                            r"value|price|cost|size|level)|how much)\b|%|"
                            r"\bwhat (?:is|was|were|are) (?:the )?(?:[\w'’-]+ ){0,4}(?:value|amount|price|cost|"
                            r"revenues?|fees?|income|sales|total|sum|average|ratio|percentage|rate|number|count|"
                            r"margin|expenses?|profit|loss|debt|cash|assets|liabilities|balance|growth|change|"
                            r"compensation|salary|dividends?|earnings|spending|capex|population|area|size|"
                            r"height|length|distance|depth|weight|capacity|budget|temperature|snowfall|"
                            r"rainfall|attendance|speed|elevation|duration|dose|dosage|concentration|"
                            r"residual|pressure|volume|flow|use|usage|consumption|output|demand)\b", re.I)),
    ("name", re.compile(r"\b(?:who|whom|whose|which (?:company|person|man|woman|author|team|city|country|"
                        r"film|band|university|player|organi[sz]ation)|what (?:company|city|country|"
                        r"is the name|was the name)|where)\b", re.I)),
]


_ALTERNATIVES = re.compile(r",?\s+((?:the\s+)?[\w'’.&-]+(?:\s+[\w'’.&-]+){0,5})\s+or\s+((?:the\s+)?[\w'’.&-]+"
                           r"(?:\s+[\w'’.&-]+){0,5})\s*\??\s*$", re.I)


# "(A) text": multiple-choice questions list their options this way (one a line, or inline once
# the question's whitespace is collapsed). Options must run A, B, C, ... in order.
_LETTER = re.compile(r"(?:^|\s)\(([A-J])\)\s+")


def lettered_options(question: str) -> dict[str, str]:
    """{'A': text, 'B': text, ...} as listed in the question; empty when it lists fewer than two."""
    marks = [m for m in _LETTER.finditer(question)]
    start = next((i for i, m in enumerate(marks) if m.group(1) == "A"), None)
    if start is None:
        return {}
    run = [marks[start]]
    for m in marks[start + 1:]:
        if ord(m.group(1)) == ord(run[-1].group(1)) + 1:
            run.append(m)
    if len(run) < 2:
        return {}
    ends = [m.start() for m in run[1:]] + [len(question)]
    return {m.group(1): question[m.end():end].strip() for m, end in zip(run, ends)}


# A role or task set before the question itself ("You are the plant's shift engineer; answer this
# question: How often is the filter changed?"): the words that say what is asked come after it.
_PREAMBLE = re.compile(r"^.{0,300}?\b(?:answer|following) (?:the|this) question\s*:\s*(?=\S)", re.I | re.S)


def question_core(question: str) -> str:
    """The question without a preamble that only sets a role or a task."""
    return _PREAMBLE.sub("", question, count=1).strip() or question.strip()


def question_stem(question: str) -> str:
    """The question without its lettered options."""
    marks = [m for m in _LETTER.finditer(question) if m.group(1) == "A"]
    return question[:marks[0].start()].strip() if marks and lettered_options(question) else question.strip()


# "when" or "where" after a noun opens a relative clause ("Who was president when the area ...
# became a state?", "The state where X died has how many districts?"): it describes, it does not
# ask. Only one that opens the question or a clause asks: first (after a preposition at most), or
# after a comma, "and" or "but".
_WHEN_WHERE = re.compile(r"\b(?:when|where)\b", re.I)


_ASKS_HERE = re.compile(r"(?:^|[,;:]|\b(?:and|but))\s*(?:(?:in|at|to|on|from)\s+)?$", re.I)


def _asking_words(question: str) -> str:
    """The question with its relative "when"/"where" blanked out."""
    return _WHEN_WHERE.sub(lambda m: m.group() if _ASKS_HERE.search(m.string[:m.start()]) else "_" * len(m.group()),
                           question.strip())


# Broad requests whose answer is a summary of a part of the documents, not a span or one sentence.
_SUMMARY = re.compile(
    r"^\s*(?:please\s+)?(?:summari[sz]e|sum up|outline|give (?:me )?(?:a |an )?(?:summary|overview|outline)|"
    r"(?:what is|what's) (?:a |the )?(?:summary|overview|gist)\b|"
    r"what (?:does|do) (?:the |this )?(?:section|chapter|clause|part|article|appendix|annex|document|report|manual|"
    r"standard|licen[cs]e|contract|agreement|policy)\b[^?]*\b(?:say|cover|describe|require|specify)|"
    r"list (?:all |the |every )|what are (?:the |all )?(?:main |key )?(?:points|requirements|conditions|"
    r"obligations|steps|findings|recommendations)\b)", re.I)
# A yes/no question by its form: it opens with an auxiliary verb. Requests that open the same way
# ("Could you explain ...", "Can you tell me ...") ask for an explanation instead.
_AUXILIARY_OPENING = re.compile(r"^\s*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|"
                                r"shall|may|might|must|isn['’]t|aren['’]t|doesn['’]t|don['’]t|can['’]t)\b", re.I)
_REQUEST = re.compile(r"^\s*(?:could|can|would|will)\s+you\b", re.I)


def wanted(question: str) -> str:
    """The answer kind a question asks for: summary (a part of the documents summarised), yesno
    (by its form: an opening auxiliary verb), sentence (a passage to quote), option, frequency,
    duration, month, date, quantity, name, or any."""
    if _SUMMARY.search(question):
        return "summary"
    if _AUXILIARY_OPENING.match(question) and not _REQUEST.match(question) and not _ALTERNATIVES.search(question):
        return "yesno"
    if _SENTENCE.search(question):
        return "sentence"
    if _ALTERNATIVES.search(question):
        return "option"
    asking = _asking_words(question)
    for kind, pattern in _WANTS:
        if pattern.search(asking):
            return kind
    return "any"


def alternatives(question: str) -> list[str]:
    """The two options a question offers ("..., A or B?"), when it offers them."""
    match = _ALTERNATIVES.search(question)
    if not match:
        return []
    first = match.group(1)
    # "Which is longer, the north main or the south main" → keep what follows the comma or the verb phrase
    first = re.split(r",\s*|\b(?:is|was|are|were|did|does|has|had)\s+", first)[-1].strip()
    words_ = first.split()
    while len(words_) > 1 and words_[0][:1].islower() and words_[0].lower() not in ("the", "a", "an"):
        words_ = words_[1:]  # "newer Model 4 pump" → "Model 4 pump"
    first = " ".join(words_)
    return [re.sub(r"^the\s+", "", x.strip(), flags=re.I) for x in (first, match.group(2)) if x.strip()]


_HEAD = re.compile(r"\b(?:what|which)\s+(?:kind of |type of |sort of )?([a-z][\w-]+)", re.I)


_NOT_HEADS = STOPWORDS | {"year", "date", "day", "month", "time", "number", "percentage", "amount"}


def head_noun(question: str) -> str | None:
    """The noun a "what X" / "which X" question names ("What county ..." → county), when it
    names one: an answer that is a county usually says "County"."""
    match = _HEAD.search(question)
    word = match.group(1).lower() if match else None
    return word if word and word not in _NOT_HEADS else None


_COUNTED = re.compile(r"\bhow\s+(?:many|much)\s+([a-z][a-z-]+)|\bnumber\s+of\s+([a-z][a-z-]+)", re.I)


def counted_noun(question: str) -> str | None:
    """What a "how many X" question counts ("how many people ..." → people), when it names it."""
    match = _COUNTED.search(question)
    word = (match.group(1) or match.group(2)).lower() if match else None
    return word if word and word not in STOPWORDS else None


_ASKS_MEASURE = [
    ("count", re.compile(r"\bpopulation\b|\bhow many (?:people|inhabitants|residents)\b|\bnumber of (?:people|inhabitants|residents)\b", re.I)),
    ("length", re.compile(r"\bhow (?:far|tall|high|deep|wide)\b|\b(?:distance|height|length|elevation|depth|altitude)\b", re.I)),
    ("area", re.compile(r"\b(?:area|how large an area)\b", re.I)),
    ("mass", re.compile(r"\bhow heavy\b|\bweight\b", re.I)),
    ("percent", re.compile(r"\b(?:what|which) (?:percentage|percent|proportion|share)\b|%", re.I)),
    ("money", re.compile(r"\b(?:how much (?:money|did|does|do|was|is)|cost|price|revenues?|sales|income|salary|"
                         r"compensation|fees?|dividends?|budget|spending|capex)\b", re.I)),
]


def asked_measure(question: str) -> str | None:
    """The measure a quantity question names unambiguously: count, length, area, mass, percent,
    money; None when it names none (or when it asks how many of a thing: counts() reads that)."""
    for measure, pattern in _ASKS_MEASURE:
        if pattern.search(question):
            return measure
    return None


_ASKS_YEAR = re.compile(r"\b(?:what|which)\s+year\b", re.I)


_ASKS_PLACE = re.compile(r"\bwhere\b", re.I)


_ASKS_AMOUNT = re.compile(r"\bhow (?:many|much)\b", re.I)


_ASKS_END = re.compile(r"\b(?:stops?|stopped|ends?|ended|close[sd]?|closing|finish(?:es|ed)?|until|latest|"
                       r"last call|cut[- ]?off)\b", re.I)


_ASKS_START = re.compile(r"\b(?:starts?|started|begins?|began|opens?|opened|opening|earliest)\b", re.I)


def asked_end(question: str) -> int:
    """+1 when the question asks where a range ends ("what time does the state stop selling
    alcohol"), -1 when it asks where one starts, 0 for neither (or both)."""
    return int(bool(_ASKS_END.search(question))) - int(bool(_ASKS_START.search(question)))


# The question word asks for a person: "Who ...", "whom", "whose", "With whom did ...", "which
# actor", "what is the name of the woman ...". A "who" inside the question ("the woman who played
# X") describes, it does not ask.
_ASKS_PERSON = re.compile(
    r"^\s*(?:(?:with|to|for|by|from|of|after) )?(?:who|whom|whose)\b|"
    r"^\s*(?:which|what) (?:person|people|man|woman|men|women|actor|actress|singer|author|writer|"
    r"director|producer|composer|player|politician|king|queen|president|artist|poet)\b|"
    r"\bthe name of the (?:person|man|woman|actor|actress|singer|author|writer|director|player)\b", re.I)
# ... or for something that is not a person.
_ASKS_THING = re.compile(
    r"^\s*(?:(?:in|at|from|to) )?where\b|"
    r"^\s*(?:in |at |from |to |on )?(?:which|what) (?:city|town|village|country|state|county|province|"
    r"region|continent|island|river|lake|mountain|place|company|organi[sz]ation|team|club|band|"
    r"university|school|film|movie|album|song|book|novel|series|show|newspaper|magazine|league|"
    r"conference|party|treaty|war|body of water)\b|"
    # a post, a trade, a belief: "what government position was held by ...", "what did he base it on"
    r"^\s*(?:in |at |from |to |on )?(?:which|what) (?:[a-z-]+ ){0,2}(?:position|office|title|occupation|"
    r"profession|job|religion|genre|language|nationality|ethnicity|award|prize|sport|instrument)s?\b|"
    r"^\s*what (?:did|does|do)\b", re.I)


def asks_person(question: str) -> int:
    """+1 when the question asks for a person, -1 when it asks for a place, an organisation or a
    work, 0 when its wording does not say."""
    if _ASKS_PERSON.search(question):
        return 1
    if _ASKS_THING.search(question):
        return -1
    return 0


_THING = r"((?:[a-z-]+ ){0,2}?[a-z-]+(?: of [a-z-]+(?: [a-z-]+)?)?)"
_ASKED_THING = re.compile(rf"^\s*(?:[A-Za-z]+ )?(?:what|which) {_THING}\s+(?:is|was|are|were|do|does|did|has|had|can|"
                          rf"could|will|would)\b|\b(?:what|which) {_THING}\s*\?\s*$", re.I)


def asked_thing(core: str) -> str:
    """The thing a "what X" / "which X" question names ("type of fastener"), or ""."""
    match = _ASKED_THING.search(core)
    thing = (match.group(1) or match.group(2)) if match else ""
    return "" if not thing or thing.split()[0].lower() in STOPWORDS else thing


_EARLIER = re.compile(r"\b(?:older|oldest|earlier|earliest|first|before|sooner)\b", re.I)
_LATER = re.compile(r"\b(?:younger|youngest|later|latest|newer|newest|more recent|most recent|after)\b", re.I)


def asked_order(question: str) -> str:
    """"earlier" when the question asks which came first ("which was issued first, A or B"),
    "later" when it asks which came last ("which revision is newer"), "" for neither or both."""
    earlier, later = bool(_EARLIER.search(question)), bool(_LATER.search(question))
    return "" if earlier == later else ("earlier" if earlier else "later")


@dataclass(frozen=True)
class Asked:
    """The question as read once: what it wants and the words that say so."""

    question: str  # whitespace collapsed
    core: str  # without a preamble that only sets a role or a task
    stem: str  # without its lettered options
    want: str  # sentence | option | yesno | frequency | duration | month | date | quantity | name | any
    letters: dict[str, str] = field(default_factory=dict)  # lettered options {'A': text, ...}
    options: tuple[str, ...] = ()  # the two alternatives of "..., A or B?"
    head: str | None = None  # the noun a "what X" / "which X" question names
    counted: str | None = None  # what a "how many X" question counts
    measure: str | None = None  # count | length | area | mass | percent | money (quantity questions)
    end: int = 0  # +1: asks when a range ends; -1: when it starts; 0: neither
    asks_year: bool = False
    asks_place: bool = False
    asks_amount: bool = False  # "how many", "how much"
    terms: tuple[str, ...] = ()  # content terms of the question, in order
    section: str = ""  # the section a question names by number ("section 3.2" -> "3.2")
    core_want: str = "any"  # `want` of the core alone (a role-play lead-in can make the whole want a sentence)
    bridged: bool = False  # describes what it asks through something else ("the state whose ...")
    described: tuple[str, ...] = ()  # the nouns a bridged question describes its bridge by
    arithmetic: Arithmetic | None = None  # the table operation it asks for (analysis/arithmetic.py)
    wants_person: int = 0  # +1: asks for a person; -1: for a place, an organisation or a work; 0: unsaid
    thing: str = ""  # the thing a "what X" / "which X" question names
    order: str = ""  # earlier | later: which of two options came first or last

    @property
    def words(self) -> list[str]:
        return words(self.question)


def read(question: str) -> Asked:
    """The `Asked` record of `question` (the only place the question's wording is parsed for it)."""
    question = " ".join(question.split())
    want, core = wanted(question), question_core(question)
    return Asked(
        question=question, core=core, stem=question_stem(question), want=want,
        letters=lettered_options(question), options=tuple(alternatives(question)),
        head=head_noun(question), counted=counted_noun(question),
        measure=asked_measure(question) if want in ("quantity", "any") else None,
        end=asked_end(question),
        asks_year=bool(_ASKS_YEAR.search(question)), asks_place=bool(_ASKS_PLACE.search(question)),
        asks_amount=bool(_ASKS_AMOUNT.search(question)), terms=tuple(content_terms(question)),
        section=_section_named(question), core_want=wanted(core), bridged=rules.is_bridged(question),
        described=tuple(rules.described_heads(core)), arithmetic=arithmetic.read(question),
        wants_person=asks_person(core), thing=asked_thing(core), order=asked_order(question))


_SECTION = re.compile(r"\b(?:section|chapter|clause|part|article|appendix|annex|§)\s*(\d+(?:\.\d+)*|[A-Z])\b", re.I)


def _section_named(question: str) -> str:
    match = _SECTION.search(question)
    return match.group(1) if match else ""
