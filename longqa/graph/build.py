"""Build a stored document's graph: level by level, groups of consecutive nodes → points → edges.

Level 0 is the document's leaves (GARLIC's 300-token chunks are our leaves). A level is cut
into groups of consecutive nodes (settings.group_tokens); each group yields its points (key
sentences, points.py; or the model's faithful bullets, generated.py) and the points' edges to
the group's nodes (edges.py), so a point draws on several nodes and a node feeds several
points (many-to-many). Levels are added until one fits settings.top_tokens or stops shrinking.
Every node gets a vector from the store's embedder (the search scores similarity to the
question with it); the leaves reuse their stored ones.

The graph is written in one transaction per document; a document whose graph was built from
its current content and leaves with the same kinds of points and edges is skipped, so an
interrupted `ingest --graph` resumes with the documents still missing one. A document removed or
stored again by another process meanwhile gets no graph (DocumentChanged).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
import sqlite_utils

from longqa import tokens
from longqa.embedding import embedding_text
from longqa.graph.edges import AttentionEdges, cosine_weights
from longqa.graph.generated import generated_points
from longqa.graph.points import Point, faithfulness, key_sentences
from longqa.graph.settings import DEFAULT, GraphSettings
from longqa.errors import DocumentChanged
from longqa.store.graph import Graph, GraphNode, graph_of, graph_source, save_graph
from longqa.store.vectors import stored_vectors
from longqa.structure.tree import walk

Progress = Callable[[int, int], None]  # (input tokens done, input tokens expected)


class GraphBuilder:
    def __init__(self, db: sqlite_utils.Database, embedder, generator_factory: Callable[[], object] | None = None,
                 settings: GraphSettings = DEFAULT, on_progress: Progress | None = None):
        """`generator_factory` gives the local generator whose attention makes the edges; it is
        called only when a graph is actually built. Without one (or with settings.edges ==
        "cosine") edges come from the embedding proxy."""
        self.db, self.embedder, self.settings = db, embedder, settings
        self._generator_factory = generator_factory
        self._edges: AttentionEdges | None = None
        self.on_progress = on_progress or (lambda done, total: None)

    @property
    def edge_kind(self) -> str:
        return "attention" if self.settings.edges == "attention" and self._generator_factory else "cosine"

    def current(self, doc_id: int) -> bool:
        header = graph_of(self.db, doc_id)
        return header is not None and header["edges"] == self.edge_kind and header["points"] == self.settings.points

    def build(self, doc_id: int, *, force: bool = False) -> Graph | None:
        """The document's graph, built and stored; None when a current one was already there.
        Raises DocumentChanged when another process removes or stores the document again before
        the graph is stored (nothing is stored then)."""
        if not force and self.current(doc_id):
            return None
        started = time.perf_counter()
        s = self.settings
        source = graph_source(self.db, doc_id)
        if source is None:
            raise DocumentChanged(f"document {doc_id} was removed")
        sha256, tree, key = source
        leaves = [n for n in walk(tree) if n.is_leaf and n.text.strip()]
        edges = self._edge_source()
        generator = self._generator() if s.points == "generated" else None
        model = generator.name if generator is not None else (edges.name if edges else "")
        graph = Graph(doc_id=doc_id, sha256=sha256, points=s.points, edges=self.edge_kind,
                      model=model, embed_model=self.embedder.name, leaves=key)
        texts = [leaf.text for leaf in leaves]
        level_nodes = [GraphNode(0, i, leaf.id, "", tokens.count(leaf.text), None) for i, leaf in enumerate(leaves)]
        vectors = self._leaf_vectors(leaves)
        for node, vector in zip(level_nodes, vectors):
            node.vector = vector
        graph.nodes.extend(level_nodes)
        graph.input_tokens = sum(n.tokens for n in level_nodes)
        expected = int(graph.input_tokens / (1 - min(self.settings.point_share, 0.9)))
        done = 0
        offset = 0  # index in graph.nodes of the current level's first node
        for level in range(1, s.max_levels + 1):
            size = sum(n.tokens for n in level_nodes)
            if size <= s.top_tokens or len(level_nodes) <= 1:
                break
            new_nodes: list[GraphNode] = []
            new_texts: list[str] = []
            new_edges: list[tuple[int, int, float]] = []
            for group in _groups([n.tokens for n in level_nodes], s.group_tokens):
                members = [texts[i] for i in group]
                points = self._generated(generator, members, graph) if generator is not None else []
                points = points or key_sentences(members, s.point_share, s.min_point_words)
                done += sum(level_nodes[i].tokens for i in group)
                if points:
                    point_texts = [p.text for p in points]
                    point_vectors = self.embedder.embed(point_texts)
                    if edges is not None:
                        weights = edges.weights(members, point_texts, s.max_edges)
                    else:
                        weights = cosine_weights(np.stack([level_nodes[i].vector for i in group]), point_vectors,
                                                 s.max_edges)
                    for k, point in enumerate(points):
                        if point.member < 0:  # a generated bullet is cited to the source it
                            # shares most words with (its strongest edge breaks ties)
                            point.member = max(range(len(members)), key=lambda m: (
                                faithfulness(point.text, [members[m]]), weights[k, m]))
                        index = len(new_nodes)
                        origin = level_nodes[group[point.member]].leaf_id
                        new_nodes.append(GraphNode(level, index, origin, point.text, point.tokens, point_vectors[k]))
                        new_texts.append(point.text)
                        for m, member in enumerate(group):
                            if weights[k, m] > 0:
                                new_edges.append((index, member, float(weights[k, m])))
                self.on_progress(done, expected)
            if not new_nodes or sum(n.tokens for n in new_nodes) >= size:
                break  # no shrinking: this level would only repeat the one below
            base = len(graph.nodes)
            graph.nodes.extend(new_nodes)
            graph.edge_list.extend((base + p, offset + c, w) for p, c, w in new_edges)
            offset, level_nodes, texts = base, new_nodes, new_texts
        graph.seconds = time.perf_counter() - started
        if not save_graph(self.db, graph):
            raise DocumentChanged(f"document {doc_id} was removed or stored again")
        self.on_progress(expected, expected)
        return graph

    def _edge_source(self) -> AttentionEdges | None:
        if self.edge_kind != "attention":
            return None
        if self._edges is None:
            self._edges = AttentionEdges(self._generator())
        return self._edges

    def _generator(self):
        if self._generator_factory is None:
            raise ValueError("generated points need a generator")
        return self._generator_factory()

    def _generated(self, generator, members: list[str], graph: Graph) -> list[Point]:
        """The model's bullets for one group that are faithful to it, without repeats."""
        s = self.settings
        size = sum(tokens.count(m) for m in members)
        bullets = generated_points(generator, members, max(16, int(s.generated_share * size)))
        graph.generated_tokens += sum(generator.count_tokens(b) for b in bullets)
        kept, seen = [], set()
        for bullet in bullets:
            key = " ".join(bullet.lower().split())
            if key in seen or faithfulness(bullet, members) < s.min_faithfulness:
                continue
            seen.add(key)
            kept.append(Point(bullet, -1, 0, tokens.count(bullet)))
        return kept

    def _leaf_vectors(self, leaves) -> list[np.ndarray]:
        """The leaves' stored vectors of this embedder; any missing ones are embedded now."""
        found = stored_vectors(self.db, self.embedder.name, [leaf.id for leaf in leaves])
        missing = [leaf for leaf in leaves if leaf.id not in found]
        if missing:
            made = self.embedder.embed([embedding_text(leaf.path, leaf.text) for leaf in missing])
            found.update({leaf.id: vector for leaf, vector in zip(missing, made)})
        return [found[leaf.id] for leaf in leaves]

    def close(self) -> None:
        if self._edges is not None:
            self._edges.close()
            self._edges = None


def _groups(sizes: list[int], limit: int) -> list[list[int]]:
    """Consecutive indices, each group closed once its sizes reach `limit` (at least one each)."""
    groups, current, used = [], [], 0
    for index, size in enumerate(sizes):
        if current and used + size > limit:
            groups.append(current)
            current, used = [], 0
        current.append(index)
        used += size
    if current:
        groups.append(current)
    return groups
