"""GARLIC's best-first search over a small hand-built graph (ask/graph_search.py), without a model:
the coverage rule alone judges sufficiency."""

from __future__ import annotations

import numpy as np

from longqa.ask.search.graph import GraphSearch
from longqa.ask.settings import DEFAULTS
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
                         DEFAULTS.search.but(max_seconds=60), steps)
    outcome = search.run()
    adds = [s for s in steps if s.action == "add"]
    # the point starts visited; its strongest edge (0.8) leads to leaf 103, which answers
    assert adds[0].details["node"] == 103 and adds[0].details["graph_node"] == 3
    assert outcome.stop == "sufficient" and outcome.sufficient
    assert [leaf.id for leaf in outcome.picks] == [103]


def test_the_budget_is_never_exceeded():
    graph, leaves = small_graph()
    steps: list[dict] = []
    from longqa.ask.search.refine import leaf_tokens

    budget = leaf_tokens(leaves[103]) + 1
    outcome = GraphSearch("Who kept the logbook of passing ships?", None, [graph], leaves, budget,
                          DEFAULTS.search.but(max_seconds=60, confidence=1.0), steps).run()
    assert sum(leaf_tokens(leaf) for leaf in outcome.picks) <= budget
    assert len(outcome.picks) == 1 and steps[-1].action == "stop"


# -- on a real store: a document's graph built by `ingest --graph`'s builder, stored and loaded --------

STORY = [
    "The harbour town of Calder lies at the mouth of the river Wend, below the chalk hills.",
    "Fishing boats leave Calder harbour before dawn and return with herring and mackerel.",
    "The town council meets in the old guildhall on the first Monday of every month.",
    "In 1911 the council built a sea wall of granite blocks to stop the winter floods.",
    "The granite for the sea wall came from the quarry at Penmore, forty miles inland.",
    "Children in Calder learn to swim in the tidal pool beside the lifeboat station.",
    "The lifeboat station was founded in 1862 after the wreck of the brig Mary Ellen.",
    "Every August the town holds a regatta with rowing races across the harbour.",
    "The regatta trophy is a silver oar presented by the guild of fishermen in 1890.",
]


def stored_story(db):
    """A heading-less document of one-sentence leaves with its extractive, cosine-edged graph
    built by the real builder (small groups, so the graph has several levels)."""
    from pathlib import Path

    from longqa.graph.build import GraphBuilder
    from longqa.graph.settings import DEFAULT as GRAPH_DEFAULT
    from longqa.parse.blocks import Block, ParsedDocument
    from longqa.store import documents as docs
    from longqa.store.graph import load_graph
    from longqa.store.nodes import load_tree
    from longqa.structure.build import build_tree
    from longqa.structure.tree import walk
    from tests.fakes import FakeEmbedder

    tree = build_tree(ParsedDocument(Path("calder.md"), "Calder", 1, [Block(text, 1) for text in STORY]), [],
                      max_tokens=20)  # one sentence a leaf
    record = docs.DocumentRecord(path="/docs/calder.md", sha256="calder", title="Calder", format="markdown",
                                 pages=1, structure="markdown", bytes=1)
    doc_id = docs.save_document(db, record, tree)
    embedder = FakeEmbedder()
    settings = GRAPH_DEFAULT.but(edges="cosine", group_tokens=60, top_tokens=30, point_share=0.4, min_point_words=3)
    GraphBuilder(db, embedder, None, settings=settings).build(doc_id)
    graph = load_graph(db, doc_id)
    leaves = {n.id: n for n in walk(load_tree(db, doc_id)) if n.is_leaf}
    return graph, leaves, embedder


def test_the_retrievals_best_leaves_are_visited_first_then_the_graph_leads(db):
    graph, leaves, embedder = stored_story(db)
    assert graph.levels >= 2
    by_text = {leaf.text: leaf.id for leaf in leaves.values()}
    swim, boats = by_text[STORY[5]], by_text[STORY[1]]
    question = "Which quarry supplied the granite of the sea wall?"
    steps: list[dict] = []
    search = GraphSearch(question, embedder.embed([question])[0], [graph], leaves, 2000,
                         DEFAULTS.search.but(max_seconds=60, confidence=1.01), steps, leaf_scores={swim: 0.9, boats: 0.8})
    outcome = search.run()
    adds = [s for s in steps if s.action == "add"]
    assert [(s.details["node"], s.details["reason"]) for s in adds[:2]] == [(swim, "seed"), (boats, "seed")]
    assert {s.details["reason"] for s in adds[2:]} == {"graph"}
    # after the seeds, the leaf that answers (most similar to the question) comes before the rest
    graph_leaves = [s.details["node"] for s in adds[2:]]
    assert graph_leaves[0] == by_text[STORY[4]]
    assert [leaf.id for leaf in outcome.picks[:2]] == [swim, boats]


def test_seeds_take_only_their_share_of_the_budget(db):
    graph, leaves, embedder = stored_story(db)
    scores = {leaf.id: 1.0 - 0.01 * n for n, leaf in enumerate(leaves.values())}  # every leaf retrieved
    from longqa.ask.search.refine import leaf_tokens

    budget = 6 * max(leaf_tokens(leaf) for leaf in leaves.values())
    search = GraphSearch("Which quarry supplied the granite?", None, [graph], leaves, budget,
                         DEFAULTS.search.but(graph_seed_share=0.5), [], leaf_scores=scores)
    seeded = sum(leaf_tokens(search.nodes[i].leaf) for i in search.seeds)
    assert 0 < seeded <= 0.5 * budget and len(search.seeds) < len(leaves)
    assert [search.nodes[i].leaf.id for i in search.seeds] == list(leaves)[: len(search.seeds)]


def test_a_point_and_its_copies_at_other_levels_are_visited_once(db):
    graph, leaves, embedder = stored_story(db)
    copies = {}
    for node in graph.nodes:
        if node.level > 0:
            copies.setdefault((node.leaf_id, node.text), []).append(node.id)
    repeated = [ids for ids in copies.values() if len(ids) > 1]
    assert repeated  # extractive points: a sentence picked again one level up
    steps: list[dict] = []
    question = "When was the lifeboat station founded?"
    GraphSearch(question, embedder.embed([question])[0], [graph], leaves, 2000,
                DEFAULTS.search.but(max_seconds=60, confidence=1.01), steps).run()
    visited = [s.details["graph_node"] for s in steps if s.action == "add"]
    for ids in repeated:
        assert sum(1 for node_id in visited if node_id in ids) <= 1


def test_a_weakly_related_parent_does_not_pull_its_child_ahead_of_the_most_similar_leaf(db):
    """z = Eᵀr stays in r's units: a child inherits only as much as its visited parents are
    related. (Divided by its largest value, z gave the top point's child a full point.)"""
    from longqa.store.graph import Graph, GraphNode, load_graph, save_graph
    from longqa.store.nodes import leaf_key, load_tree
    from longqa.structure.tree import walk

    full, leaves, embedder = stored_story(db)
    doc_id = full.doc_id
    by_text = {leaf.text: leaf.id for leaf in leaves.values()}
    guildhall, regatta, trophy = by_text[STORY[2]], by_text[STORY[7]], by_text[STORY[8]]
    graph = Graph(doc_id=doc_id, sha256="calder", points="extractive", edges="cosine", model="", embed_model="e",
                  leaves=leaf_key(db, doc_id))
    for i, leaf_id in enumerate([guildhall, regatta, trophy]):
        graph.nodes.append(GraphNode(0, i, leaf_id, "", 20, embedder.embed([leaves[leaf_id].text])[0]))
    top = "The town council meets in the old guildhall."  # barely related to the question
    graph.nodes.append(GraphNode(1, 0, guildhall, top, 10, embedder.embed([top])[0]))
    graph.edge_list = [(3, 0, 0.9), (3, 1, 0.1)]
    save_graph(db, graph)
    stored = load_graph(db, doc_id)
    tree_leaves = {n.id: n for n in walk(load_tree(db, doc_id)) if n.is_leaf}
    question = "What is the regatta trophy presented by the fishermen?"
    steps: list[dict] = []
    GraphSearch(question, embedder.embed([question])[0], [stored], tree_leaves, 2000,
                DEFAULTS.search.but(max_seconds=60, confidence=1.01), steps).run()
    adds = [s.details["node"] for s in steps if s.action == "add"]
    assert adds[0] == trophy and adds.index(trophy) < adds.index(guildhall)


def test_search_auto_takes_the_graph_only_when_every_candidate_document_has_one(tmp_path):
    """`--search auto` on a real store (real ingest and graph builder; fake models): the tree
    search while a candidate document has no graph, the graph search once every one has."""
    from longqa.graph.build import GraphBuilder
    from longqa.graph.settings import DEFAULT as GRAPH_DEFAULT
    from longqa.store.documents import document_ids
    from tests.ask_support import build_store, make_pipeline, reactor_handbook
    from tests.fakes import FakeEmbedder

    handbook = reactor_handbook()
    db = build_store(tmp_path / "store.db", {"a.md": handbook, "b.md": handbook.replace("Harbor Point", "Lake Ridge")},
                     tmp_path)
    question = "How often are fuel assemblies replaced?"
    builder = GraphBuilder(db, FakeEmbedder(), None, settings=GRAPH_DEFAULT.but(edges="cosine"))
    ids = sorted(document_ids(db))
    builder.build(ids[0])

    def chosen() -> tuple[str, list[str]]:
        refined = make_pipeline(db, search="auto").retrieve_context(question)
        choice = [s for s in refined.steps if s.action == "search-choice"]
        assert len(choice) == 1
        return choice[0].details["search"], [s.action for s in refined.steps]

    search, actions = chosen()
    assert search == "tree" and "graph-start" not in actions
    for doc_id in ids[1:]:
        builder.build(doc_id)
    search, actions = chosen()
    assert search == "graph" and "graph-start" in actions
