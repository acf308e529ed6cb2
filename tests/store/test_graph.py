"""The graph tables (store/graph.py) on a real SQLite store: round trip, staleness, removal."""

from __future__ import annotations

import numpy as np

from longqa.graph.build import _groups
from longqa.graph.edges import cosine_weights, keep_strongest
from longqa.graph.points import faithfulness, key_sentences
from longqa.store import documents as docs
from longqa.store.nodes import leaf_key, load_tree
from longqa.store.graph import Graph, GraphNode, graph_of, graph_summary, load_graph, save_graph
from longqa.structure.tree import walk
from tests.store.test_documents import record, sample_tree


def stored_graph(db, doc_id: int, sha: str) -> Graph:
    leaves = [n for n in walk(load_tree(db, doc_id)) if n.is_leaf]
    graph = Graph(doc_id=doc_id, sha256=sha, points="extractive", edges="cosine", model="", embed_model="e",
                  leaves=leaf_key(db, doc_id))
    for i, leaf in enumerate(leaves):
        graph.nodes.append(GraphNode(0, i, leaf.id, "", 5, np.full(3, i, np.float32)))
    graph.nodes.append(GraphNode(1, 0, leaves[0].id, "A point.", 3, np.ones(3, np.float32)))
    point = len(graph.nodes) - 1
    graph.edge_list = [(point, 0, 0.75), (point, 1, 0.25)]
    assert save_graph(db, graph)
    return graph


def test_graph_round_trip(db):
    doc_id = docs.save_document(db, record(), sample_tree("falcon"))
    saved = stored_graph(db, doc_id, "abc")
    loaded = load_graph(db, doc_id)
    assert [(n.level, n.ord, n.leaf_id, n.text) for n in loaded.nodes] == \
        [(n.level, n.ord, n.leaf_id, n.text) for n in saved.nodes]
    point_id = loaded.nodes[-1].id
    assert loaded.edge_list == [(point_id, loaded.nodes[0].id, 0.75), (point_id, loaded.nodes[1].id, 0.25)]
    np.testing.assert_array_equal(loaded.nodes[1].vector, np.full(3, 1, np.float32))
    assert graph_summary(db)[doc_id]["per_level"] == {0: 2, 1: 1} and loaded.levels == 1


def test_changed_document_makes_its_graph_stale_and_removal_cascades(db):
    doc_id = docs.save_document(db, record(), sample_tree("falcon"))
    stored_graph(db, doc_id, "abc")
    assert graph_of(db, doc_id) is not None
    docs.save_document(db, record(sha="changed"), sample_tree("heron"))
    assert graph_of(db, doc_id) is None and load_graph(db, doc_id) is None
    docs.delete_document(db, doc_id)
    assert [db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("graph_docs", "graph_nodes", "graph_edges")] \
        == [0, 0, 0]


def test_key_sentences_are_sentences_of_the_sources():
    texts = ["The dam holds 40 million litres of water. It was built in 1961 by the county council.",
             "The county council repaired the dam in 1988 after a flood. Nobody was hurt.",
             "Fish ladders let salmon pass the dam every autumn since 1990."]
    points = key_sentences(texts, share=0.4, min_words=3)
    assert points and all(p.text in texts[p.member] for p in points)
    assert sum(p.tokens for p in points) < sum(len(t.split()) for t in texts)
    assert [faithfulness(p.text, texts) for p in points] == [1.0] * len(points)
    assert faithfulness("Dragons guard the dam", texts) == 1 / 3  # only "dam" is in the sources


def test_edge_rows_sum_to_one_and_keep_the_strongest():
    kept = keep_strongest(np.array([[0.1, 0.5, 0.4], [0.0, 0.0, 0.0]]), keep=2)
    np.testing.assert_allclose(kept, [[0.0, 5 / 9, 4 / 9], [1 / 3, 1 / 3, 1 / 3]])
    members = np.eye(3, dtype=np.float32)
    np.testing.assert_allclose(cosine_weights(members, np.array([[0.0, 1.0, 0.0]], np.float32), 8), [[0, 1, 0]])


def test_groups_are_consecutive_and_close_at_the_limit():
    assert _groups([300, 300, 300, 300, 50], 900) == [[0, 1, 2], [3, 4]]
    assert _groups([1200, 10], 900) == [[0], [1]]
