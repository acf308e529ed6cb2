"""Evidence, two questions: is anything in the store relevant at all (else `ask` exits 4), and
does the first retrieval already hold the answer (else the organizer widens the context).

Relevant at all, decided from retrieval evidence without the generator:
- term coverage: the IDF-weighted share of the question's content words that occur in some leaf's
  text or section path (an article may name its subject only in its heading). A question about "tungsten" asked of SEC filings keeps only generic words: low coverage.
- the best dense cosine between the question and any leaf.
The store holds nothing relevant when BOTH are low. Either alone is too brittle: a paraphrase can
miss the rare words yet sit close in embedding space; a question sharing a rare name with the
store can be far from every leaf in embedding space and still be answerable.

Calibration: eval/relevance-gate-tune.json (`bench/relevance.py`, all-MiniLM-L6-v2): each tune-half
store asked its own questions and other datasets' questions, and the sample handbook asked questions
in users' words and dev questions. Found = cosine >= `relevance.cosine_min` or coverage >=
`relevance.coverage_min` refuses 2 of 170 answerable questions and lets 44 of 151 foreign ones through
(those get "The documents do not say." at best). Many "foreign" questions share a domain with the
store (two Wikipedia sets), so that figure overstates the harm. The cosine threshold belongs to that
embedder; another embedder's cosines sit on another scale.

Whether the passages found already hold the answer is the search loop's sufficiency judgement
(search/loop.py, OkraLong's "containing"): it reads the IDF-weighted share of the question's words
in the passages (`top_share`) and whether they hold something of the shape asked for
(`answer_shape_present`) from here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import sqlite_utils

from longqa.text.stems import suffix_stem
from longqa.ask.settings import DEFAULTS, in_effect
from longqa.retrieve.bm25 import matched_terms
from longqa.text.words import content_terms
from longqa.store.nodes import leaf_count

# Words that say what to do with the documents, not what they are about: "Summarize the emergency
# procedures" is about emergency procedures even if no document says "summarize".
META_WORDS = frozenset(
    "summarize summarise summary summaries overview overall discuss discussed briefly brief mention "
    "mentioned mentions document documents paper article text passage passages detail details "
    "detailed main key important information describe described explain explained "
    # verbs that only frame a question ("What happens if ...", "What does NTU mean?")
    "happen happens happened say says said tell tells told get gets got mean means meant "
    # where in a document, not what about: "Summarise section 3", "What does chapter 2 cover?"
    "section sections chapter chapters clause clauses appendix annex".split()
)
# A request to quote ("Quote the clauses of the lease related to X"): only X is the
# topic; the words of the request are in no document and say nothing about relevance.
_REQUEST = re.compile(r"^\s*(?:highlight|quote|cite|find|show|extract|list)\b[^?]{0,80}?\b"
                      r"(?:related to|relating to|relevant to|regarding|concerning|about|on)\s+", re.I)


def topic_of(question: str) -> str:
    """The question without the wording of a request to quote, when it is one."""
    return _REQUEST.sub("", question, count=1).strip() or question




@dataclass
class EvidenceCheck:
    found: bool
    coverage: float  # IDF-weighted share of the question's content words present in leaf text
    max_cosine: float | None  # best dense similarity, None when dense retrieval was not used
    missing: list[str]  # content words no leaf contains
    weights: dict[str, float] = field(default_factory=dict)  # IDF of the words the store does hold
    topical: bool = True  # the question names a topic at all ("Summarize the document." does not)

    def as_dict(self) -> dict:
        return {"found": self.found, "coverage": round(self.coverage, 4),
                "max_cosine": None if self.max_cosine is None else round(self.max_cosine, 4),
                "missing": self.missing}


def term_weights(
    db: sqlite_utils.Database, question: str, doc_ids: list[int] | None = None
) -> dict[str, tuple[float, int]]:
    """Per content word of the question: (IDF over leaves, leaves containing it, capped at 1000)."""
    counts = {t: n for t, n in matched_terms(db, question, doc_ids, in_effect().retrieval).items() if t not in META_WORDS}
    total = leaf_count(db, doc_ids) or 1
    return {term: (math.log(1 + total / (1 + min(n, total))), n) for term, n in counts.items()}


def _coverage(weighted: dict[str, tuple[float, int]]) -> tuple[float, list[str], dict[str, float]]:
    whole = sum(w for w, _ in weighted.values())
    covered = sum(w for w, n in weighted.values() if n > 0)
    missing = [term for term, (_, n) in weighted.items() if n == 0]
    present = {term: w for term, (w, n) in weighted.items() if n > 0}
    return (covered / whole if whole > 0 else 0.0), missing, present


def check(
    db: sqlite_utils.Database, question: str, max_cosine: float | None, doc_ids: list[int] | None = None,
    coverage_min: float = DEFAULTS.relevance.coverage_min, cosine_min: float = DEFAULTS.relevance.cosine_min,
    unseen_by_dense: bool = False,
) -> EvidenceCheck:
    """`unseen_by_dense`: some of BM25's best leaves have no vector yet (a document stored with
    `ingest --no-embed`, or its embedding interrupted), so no cosine can speak for them."""
    question = topic_of(question)
    coverage, missing, present = _coverage(term_weights(db, question, doc_ids))
    topical = any(t not in META_WORDS for t in content_terms(question))
    found = relevant(coverage, max_cosine, topical, coverage_min, cosine_min, unseen_by_dense)
    return EvidenceCheck(found=found, coverage=coverage, max_cosine=max_cosine, missing=missing, weights=present,
                         topical=topical)


def relevant(coverage: float, max_cosine: float | None, topical: bool = True,
             coverage_min: float = DEFAULTS.relevance.coverage_min, cosine_min: float = DEFAULTS.relevance.cosine_min,
             unseen_by_dense: bool = False) -> bool:
    """The decision itself, from check's measures (bench/relevance.py replays it over thresholds).
    Leaves dense search cannot see are judged as a store without vectors is: by words alone."""
    if not topical:
        # No topic at all ("Summarize the document.", "What is this about?"): nothing can be
        # absent, so the question is answered from whatever the retrieval ranks first.
        return True
    words_only = coverage >= min(coverage_min, in_effect().relevance.coverage_only_min)
    if max_cosine is None:
        return words_only
    return coverage >= coverage_min or max_cosine >= cosine_min or (unseen_by_dense and words_only)


def top_share(question: str, texts: list[str], weights: dict[str, float] | None = None) -> float:
    """Share of the question's content words found in `texts`, weighted by `weights` (IDF) when
    given, and then counting only the words the store holds at all: an instruction word such as
    "decimal" that no document uses says nothing about these passages. 1.0 when nothing counts."""
    terms = content_terms(question)
    if weights:
        terms = [t for t in terms if t in weights]
    if not terms:
        return 1.0
    present = {suffix_stem(w) for w in content_terms(" ".join(texts))}
    weight = (lambda t: weights[t]) if weights else (lambda t: 1.0)
    whole = sum(weight(t) for t in terms)
    return sum(weight(t) for t in terms if suffix_stem(t) in present) / whole if whole else 1.0


# The kinds of answer (Asked.want, read once in ask/analysis/asked.py) whose shape can be seen in text.
FIGURE_WANTS = frozenset({"quantity", "duration", "frequency"})
TIME_WANTS = frozenset({"date", "month"})
_FIGURE = re.compile(r"\d[\d,.]*")
_YEAR_OR_MONTH = re.compile(r"\b(1[5-9]\d\d|20\d\d|January|February|March|April|May|June|July|August|September|"
                            r"October|November|December)\b")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")


def answer_shape_present(want: str, question: str, texts: list[str]) -> bool:
    """Does the selected text hold something of the shape the question asks for (`want`, its
    Asked record's), beyond the question's own words? A figure for a quantity, a duration or a
    frequency, a year or month for a date, a name for a name; True for other questions. Word
    coverage alone says the passage is ABOUT the question; a paragraph naming the revenue
    without the figure is not the answer."""
    text = " ".join(texts)
    if want in FIGURE_WANTS:
        asked = set(_FIGURE.findall(question))
        return any(f not in asked for f in _FIGURE.findall(text))
    if want in TIME_WANTS:
        asked = set(_YEAR_OR_MONTH.findall(question))
        return any(f not in asked for f in _YEAR_OR_MONTH.findall(text))
    if want == "name":
        asked = {w.lower() for w in re.findall(r"\w+", question)}
        return any(w.lower() not in asked for w in _CAPITALISED.findall(text))
    return True
