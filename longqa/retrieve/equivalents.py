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

_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # as terms.words, which imports this module


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text.replace("&", ""))]  # "SG&A" -> "sga"

GROUPS: tuple[tuple[str, ...], ...] = (
    ("income statement", "statement of income", "statements of income", "statement of operations",
     "statements of operations", "statement of earnings", "statements of earnings", "profit and loss"),
    ("balance sheet", "statement of financial position", "statements of financial position",
     "statement of condition"),
    ("cash flow statement", "statement of cash flows", "statements of cash flows"),
    ("revenue", "net sales", "total net sales", "net revenues", "sales to customers"),
    ("net income", "net earnings", "net profit"),
    ("capex", "capital expenditure", "capital expenditures", "purchases of property and equipment",
     "payments for property plant and equipment"),
    ("sg&a", "selling general and administrative"),
    ("eps", "earnings per share"),
    ("shareholders equity", "stockholders equity"),
    ("cogs", "cost of goods sold", "cost of sales", "cost of revenue", "cost of products sold"),
    ("operating income", "operating profit", "income from operations"),
    ("gross margin", "gross profit"),
    ("d&a", "depreciation and amortization"),
)


_PHRASES = [[_words(name) for name in group] for group in GROUPS]


def equivalent_phrases(text: str) -> list[str]:
    """The other names of every caption `text` says, each as a space-joined phrase of word tokens,
    in group order; [] when it says none."""
    said = _words(text)
    joined = f" {' '.join(said)} "
    out: list[str] = []
    for phrases in _PHRASES:
        present = [p for p in phrases if p and f" {' '.join(p)} " in joined]
        if present:
            out += [" ".join(p) for p in phrases if p not in present and " ".join(p) not in out]
    return out
