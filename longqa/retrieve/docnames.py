"""A document-level signal: how well the question names a document (its title, file name, a
manual page's programs, its opening heading).

Questions over a shelf of filings name the company and the year ("Nike's revenue in FY2018");
file names and titles carry exactly those words (NIKE_2018_10K.pdf). Questions over a shelf of
manuals name the program or module ("What does git log --follow do?", "fs.readFile()"); a manual
page's NAME line says which programs it is about (title "gzip, gunzip, zcat - compress or expand
files"), and a text's opening heading what it is ("THE SED FAQ").

A document has several names, each a set of words: its title with its file name, the file name
alone, each program its NAME line gives (or the whole title), and, for a document titled only by
its file name, its first top-level heading that is not a generic section name. A word weighs by
how few documents' names hold it (IDF over names), so a word every document shares counts for
little, and a document scores the weight of its name words the question says. A question that
says one of a document's names whole ("sed", "git log", "fs") names it more than the documents
whose names it only touches: beside such a document, each of those counts only the share of its
best name that the question says ("sed" of "THE SED FAQ", "file" of "File system"). Where no name
is said whole (a year that several filings' names share), the weights alone decide. A file name
often glues a company's words (MGMRESORTS, BESTBUY): a name the question says may open such a
word.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from longqa.parse.doc_title import generic_heading, named_programs
from longqa.retrieve.terms import STOPWORDS, content_terms, words
from longqa.store.db import database_name
from longqa.store.documents import document_labels, documents_version, top_headings

_NAME_CACHE: dict[tuple[str, int, int], dict[int, "Identity"]] = {}
_WEIGHT_CACHE: dict[str, object] = {}  # the last scope's name-word weights, by its key


_RUN = re.compile(r"[a-zA-Z]+|\d+")
# A word's name words (itself and its runs, stopwords out), kept across documents: a shelf's titles
# and file names repeat most of their words ("annual", "report", a year). A fresh process made
# 1,000 documents' names in 56 ms CPU before, 18 ms with this and _raw_stem.
_WORD_NAMES: dict[str, frozenset[str]] = {}
_WORD_NAMES_MAX = 200_000


def with_runs(terms: set[str]) -> set[str]:
    """`terms` and their letter/digit runs of two or more characters (2022q4 → 2022q4, 2022)."""
    found = set(terms)
    for term in terms:
        found.update(_runs(term))
    return found


def _runs(term: str) -> list[str]:
    return [part.lower() for part in _RUN.findall(term) if len(part) > 1]


def _word_names(word: str) -> frozenset[str]:
    """with_runs({word}) less the stopwords, remembered."""
    found = _WORD_NAMES.get(word)
    if found is None:
        if len(_WORD_NAMES) >= _WORD_NAMES_MAX:
            _WORD_NAMES.clear()
        found = _WORD_NAMES[word] = frozenset({word, *_runs(word)} - STOPWORDS)
    return found


def name_terms(title: str, path: str) -> set[str]:
    """Words of a document's title and file name, with letter/digit runs split (10K → 10k, 10)."""
    stem = Path(path).stem
    return with_runs(set(words(title)) | set(words(stem.replace("_", " "))))


@dataclass(frozen=True)
class Identity:
    """The names a document goes by, each the set of words that says it whole."""

    names: tuple[frozenset[str], ...]
    words: frozenset[str]  # every word of them
    # An untitled document's opening heading: it names the document only when said whole. A
    # heading's single word ("Insurance") is the topic of many documents, not the name of one.
    headings: tuple[frozenset[str], ...] = ()


def identity(title: str, path: str, headings: list[str] = ()) -> Identity:
    """A document's names: title and file name together, the file name alone, each program of a
    NAME line (else the title), and, where the title is only the file name, the first top-level
    heading that is not a generic section name (a plain text's "THE SED FAQ")."""
    stem = _raw_stem(path).replace("_", " ")
    names = _names([f"{title} {stem}", stem, *(named_programs(title) or [title])])
    opening = [h for h in headings if not generic_heading(h)][:1] if _untitled(title, path) else []
    heads = tuple(h for h in _names(opening) if h not in names)
    return Identity(names, frozenset().union(*names), heads)


def _names(parts: list[str]) -> tuple[frozenset[str], ...]:
    """Each part's words (stopwords out, letter/digit runs split), empty ones and repeats dropped."""
    found = (frozenset().union(*map(_word_names, words(part))) for part in parts)
    return tuple(dict.fromkeys(name for name in found if name))


def _raw_stem(path: str) -> str:
    """Path(path).stem, without building a Path for the plain case (a last part with no trailing
    dot), which is every stored file name: pathlib's parsing was a third of the names' cost."""
    name = path.rpartition("/")[2]
    if name in ("", ".", "..") or name.endswith("."):
        return Path(path).stem
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def _untitled(title: str, path: str) -> bool:
    """Whether the document found no title of its own: the parsers then title it by its file name."""
    return title.strip() == _raw_stem(path)


def document_identities(db: sqlite_utils.Database, doc_ids: list[int] | None = None) -> dict[int, Identity]:
    key = (database_name(db), *documents_version(db))
    if key not in _NAME_CACHE:
        _NAME_CACHE.clear()
        labels = document_labels(db).values()
        # Headings are read only where some document is titled by its file name.
        headings = top_headings(db) if any(_untitled(doc.title, doc.path) for doc in labels) else {}
        _NAME_CACHE[key] = {doc.id: identity(doc.title, doc.path, headings.get(doc.id, [])) for doc in labels}
    found = _NAME_CACHE[key]
    return {d: found[d] for d in doc_ids if d in found} if doc_ids else dict(found)


def name_scores(db: sqlite_utils.Database, question: str, doc_ids: list[int] | None = None) -> dict[int, float]:
    """Per document, in [0, 1]: how well the question names it, relative to the best-named document.

    Empty when there is at most one document or when the question names none of them.
    """
    identities = document_identities(db, doc_ids)
    if len(identities) < 2:
        return {}
    terms, proper = question_terms(question), proper_words(question)
    weight = _weights(db, identities, doc_ids)
    said = {doc: _said(ident, terms, proper) for doc, ident in identities.items()}
    said = {doc: found for doc, found in said.items() if found}
    whole = {doc for doc, found in said.items()
             if any(name <= found for name in identities[doc].names + identities[doc].headings)}
    raw: dict[int, float] = {}
    for doc, found in said.items():
        value = sum(weight[w] for w in found)
        if whole and doc not in whole:  # beside a document named whole, one whose names are only touched
            value *= max(_share(name, found, weight) for name in identities[doc].names)
        raw[doc] = value
    best = max(raw.values(), default=0.0)
    if best <= 0:
        return {}
    return {doc: value / best for doc, value in raw.items() if value > 0}


def _said(ident: Identity, terms: set[str], proper: set[str]) -> set[str]:
    """The words of the document's names the question says, a heading's only where it says all
    of that heading."""
    found = named_words(ident.words, terms, proper)
    for heading in ident.headings:
        words_said = named_words(heading, terms, proper)
        if heading <= words_said:
            found |= words_said
    return found


def _weights(db: sqlite_utils.Database, identities: dict[int, Identity],
             doc_ids: list[int] | None) -> dict[str, float]:
    """Each name word's IDF over the documents' names (of the whole store, kept while it is unchanged)."""
    key = (database_name(db), *documents_version(db), tuple(sorted(identities)) if doc_ids else None)
    if _WEIGHT_CACHE.get("key") != key:
        frequency: dict[str, int] = {}
        for ident in identities.values():
            for word in ident.words.union(*ident.headings):
                frequency[word] = frequency.get(word, 0) + 1
        _WEIGHT_CACHE.update(key=key, weight={w: math.log(1 + len(identities) / f) for w, f in frequency.items()})
    return _WEIGHT_CACHE["weight"]


def _share(name: frozenset[str], said: set[str], weight: dict[str, float]) -> float:
    """The share of the name's weight that the question says."""
    total = sum(weight[w] for w in name)
    return sum(weight[w] for w in name & said) / total if total > 0 else 0.0


_CAPITALISED = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][A-Za-z&]{2,}")


def question_terms(question: str) -> set[str]:
    """The question's content terms, with letter/digit runs split as names are ("FY2023Q1" also
    gives "2023", as PEPSICO_2023Q1_EARNINGS does)."""
    return with_runs(set(content_terms(question)))


def proper_words(question: str) -> set[str]:
    """Capitalised words inside the question (not the one opening it): the names it says."""
    return {w.lower() for w in _CAPITALISED.findall(question.strip())}


def named_words(name: set[str], terms: set[str], proper: set[str]) -> set[str]:
    """The words of a document's name the question says: the same word, or a name word glued
    from a name the question says and more ("MGM" → MGMRESORTS, "Ulta Beauty" → ULTABEAUTY, "Best
    Buy" → BESTBUY). Only a capitalised question word may open a glued one: "net" does not name
    NETFLIX."""
    found = terms & name
    found.update(w for w in name - found if any(len(w) > len(p) and w.startswith(p) for p in proper))
    return found
