"""Hybrid retrieval over leaves: BM25 (FTS5) + dense cosine, fused, with a document-name signal.

1. BM25 top-k and dense top-k over the whole store (or the --doc documents).
2. When the question names some documents (docnames.py) and they are not all of them, both
   retrievers run once more restricted to those documents, so a big shelf cannot crowd the named
   filing out of the top k. BM25 statistics are global, so restricted and global scores compare.
3. Fusion (fusion.fuse, the one scoring path): min-max per retriever, weights by pattern, leaves
   of documents the question does not name down-weighted by 1 / (1 + name_boost) (a document
   named under named_doc_min x the best counts as unnamed, but for `partly_named` of its match),
   0.1 x best cut (retrieve/settings.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import sqlite_utils

from longqa.retrieve import bm25, dense
from longqa.retrieve.bm25 import Hit
from longqa.retrieve.docnames import name_scores
from longqa.retrieve.fusion import Fused, fuse
from longqa.retrieve.settings import RetrievalSettings
from longqa.store.documents import document_count
from longqa.store.nodes import documents_of
from longqa.store.vectors import stored_vectors

MODES = ("hybrid", "bm25", "dense")


@dataclass
class Retrieval:
    query: str
    candidates: list[Fused]  # best first, after the cutoff
    bm25_hits: list[Hit] = field(default_factory=list)
    dense_hits: list[Hit] = field(default_factory=list)
    named_docs: dict[int, float] = field(default_factory=dict)  # document -> name match, as fusion weighs it
    doc_of: dict[int, int] = field(default_factory=dict)  # leaf id -> document id
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def max_cosine(self) -> float | None:
        return max((h.score for h in self.dense_hits), default=None)

    def scores(self) -> dict[int, float]:
        return {c.node_id: c.score for c in self.candidates}


@dataclass
class HybridRetriever:
    db: sqlite_utils.Database
    embedder: object | None = None  # longqa.models.base.Embedder
    mode: str = "hybrid"
    k: int | None = None  # leaves per retriever; None: settings.k
    settings: RetrievalSettings = field(default_factory=RetrievalSettings)  # every tunable (retrieve/settings.py)

    def __post_init__(self) -> None:
        if self.k is None:
            self.k = self.settings.k
        if self.mode not in MODES:
            raise ValueError(f"retrieval mode must be one of {', '.join(MODES)}")
        self.dense_note = None
        self.notes: list[str] = []  # partial degradations, e.g. leaves not embedded yet
        self._embedded: dict[str, np.ndarray] = {}  # recent query vectors, by text
        if self.mode != "bm25":
            if self.embedder is None:
                self.dense_note = "no embedder"
            else:
                self.dense_note = dense.unavailable_reason(self.db, self.embedder.name)
        if self.uses_dense:
            missing = dense.missing_note(self.db, self.embedder.name)
            self.notes = [missing] if missing else []

    @property
    def uses_dense(self) -> bool:
        return self.mode != "bm25" and self.dense_note is None

    def embed(self, text: str) -> np.ndarray:
        """The query's vector. One question is embedded once: retrieval, whole-document scoring
        and the answer's sentence focus all ask for it."""
        if text not in self._embedded:
            if len(self._embedded) >= self.settings.query_cache:
                self._embedded.pop(next(iter(self._embedded)))
            self._embedded[text] = self.embedder.embed([text])[0]
        return self._embedded[text]

    def retrieve(
        self, query: str, pattern: str = "both", doc_ids: list[int] | None = None,
        query_vector: np.ndarray | None = None,
    ) -> Retrieval:
        seconds: dict[str, float] = {}
        started = time.perf_counter()
        named = self.name_prior(name_scores(self.db, query, doc_ids))
        named_ids = [d for d, s in named.items() if s >= self.settings.named_doc_min]
        narrow = named_ids if named_ids and len(named_ids) < _doc_count(self.db, doc_ids) else None

        dense_job = None
        if self.uses_dense:  # started first: it runs on another core while BM25 queries the store
            tick = time.perf_counter()
            vector = self.embed(query) if query_vector is None else query_vector
            seconds["embed"] = time.perf_counter() - tick
            scopes = [doc_ids, narrow] if narrow else [doc_ids]
            dense_job = dense.start_search_scopes(self.db, vector, self.embedder.name, self.k, scopes, self.settings)

        tick = time.perf_counter()
        bm25_hits: list[Hit] = []
        if self.mode != "dense":
            bm25_hits = bm25.search(self.db, query, self.k, doc_ids, settings=self.settings)
            if narrow:
                bm25_hits = _union(bm25_hits, bm25.search(self.db, query, self.k, narrow, settings=self.settings))
        seconds["bm25"] = time.perf_counter() - tick

        dense_hits: list[Hit] = []
        if dense_job is not None:
            tick = time.perf_counter()
            found, seconds["dense"] = dense_job.result()  # its own time, on the other core
            dense_hits = _union(found[0], found[1]) if narrow else found[0]
            seconds["dense_wait"] = time.perf_counter() - tick  # what it added after BM25

        doc_of = documents_of(self.db, list(dict.fromkeys(h.node_id for h in [*bm25_hits, *dense_hits])))
        candidates = fuse(bm25_hits, dense_hits, pattern, named, doc_of, settings=self.settings)
        seconds["total"] = time.perf_counter() - started
        return Retrieval(query, candidates, bm25_hits, dense_hits, named, doc_of, seconds)

    def unseen_by_dense(self, found: Retrieval) -> bool:
        """Whether some of BM25's best leaves have no vector of this embedder: dense search is on but
        blind to them. Asked only of a store the missing-vectors note was written for."""
        if not self.uses_dense or not self.notes or not found.bm25_hits:
            return False
        ids = [h.node_id for h in found.bm25_hits]
        return len(stored_vectors(self.db, model=self.embedder.name, node_ids=list(set(ids)))) < len(set(ids))

    def name_prior(self, matches: dict[int, float]) -> dict[int, float]:
        """The name matches as fusion weighs them: a document named under named_doc_min × the best
        keeps only `partly_named` of its match."""
        low, share = self.settings.named_doc_min, self.settings.partly_named
        return {d: m if m >= low else m * share for d, m in matches.items() if m >= low or m * share > 0}


def _union(first: list[Hit], second: list[Hit]) -> list[Hit]:
    seen = {h.node_id for h in first}
    merged = first + [h for h in second if h.node_id not in seen]
    return sorted(merged, key=lambda h: (-h.score, h.node_id))


def _doc_count(db: sqlite_utils.Database, doc_ids: list[int] | None) -> int:
    if doc_ids:
        return len(set(doc_ids))
    return document_count(db)
