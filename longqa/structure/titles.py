"""Short generated titles for untitled sections and one-sentence section summaries.

Both are completion prompts for a base model, stopped at the end of the line: titles follow a few
worked examples ("Passage: … Title:"); summaries continue the section's own text after "In
short,". The output is cleaned rather than trusted: a title that merely repeats an example, or
has no letters, is replaced by the passage's opening words; a summary keeps its first sentence.
"""

from __future__ import annotations

import re
from typing import Callable

from longqa import tokens
from longqa.models.base import Generator
from longqa.models.lazy import LazyModel, model_of
from longqa.store.cache import LlmCache, cached_complete
from longqa.structure.build import finish
from longqa.structure.tree import Node, leaves, sections

# A title reads the section's first 50 tokens and writes at most 8: on the tune half of
# bench/structure_boundaries.py this matched the true headings better than 150 tokens did (token
# F1 0.28 vs 0.12; the model drifts to side topics on longer passages) at half the cost.
TITLE_TEXT_TOKENS = 50
TITLE_MAX_TOKENS = 8
TITLE_MAX_WORDS = 8
SUMMARY_TEXT_TOKENS = 150
SUMMARY_MAX_TOKENS = 30

_TITLE_EXAMPLES = [
    (
        "Roasting turns the hard green beans brown and releases the oils that carry their aroma. "
        "A light roast keeps more acidity, while a dark roast tastes bitter and smoky.",
        "Roasting Coffee Beans",
    ),
    (
        "The committee met twice in March to review the budget. It approved new money for the "
        "library and put off the decision on the swimming pool until the autumn.",
        "Budget Review",
    ),
    (
        "Players study famous lines such as the Sicilian Defence for years. Memorising moves "
        "helps, but understanding the plans behind them matters more in a real game.",
        "Studying Chess Openings",
    ),
]
_EXAMPLE_TITLES = {title.casefold() for _, title in _TITLE_EXAMPLES}


def _flat(text: str, limit: int) -> str:
    return " ".join(tokens.truncate(" ".join(text.split()), limit).split())


PASSAGE_LABEL, TITLE_LABEL = "Passage: ", "Title:"  # the title prompt's lines (the tests' fakes read them)
SUMMARY_CUE = "In short,"  # the summary prompt ends with it


def title_prompt(text: str) -> str:
    shots = "".join(f"{PASSAGE_LABEL}{passage}\n{TITLE_LABEL} {title}\n\n" for passage, title in _TITLE_EXAMPLES)
    passage = _flat(text, TITLE_TEXT_TOKENS)
    return f"Short titles for passages of a longer document.\n\n{shots}{PASSAGE_LABEL}{passage}\n{TITLE_LABEL}"


def summary_prompt(title: str, text: str) -> str:
    """The section as a reader sees it, then "In short," — a base model continues with a one-
    sentence gist. (Worked examples made the 270M model copy the example's summary instead.)"""
    heading = f"{title}\n\n" if title.strip() else ""
    return f"{heading}{_flat(text, SUMMARY_TEXT_TOKENS)}\n\n{SUMMARY_CUE}"


def fallback_title(text: str, words: int = 6) -> str:
    opening = text.split()[:words]
    return " ".join(opening) + ("…" if len(text.split()) > words else "")


def clean_title(raw: str, text: str) -> str:
    """The generated line as a title, or the passage's opening words when it is unusable."""
    title = raw.strip().splitlines()[0] if raw.strip() else ""
    title = re.sub(r"^[\s\"'*#:\-–\[\](){}]+|[\s\"'*#:.,;\-–\[\](){}]+$", "", title)
    title = " ".join(re.sub(r"[<>]", " ", title).split()[:TITLE_MAX_WORDS])
    if not re.search(r"[^\W\d_]", title) or title.casefold() in _EXAMPLE_TITLES:
        return fallback_title(text)
    return title


def clean_summary(raw: str) -> str:
    """The continuation's first sentence, capitalised and closed with a full stop."""
    line = " ".join(raw.strip().splitlines()[0].split()) if raw.strip() else ""
    end = re.search(r"[.!?](\s|$)", line)
    line = line[: end.start() + 1] if end else line.rstrip(",;: ")
    if not re.search(r"[^\W\d_]", line):
        return ""
    line = line[0].upper() + line[1:]
    return line if line.endswith((".", "!", "?")) else line + "."


def generate_title(generator: Generator, cache: LlmCache | None, text: str) -> str:
    raw = cached_complete(
        generator, cache, "title", title_prompt(text), max_tokens=TITLE_MAX_TOKENS, stop=["\n"]
    )
    return clean_title(raw, text)


def section_text(node: Node) -> str:
    return "\n\n".join(leaf.text for leaf in leaves(node))


def title_untitled_sections(root: Node, generator: Generator, cache: LlmCache | None) -> int:
    """Give every section or subsection without a title a generated one; returns how many."""
    untitled = [node for node in sections(root) if not node.title.strip()]
    for node in untitled:
        node.title = generate_title(generator, cache, section_text(node))
    if untitled:
        finish(root)  # titles are in paths and token totals
    return len(untitled)


def summarize_sections(root: Node, generator: Generator, cache: LlmCache | None) -> int:
    """A one-sentence summary in `summary` for every section and subsection; returns how many
    were written. One short prompt per section: its title and its first ~150 tokens."""
    done = 0
    for node in sections(root):
        text = section_text(node)
        if not text.strip():
            continue
        raw = cached_complete(
            generator, cache, "summary", summary_prompt(node.title, text),
            max_tokens=SUMMARY_MAX_TOKENS, stop=["\n", ". "],
        )
        node.summary = clean_summary(raw)
        done += bool(node.summary)
    return done


def summaries_wanted(flag: bool | None, source: str, root: Node, max_sections: int = 50) -> bool:
    """The ingest default: summaries for model-structured trees of at most `max_sections`
    sections (about one model call, ~1 s, per section); `--summaries`/`--no-summaries` decide."""
    if flag is not None:
        return flag
    return source == "llm" and 0 < len(sections(root)) <= max_sections


def make_section_annotator(
    generator: Generator | Callable[[], Generator], db=None, summaries: bool | None = None
) -> Callable[[Node, str], None]:
    """What ingest calls on every tree, with the name of the source that made it: titles for
    untitled sections always, summaries per `summaries_wanted(summaries, ...)`. The generator
    (or zero-argument factory) is loaded only when a tree needs either."""
    cache = LlmCache(db) if db is not None else None
    lazy = LazyModel(lambda: model_of(generator))

    def model() -> Generator:
        return lazy.loaded

    def annotate(root: Node, source: str) -> None:
        if any(not node.title.strip() for node in sections(root)):
            title_untitled_sections(root, model(), cache)
        if summaries_wanted(summaries, source, root):
            summarize_sections(root, model(), cache)

    return annotate
