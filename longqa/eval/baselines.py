"""Baseline systems: chunk RAG with BM25, dense or hybrid ranking, the whole document, and no context."""

from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

from longqa import tokens
from longqa.eval.chunks import Chunk, fill_budget
from longqa.eval.retrieved import Passage, Retrieved
from longqa.eval.rank import Bm25Ranker, DenseRanker, HybridRanker
from longqa.parse import parse_file
from longqa.structure.build import body_text

FULL_CONTEXT_CAP = 6000  # tokens of document the full-context generator reads (CPU cost grows with it)


def chunk_passage(chunk: Chunk) -> Passage:
    return Passage(text=chunk.text, doc=chunk.doc, title=chunk.title, page_start=chunk.page_start,
                   page_end=chunk.page_end)


class _ChunkSystem:
    """Shared by the chunk baselines: one ranker over the whole corpus, or one per document set."""

    name = "chunks"

    def __init__(self, budget: int):
        self.budget = budget
        self.workspace = None
        self._corpus_ranker = None
        self._scoped: dict[tuple[str, ...], object] = {}

    def prepare(self, workspace) -> None:
        self.workspace = workspace
        self._corpus_ranker = None
        self._scoped = {}

    def _ranker(self, docs: list[str]):
        scope = tuple(sorted(docs))
        if set(scope) == set(map(str, self.workspace.docs)):
            if self._corpus_ranker is None:
                self._corpus_ranker = self._build(list(scope))
            return self._corpus_ranker
        if scope not in self._scoped:
            if len(self._scoped) > 8:  # single protocol: documents come and go
                self._scoped.clear()
            self._scoped[scope] = self._build(list(scope))
        return self._scoped[scope]

    def _build(self, docs: list[str]):
        raise NotImplementedError

    def _rank(self, ranker, question) -> list[Chunk]:
        raise NotImplementedError

    def retrieve(self, question, docs: list[str]) -> Retrieved:
        started = time.perf_counter()
        ranker = self._ranker(docs)
        indexed = time.perf_counter()
        ranked = self._rank(ranker, question)
        taken = fill_budget(ranked, self.budget)
        done = time.perf_counter()
        return Retrieved(
            passages=[chunk_passage(c) for c in taken],
            stages={"index": round(indexed - started, 4), "rank": round(done - indexed, 4)},
        )


class Bm25Chunks(_ChunkSystem):
    """Standard RAG: fixed 512-token chunks ranked by BM25 (rank-bm25), taken until the budget."""

    name = "bm25-chunks"
    needs = {"chunks"}

    def _build(self, docs: list[str]) -> Bm25Ranker:
        return Bm25Ranker(self.workspace.chunks(docs))

    def _rank(self, ranker: Bm25Ranker, question) -> list[Chunk]:
        return ranker.rank(question.question)


class DenseChunks(_ChunkSystem):
    """The same chunks ranked by cosine similarity of the embedder's vectors."""

    name = "dense-chunks"
    needs = {"vectors"}

    def __init__(self, budget: int, embedder):
        super().__init__(budget)
        self.embedder = embedder

    def _build(self, docs: list[str]) -> DenseRanker:
        chunks, vectors = self.workspace.chunk_vectors(docs)
        return DenseRanker(chunks, vectors)

    def _rank(self, ranker: DenseRanker, question) -> list[Chunk]:
        return ranker.rank(self.embedder().embed([question.question])[0])


class HybridChunks(DenseChunks):
    """The same chunks ranked by BM25 and cosine, min-max normalised and summed 1:1."""

    name = "hybrid-chunks"

    def _build(self, docs: list[str]) -> HybridRanker:
        chunks, vectors = self.workspace.chunk_vectors(docs)
        return HybridRanker(chunks, vectors)

    def _rank(self, ranker: HybridRanker, question) -> list[Chunk]:
        return ranker.rank(question.question, self.embedder().embed([question.question])[0])


@lru_cache(maxsize=4)
def _document(path: str) -> tuple[str, str, int]:
    parsed = parse_file(Path(path))
    body, _ = body_text(parsed)
    return parsed.title, body, parsed.pages


class FullContext:
    """The question's own documents, whole. The generator reads the first `cap` tokens; recall is
    measured on the untruncated text, so this row is the ceiling retrieval could reach."""

    name = "full-context"

    def __init__(self, cap: int = FULL_CONTEXT_CAP):
        self.cap = cap

    def prepare(self, workspace) -> None:
        pass

    def retrieve(self, question, docs: list[str]) -> Retrieved:
        started = time.perf_counter()
        whole, given, room = [], [], self.cap
        for doc in question_docs(question, docs):
            title, body, pages = _document(doc)
            whole.append(Passage(text=body, doc=doc, title=title, page_start=1, page_end=max(pages, 1)))
            if room > 0:
                text = tokens.truncate(body, room)
                room -= tokens.count(text)
                given.append(Passage(text=text, doc=doc, title=title))
        return Retrieved(passages=given, recall_passages=whole,
                         stages={"load": round(time.perf_counter() - started, 4)},
                         note=f"generator reads the first {self.cap} tokens")


def question_docs(question, docs: list[str]) -> list[str]:
    """Full context is always the question's own documents, whatever the protocol."""
    own = [str(d) for d in question.docs]
    return own or docs


class NoContext:
    """The question alone: what the generator knows without any document."""

    name = "no-context"

    def prepare(self, workspace) -> None:
        pass

    def retrieve(self, question, docs: list[str]) -> Retrieved:
        return Retrieved(passages=[])
