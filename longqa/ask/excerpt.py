"""The context under a tight budget: the best sentences of a larger search.

At 2,000 tokens the context holds about seven paragraphs; at 500 it holds one or two, so whether
the answer is in it rests on the single best paragraph. Below `search.excerpt_below` tokens the
search fills `search.excerpt_pool` tokens instead, and the context keeps, under the real budget,
the sentences of that larger context that score best: `focus.score` against the question (its
terms, embedding cosine, the neighbours) plus `search.excerpt_leaf_weight` × the search's own
score of the sentence's paragraph, which knows what a sentence alone does not (section titles,
bridge hops, the whole document). This is LongRefiner's refinement followed by training-free
extractive compression, one level below the paragraph.

Each kept paragraph is a passage of its own, headed by its own section path and pages, with its
chosen sentences in order and "…" where sentences were left out. Quotes stay exact: a kept
sentence is still `leaf.text[start:end]`, and the answer stage reads only the kept sentences
(`Passage.spans`).
"""

from __future__ import annotations

from dataclasses import replace

from longqa import tokens
from longqa.ask import excerpt_ranker
from longqa.ask.answer import fields
from longqa.ask.answer import focus
from longqa.ask.answer import hops
from longqa.ask.analysis.asked import Asked
from longqa.ask.context import Passage, section_of
from longqa.ask.search.steps import Step
from longqa.ask.settings import SearchSettings

GAP = " … "  # between kept sentences that were not next to each other
SEPARATOR_TOKENS = 2  # what GAP costs at most


def search_budget(budget: int, settings: SearchSettings) -> int:
    """The budget the search fills: the pool when the context budget is below the excerpt
    threshold, else the budget itself."""
    if settings.excerpt_below and budget < settings.excerpt_below and settings.excerpt_pool > budget:
        return settings.excerpt_pool
    return budget


def excerpt(asked: Asked, passages: list[Passage], budget: int, settings: SearchSettings, *,
            leaf_scores: dict[int, float] | None = None, embedder=None, query_vector=None,
            spread: bool = False, queries: list[str] | None = None, second_hop: bool = False) -> list[Passage]:
    """The passages cut to `budget` tokens, one per kept paragraph in context order, renumbered
    [1], [2], …: the search's best paragraphs whole while they fit in `excerpt_whole_share` of the
    budget, then the best sentences of the others. With `spread` (a broad or multi-source
    question) the sections take turns, each its best sentence first, so every part the search
    chose keeps a voice. `queries` are the search's own further queries (bridge hops, sub-questions):
    a sentence scores its best against the question or any of them, so the second hop's sentence,
    which shares no word with the question, can be kept; with `second_hop` (hops.applies) the
    answer stage's own second hop raises the sentences naming the first hop's bridge entities."""
    if sum(p.tokens for p in passages) <= budget:
        return passages
    found = focus.context_sentences(passages)
    if not found:
        return passages
    leaf_scores = leaf_scores or {}
    first: dict[int, focus.Sentence] = {}  # each paragraph's first sentence: its place and passage
    for sentence in found:
        first.setdefault(sentence.leaf.id, sentence)
    whole, room = [], settings.excerpt_whole_share * budget
    for leaf_id in sorted(first, key=lambda i: (-leaf_scores.get(i, first[i].passage.score), first[i].order)):
        sentence = first[leaf_id]
        cost = tokens.count(sentence.leaf.text.strip())
        if cost > room:
            break
        whole.append(sentence)
        room -= cost
    placed = [(s.order, _whole_leaf(s)) for s in whole]
    budget -= sum(p.tokens for _, p in placed)
    kept_whole = {s.leaf.id for s in whole}
    rest = [s for s in found if s.leaf.id not in kept_whole]
    if rest:
        placed += _sentences(asked, rest, budget, settings, leaf_scores, embedder, query_vector, spread,
                             queries or [], second_hop)
    out = [passage for _, passage in sorted(placed, key=lambda item: item[0])]
    for n, passage in enumerate(out, start=1):
        passage.n = n
    return out


def _sentences(asked, found, budget, settings, leaf_scores, embedder, query_vector, spread, queries,
               second_hop):
    """The best sentences under `budget`, as (context position, passage) per kept paragraph."""
    ranker = excerpt_ranker.load() if settings.learned_excerpt else None
    if ranker is not None:
        readings = _readings(asked, found, embedder, query_vector, queries, leaf_scores, second_hop)
        for sentence, values in zip(found, excerpt_ranker.features(asked.question, found, readings)):
            sentence.score = ranker.score(values)
    else:
        score_with_search(asked, found, embedder, query_vector, queries=queries, leaf_scores=leaf_scores,
                          leaf_weight=settings.excerpt_leaf_weight)
        focus.raise_fitting(asked, found, settings.excerpt_kind_weight)
        if second_hop:
            hops.second_hop(asked, found, embedder)
        fields.raise_match(asked, found)
    kept: list[focus.Sentence] = []
    left: list[tuple[focus.Sentence, int]] = []  # sentences that did not fit, with their own tokens
    used = 0
    for sentence in focus.ranked(found, spread, part=lambda s: s.leaf.parent_id):
        own = tokens.count(" ".join(sentence.text.split()))
        cost = own + SEPARATOR_TOKENS  # an upper bound
        if used + cost <= budget:
            kept.append(sentence)
            used += cost
        else:
            left.append((sentence, own))
    if not kept:  # not even the best sentence fits: keep it cut to the budget's length
        if budget < 1:
            return []
        best_sentence = max(found, key=lambda s: s.score)
        return [(best_sentence.order, _cut_best(best_sentence, budget))]
    kept.sort(key=lambda s: s.order)
    out = _passages(kept)
    # The costs above are upper bounds (sentences next to each other need no gap): what they left
    # unused goes, in rank order, to the next sentences that fit when the passages are counted.
    used = sum(p.tokens for _, p in out)
    for sentence, own in left:
        if used + own > budget:
            continue
        trial = sorted(kept + [sentence], key=lambda s: s.order)
        trial_out = _passages(trial)
        total = sum(p.tokens for _, p in trial_out)
        if total <= budget:
            kept, out, used = trial, trial_out, total
    while len(kept) > 1 and sum(p.tokens for _, p in out) > budget:  # the budget is a promise
        kept.remove(min(kept, key=lambda s: (s.score, -s.order)))
        out = _passages(kept)
    return out


def _readings(asked, found, embedder, query_vector, queries, leaf_scores, second_hop) -> excerpt_ranker.Readings:
    """The focus score of each sentence and what each of the excerpt's readings of the question adds
    to it (the same steps the hand-weighted score sums), for the learned sentence score."""
    score_with_search(asked, found, embedder, query_vector, queries=queries)
    readings = excerpt_ranker.Readings([s.score for s in found], [leaf_scores.get(s.leaf.id, 0.0) for s in found])
    top = max(readings.focus, default=0.0) or 1.0

    def added(step) -> list[float]:
        before = [s.score for s in found]
        step()
        return [(s.score - b) / top for s, b in zip(found, before)]

    readings.kind_fit = [float(d > 0) for d in added(lambda: focus.raise_fitting(asked, found, 1.0))]
    readings.hop = added(lambda: hops.second_hop(asked, found, embedder)) if second_hop else []
    readings.asked_field = [float(d != 0) for d in added(lambda: fields.raise_match(asked, found))]
    return readings


def _passages(kept: list[focus.Sentence]) -> list[tuple[int, Passage]]:
    """One passage per kept paragraph (leaf), with its place in the context."""
    by_leaf: dict[int, list[focus.Sentence]] = {}
    for sentence in kept:
        by_leaf.setdefault(sentence.leaf.id, []).append(sentence)
    out = []
    for chosen in by_leaf.values():
        parts: list[str] = []
        for i, sentence in enumerate(chosen):
            if i:
                before = chosen[i - 1]
                between = sentence.leaf.text[before.end:sentence.start]
                # next to each other: as the stored text parts them (table rows keep their lines)
                parts.append(("\n" if "\n" in between else " ") if sentence.order == before.order + 1 else GAP)
            parts.append(" ".join(sentence.text.split()))
        out.append((chosen[0].order, _of_leaf(chosen[0], "".join(parts), [(s.start, s.end) for s in chosen])))
    return out


def _of_leaf(sentence: focus.Sentence, text: str, offsets: list[tuple[int, int]] | None) -> Passage:
    """A passage of the sentence's paragraph alone: its kept sentences' `offsets`, or None when
    the paragraph is kept whole."""
    leaf, passage = sentence.leaf, sentence.passage
    kept = None if offsets is None else [(leaf.id, start, end) for start, end in offsets]
    return replace(passage, node_id=leaf.id, node=leaf, section=section_of(leaf, passage.doc),
                   page_start=leaf.page_start, page_end=leaf.page_end, text=text, tokens=tokens.count(text),
                   leaf_ids=[leaf.id], spans=kept)


def _whole_leaf(sentence: focus.Sentence) -> Passage:
    """A paragraph kept whole, as a passage of its own."""
    return _of_leaf(sentence, sentence.leaf.text.strip(), None)


def _cut_best(sentence: focus.Sentence, budget: int) -> Passage:
    """A single sentence longer than the whole budget (a table row run together): its first
    `budget` tokens, which are still a prefix of the stored text."""
    text = tokens.truncate(sentence.text, budget)
    end = sentence.start + len(text)
    while text and sentence.leaf.text[sentence.start:end] != text:  # truncation rewrote whitespace
        text, end = text[:-1], end - 1
    return _of_leaf(sentence, text, [(sentence.start, end)])


def score_with_search(asked: Asked, found: list[focus.Sentence], embedder=None, query_vector=None, *,
                      queries: list[str] | None = None, leaf_scores: dict[int, float] | None = None,
                      leaf_weight: float = 0.0) -> None:
    """`score_for`, plus what the search knew: a sentence scores its best against the question or
    any of the search's own further queries (bridge hops, sub-questions: a hop's query is a name
    and the words it still needs), so the second hop's sentence, which shares no word with the
    question, can rank; then `leaf_weight` × its paragraph's search score (relative to the
    best), which holds what a sentence alone does not (section titles, the whole document)."""
    best_of = [0.0] * len(found)
    for query in queries or ():
        focus.score(query, found, embedder)
        best_of = [max(b, s.score) for b, s in zip(best_of, found)]
    focus.score_for(asked, found, embedder, query_vector)
    for b, sentence in zip(best_of, found):
        sentence.score = max(sentence.score, b)
    leaf_scores = leaf_scores or {}
    best = max((leaf_scores.get(s.leaf.id, 0.0) for s in found), default=0.0)
    if leaf_weight and best > 0:
        for sentence in found:
            sentence.score += leaf_weight * max(0.0, leaf_scores.get(sentence.leaf.id, 0.0)) / best


def search_queries(steps: list[Step]) -> list[str]:
    """The further queries the search made (bridge hops, sub-questions), from its logged steps."""
    return [step.details["query"] for step in steps
            if step.action in ("bridge", "split") and step.details.get("query")]
