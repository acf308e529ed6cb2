"""A document-level signal: how well the question names a document (its title or file name).

Questions over a shelf of filings name the company and the year ("Nike's revenue in FY2018");
file names and titles carry exactly those words (NIKE_2018_10K.pdf). Each document scores the
IDF-weighted share of the question's terms found in its name, so a word every document shares
counts for little and the document that matches "nike" and "2018" wins over one matching "2018".
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


def name_terms(title: str, path: str) -> set[str]:
    """Words of a document's title and file name, with letter/digit runs split (10K → 10k, 10, k)."""
    stem = Path(path).stem
    found = set(words(title)) | set(words(stem.replace("_", " ")))
    for word in list(found):
        found.update(part.lower() for part in re.findall(r"[a-zA-Z]+|\d+", word) if len(part) > 1)
    return found


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
    terms = set(content_terms(question))
    frequency = {term: sum(1 for n in names.values() if term in n) for term in terms}
    weight = {t: math.log(1 + len(names) / f) for t, f in frequency.items() if f}
    raw = {doc: sum(weight.get(t, 0.0) for t in terms & n) for doc, n in names.items()}
    best = max(raw.values(), default=0.0)
    if best <= 0:
        return {}
    return {doc: value / best for doc, value in raw.items() if value > 0}
