"""The other names a financial caption goes by, so that BM25 finds a statement whatever it is called.

Questions use analysts' words ("the income statement", "revenue", "capex"); filings use their own
captions ("CONSOLIDATED STATEMENTS OF OPERATIONS", "Total net sales", "Purchases of property and
equipment"). The words differ, so BM25 cannot match them and the embedder, which reads one short
paragraph of table rows, rarely does either. Each group below lists names that are used for the
same statement or line item; a question that says one of them also searches for the others, as
FTS5 phrases (the words in that order), so "statement of operations" does not match every
paragraph that says "operations".
"""

from __future__ import annotations

import re

from longqa.text.stems import singular_phrase

_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # as terms.words, which imports this module


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text.replace("&", ""))]  # "SG&A" -> "sga"


# One name per stem is enough: FTS5's porter stemmer reads "statement" and "statements" alike.
GROUPS: tuple[tuple[str, ...], ...] = (
    ("income statement", "statement of income", "statement of operations", "statement of earnings",
     "profit and loss"),
    ("balance sheet", "statement of financial position", "statement of condition"),
    ("cash flow statement", "statement of cash flows"),
    ("revenue", "net sales", "total net sales", "net revenues", "sales to customers"),
    ("net income", "net earnings", "net profit"),
    ("capex", "capital expenditure", "purchases of property and equipment",
     "payments for property plant and equipment"),
    ("sg&a", "selling general and administrative"),
    ("eps", "earnings per share"),
    ("shareholders equity", "stockholders equity"),
    ("cogs", "cost of goods sold", "cost of sales", "cost of revenue", "cost of products sold"),
    ("operating income", "operating profit", "income from operations"),
    ("gross margin", "gross profit"),
    ("d&a", "depreciation and amortization"),
    ("operating cash flow", "cash flow from operations", "cash provided by operating activities",
     "cash from operating activities"),
    ("share buyback", "share repurchase", "stock repurchase", "repurchase of common stock"),
    ("r&d", "research and development"),
    ("pp&e", "property plant and equipment", "property and equipment"),
)




_PHRASES = [[_words(name) for name in group] for group in GROUPS]


def equivalent_phrases(text: str) -> list[str]:
    """The other names of every caption `text` says, each as a space-joined phrase of word tokens,
    in group order; [] when it says none."""
    joined = f" {singular_phrase(_words(text))} "
    out: list[str] = []
    for phrases in _PHRASES:
        said = [f" {singular_phrase(p)} " in joined for p in phrases]
        if any(said):
            out += [" ".join(p) for p, is_said in zip(phrases, said) if not is_said]
    return out
