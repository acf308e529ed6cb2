"""Which passages an answer cites: the [n] markers it wrote, checked against the context."""

from __future__ import annotations

import re

from longqa.ask.context import Passage
from longqa.ask.settings import in_effect

_MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*)\]")


def strip_markers(text: str) -> str:
    """`text` without its citation markers ("about 52 hours [1]" -> "about 52 hours")."""
    return re.sub(r"\s*" + _MARKER.pattern, "", text).strip()


def cited_numbers(answer: str, count: int) -> list[int]:
    """Passage numbers cited in `answer` ([2], [1, 3], [2-4]) that exist, in first-cited order."""
    found: dict[int, None] = {}
    for match in _MARKER.finditer(answer):
        for part in re.split(r"\s*[,;]\s*", match.group(1)):
            if re.search(r"[–-]", part):
                low, high = (int(x) for x in re.split(r"\s*[–-]\s*", part)[:2])
                numbers = range(low, min(high, count) + 1) if low <= high else []
            else:
                numbers = [int(part)]
            for n in numbers:
                if 1 <= n <= count:
                    found.setdefault(n, None)
    return list(found)


def citation_list(passages: list[Passage], cited: list[int]) -> list[dict]:
    """Every context passage as a citation, flagged when the answer cited it."""
    chosen = set(cited)
    return [{**p.citation(), "cited": p.n in chosen} for p in passages]




def cites_pages(document: dict) -> bool:
    """Whether a document's citations name pages (its store row): a PDF's do; a web page, markdown
    or text has no pages but those its form feeds make, and is cited by its section path alone."""
    return document["format"] == "pdf" or document["pages"] > 1


def source_lines(passages: list[Passage], cited: list[int], limit: int | None = None,
                 paged: set[int] | None = None) -> list[str]:
    """What is printed after the answer: the passages that support it (quoted or cited), at most
    `limit`; when nothing supports it, the best-scored passages, at most `limit`. Pages are named
    for the documents in `paged` (every document when None)."""
    limit = limit if limit is not None else in_effect().answer.max_sources
    by_n = {p.n: p for p in passages}
    shown = [by_n[n] for n in cited if n in by_n][:limit]
    if not shown:
        shown = sorted(sorted(passages, key=lambda p: -p.score)[:limit], key=lambda p: p.n)
    return [source_line(p, paged is None or p.doc_id in paged) for p in shown]


def source_line(p: Passage, with_pages: bool = True) -> str:
    line = f"[{p.n}] {p.doc} — {_where(p)}"
    return f"{line} — {p.pages}" if with_pages else line


def _where(passage: Passage) -> str:
    if passage.section:
        return passage.section
    whole = passage.node is not None and passage.node.kind == "document"
    return "(whole document)" if whole else "(opening text, before the first section)"
