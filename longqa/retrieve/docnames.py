"""A document-level signal: how well the question names a document (its title or file name).

Questions over a shelf of filings name the company and the year ("Nike's revenue in FY2018");
file names and titles carry exactly those words (NIKE_2018_10K.pdf). Each document scores the
IDF-weighted share of the question's terms found in its name, so a word every document shares
counts for little and the document that matches "nike" and "2018" wins over one matching "2018".
A file name often glues a company's words (MGMRESORTS, BESTBUY): a name the question says may
open such a word.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import sqlite_utils

from longqa.retrieve.terms import content_terms, words
from longqa.store.db import database_name
from longqa.store.documents import document_labels, documents_version

_NAME_CACHE: dict[tuple[str, int, int], dict[int, set[str]]] = {}


def with_runs(terms: set[str]) -> set[str]:
    """`terms` and their letter/digit runs of two or more characters (2022q4 → 2022q4, 2022)."""
    found = set(terms)
    for term in terms:
        found.update(part.lower() for part in re.findall(r"[a-zA-Z]+|\d+", term) if len(part) > 1)
    return found


def name_terms(title: str, path: str) -> set[str]:
    """Words of a document's title and file name, with letter/digit runs split (10K → 10k, 10)."""
    stem = Path(path).stem
    return with_runs(set(words(title)) | set(words(stem.replace("_", " "))))


def document_names(db: sqlite_utils.Database, doc_ids: list[int] | None = None) -> dict[int, set[str]]:
    key = (database_name(db), *documents_version(db))
    if key not in _NAME_CACHE:
        _NAME_CACHE.clear()
        _NAME_CACHE[key] = {doc.id: name_terms(doc.title, doc.path) for doc in document_labels(db).values()}
    names = _NAME_CACHE[key]
    return {d: names[d] for d in doc_ids if d in names} if doc_ids else dict(names)


def name_scores(db: sqlite_utils.Database, question: str, doc_ids: list[int] | None = None) -> dict[int, float]:
    """Per document, in [0, 1]: the question's name-match relative to the best-matching document.

    Empty when there is at most one document or when the question names none of them.
    """
    names = document_names(db, doc_ids)
    if len(names) < 2:
        return {}
    terms, proper = question_terms(question), proper_words(question)
    matched = {doc: named_words(n, terms, proper) for doc, n in names.items()}
    frequency: dict[str, int] = {}
    for found in matched.values():
        for word in found:
            frequency[word] = frequency.get(word, 0) + 1
    weight = {w: math.log(1 + len(names) / f) for w, f in frequency.items()}
    raw = {doc: sum(weight[w] for w in found) for doc, found in matched.items()}
    best = max(raw.values(), default=0.0)
    if best <= 0:
        return {}
    return {doc: value / best for doc, value in raw.items() if value > 0}


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
