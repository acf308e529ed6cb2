"""The search's steps read the settings in effect when they run, not a copy taken at import: the
grammar the generator is given for a next-step query, and the context's fill."""

from __future__ import annotations

from longqa.ask.search import queries
from longqa.ask.search.refine import leaf_tokens, score_trees, select
from longqa.ask.settings import DEFAULTS, applied
from tests.ask.search.test_refine import make_tree


class Recorder:
    """A generator that answers one fixed line and keeps the grammar it was asked under."""

    def __init__(self) -> None:
        self.grammars: list[str] = []

    def complete(self, prompt: str, max_tokens: int = 0, grammar: str | None = None, **_) -> str:
        self.grammars.append(grammar or "")
        return " The plant is named.\nNext query: " + "who built the plant " * 10


def test_the_query_lengths_reach_the_grammar_and_the_query():
    generator = Recorder()
    _, long_query = queries.next_query(generator, "Who built the plant?", "context")
    with applied(DEFAULTS.with_values({"expansion.max_query_chars": "20", "expansion.max_known_chars": "30"})):
        _, short_query = queries.next_query(generator, "Who built the plant?", "context")
        queries.sub_questions(generator, "What do the plants make?", 2)
    assert len(short_query) == 20 < len(long_query)
    assert "{3,20}" in generator.grammars[1] and "{3,30}" in generator.grammars[1]
    assert "{3,20}" not in generator.grammars[0]
    assert "{3,20}" in generator.grammars[2]  # the sub-questions' grammar too


def test_the_fill_floor_is_read_when_the_context_is_filled():
    root = make_tree()
    scored = score_trees([root], {3: 1.0, 8: 0.05}, {}, 0.0)
    first, last = root.children[0].children[0], root.children[1].children[0].children[0]
    budget = leaf_tokens(first) + leaf_tokens(last)
    assert select([root], scored, budget).leaf_ids == {3}  # under 0.1 × the best: never filled
    with applied(DEFAULTS.with_values({"search.fill_floor": "0.0"})):
        assert select([root], scored, budget).leaf_ids == {3, 8}
