"""Turning free user text into search terms: words, stopwords, and a safe FTS5 MATCH expression.

Users type anything: quotes, `AND`, `NEAR(`, `*`, `-`, brackets, emoji. FTS5 gives all of these
meaning, so the MATCH expression is never built from the raw text: it is an OR of double-quoted
plain words (FTS5 treats a quoted string as a phrase of literal tokens), which cannot be a syntax
error whatever the input.
"""

from __future__ import annotations


from longqa.retrieve.equivalents import equivalent_phrases

from longqa.text.words import STOPWORDS, content_terms, words  # noqa: F401  (re-exported for retrieve/)


def fts_match(text: str, max_terms: int = 32) -> str | None:
    """An FTS5 MATCH expression that ORs the quoted content terms of `text` and the other names of
    the financial captions it says (equivalents.py); None if it has no content term."""
    terms = content_terms(text)[:max_terms]
    if not terms:
        return None
    # A term is letters and digits only, so it needs no escaping inside double quotes; so is each
    # word of an equivalent caption, which FTS5 reads as a phrase ("statement of operations").
    return " OR ".join(f'"{term}"' for term in terms + equivalent_phrases(text))
