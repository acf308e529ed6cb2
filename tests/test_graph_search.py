"""GARLIC's best-first search over a small hand-built graph (ask/graph_search.py), without a model:
the coverage rule alone judges sufficiency."""

from __future__ import annotations

import numpy as np

from longqa.ask.graph_search import GraphSearch
from longqa.ask.settings import DEFAULT
from longqa.store.graph import Graph, GraphNode
from longqa.structure.tree import Node

LEAVES = [
    "The lighthouse keeper Ada Brennan lit the lamp every evening at dusk.",
    "Brennan kept a logbook of every ship that passed the headland.",
    "The logbook records that the steamer Orla sank on 3 March 1899 in fog.",
    "Gulls nest on the cliffs below the lighthouse each spring.",
]


def small_graph() -> tuple[Graph, dict[int, Node]]:
    """Leaves 101-104 (graph nodes 1-4); point 5 (on leaf 102) with edges mostly to leaf 103."""
    leaves = {100 + i: Node("paragraph", text=text, id=100 + i, doc_id=1, page_start=i, page_end=i)
              for i, text in enumerate(LEAVES, start=1)}
    graph = Graph(doc_id=1, sha256="x", points="extractive", edges="attention", model="m", embed_model="e")
    for i, leaf_id in enumerate(leaves, start=1):
        graph.nodes.append(GraphNode(0, i - 1, leaf_id, "", 15, np.eye(4, dtype=np.float32)[i - 1], id=i))
    graph.nodes.append(GraphNode(1, 0, 102, LEAVES[1], 12, np.eye(4, dtype=np.float32)[1], id=5))
    graph.edge_list = [(5, 3, 0.8), (5, 2, 0.1), (5, 1, 0.1)]
    return graph, leaves


def test_the_child_of_a_relevant_visited_point_is_taken_first_and_the_search_stops_when_sufficient():
    graph, leaves = small_graph()
    steps: list[dict] = []
    question_vector = np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32)  # like the point (and leaf 102)
    search = GraphSearch("When did the steamer Orla sink in the fog?", question_vector, [graph], leaves, 2000,
                         DEFAULT.but(max_seconds=60), steps)
    outcome = search.run()
    adds = [s for s in steps if s["action"] == "add"]
    # the point starts visited; its strongest edge (0.8) leads to leaf 103, which answers
    assert adds[0]["node"] == 103 and adds[0]["graph_node"] == 3
    assert outcome.stop == "sufficient" and outcome.sufficient
    assert [leaf.id for leaf in outcome.picks] == [103]


def test_the_budget_is_never_exceeded():
    graph, leaves = small_graph()
    steps: list[dict] = []
    from longqa.ask.refine import leaf_tokens

    budget = leaf_tokens(leaves[103]) + 1
    outcome = GraphSearch("Who kept the logbook of passing ships?", None, [graph], leaves, budget,
                          DEFAULT.but(max_seconds=60, confidence=1.0), steps).run()
    assert sum(leaf_tokens(leaf) for leaf in outcome.picks) <= budget
    assert len(outcome.picks) == 1 and steps[-1]["action"] == "stop"
