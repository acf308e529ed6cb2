"""One dataset's working material: its longqa store and its baseline chunks, built once and cached.

The store lives under `<work dir>/stores/`, named by dataset and every ingest setting that changes
its content (structure mode, leaf size, embedder, longqa version), so a re-run with the same
settings reuses it and a changed setting builds a new one. Documents are ingested on demand (the
whole corpus under the corpus protocol, the question's own documents under the single protocol);
unchanged files are skipped by content hash. What each ingest cost is kept beside the store, so a
re-run can still report it.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np

from longqa import __version__
from longqa.eval.chunks import CHUNK_TOKENS, Chunk, ChunkCache
from longqa.eval.systems import make_ingestor
from longqa.store import open_db
from longqa.store.documents import document_ids
from longqa.store.nodes import document_paths_of
from longqa.structure.split import LEAF_TOKENS


class Workspace:
    def __init__(self, dataset: str, docs: list[Path], work_dir: Path, resources,
                 chunk_tokens: int = CHUNK_TOKENS, notify=lambda text: None, structure: str = "auto"):
        self.dataset = dataset
        self.structure = structure  # ingest structure mode, as `longqa ingest --structure`
        self.notify = notify  # progress lines while preparing (ingest can take minutes)
        self.docs = [d.resolve() for d in docs]
        self.work_dir = work_dir
        self.resources = resources
        self._db = None
        self._ingested: dict[str, dict] = {}  # path → {"status", "seconds", "error", "id"}
        self._log: dict[str, dict] = {}
        self.ingest_seconds = 0.0  # spent in this run
        self.version = 0  # bumped whenever documents are added to or replaced in the store
        self.chunk_seconds = 0.0
        self._chunk_cache = ChunkCache(work_dir / "chunks", chunk_tokens)
        self._chunks: dict[str, list[Chunk]] = {}
        self._vectors: dict[str, np.ndarray] = {}

    # -- the longqa store ---------------------------------------------------------------------
    def store_path(self) -> Path:
        embedder = self.resources.embedder()
        settings = f"{self.structure}|{LEAF_TOKENS}|{embedder.name}|{__version__}"
        key = hashlib.sha256(settings.encode()).hexdigest()[:12]
        return self.work_dir / "stores" / f"{self.dataset}-{key}.db"

    def store(self):
        if self._db is None:
            path = self.store_path()
            self._db = open_db(path)
            log_file = path.with_suffix(".ingest.json")
            try:
                self._log = json.loads(log_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._log = {}
        return self._db

    def ensure_ingested(self, docs: list[str]) -> None:
        """Ingest the documents this run has not checked yet (unchanged files are skipped fast)."""
        todo = [d for d in docs if d not in self._ingested]
        if not todo:
            return
        db = self.store()
        ingestor = make_ingestor(db, self.resources, self.structure, LEAF_TOKENS)
        for number, doc in enumerate(todo, start=1):
            self.notify(f"{self.dataset}: ingest {number}/{len(todo)} {Path(doc).name[:30]}")
            result = ingestor.ingest(Path(doc))
            self.ingest_seconds += result.seconds
            entry = {"status": result.status, "seconds": result.seconds, "error": result.error, "id": result.id}
            if result.status in ("added", "updated"):
                self.version += 1
                self._log[doc] = {"seconds": result.seconds, "pages": result.pages, "nodes": result.nodes,
                                  "structure": result.structure}
            self._ingested[doc] = entry
        _write_json(self.store_path().with_suffix(".ingest.json"), self._log)

    def doc_ids(self, docs: list[str]) -> list[int]:
        self.ensure_ingested(docs)
        return [self._ingested[d]["id"] for d in docs if self._ingested[d]["id"] is not None]

    def is_whole_store(self, ids: list[int]) -> bool:
        return set(ids) == document_ids(self.store())

    def docs_of_nodes(self, node_ids: list[int]) -> dict[int, str]:
        return document_paths_of(self.store(), node_ids)

    def ingest_report(self) -> dict:
        """Corpus size and ingest cost: spent in this run, and recorded when each file was ingested."""
        checked = {d: e for d, e in self._ingested.items()}
        recorded = sum(self._log.get(d, {}).get("seconds", 0.0) for d in checked)
        return {
            "documents": len(checked),
            "failed": {d: e["error"] for d, e in checked.items() if e["status"] == "failed"},
            "ingested_now": sum(1 for e in checked.values() if e["status"] in ("added", "updated")),
            "seconds_now": round(self.ingest_seconds, 2),
            "seconds_recorded": round(recorded, 2),
            "pages": sum(self._log.get(d, {}).get("pages", 0) for d in checked),
            "nodes": sum(self._log.get(d, {}).get("nodes", 0) for d in checked),
            "chunk_seconds_now": round(self.chunk_seconds, 2),
        }

    # -- baseline chunks ----------------------------------------------------------------------
    def chunks(self, docs: list[str]) -> list[Chunk]:
        started = time.perf_counter()
        out: list[Chunk] = []
        for doc in docs:
            if doc not in self._chunks:
                try:
                    self._chunks[doc] = self._chunk_cache.chunks(Path(doc))
                except Exception as exc:  # an unreadable document simply contributes no chunks
                    from longqa.errors import InputError

                    if not isinstance(exc, InputError):
                        raise
                    self._chunks[doc] = []
            out.extend(self._chunks[doc])
        self.chunk_seconds += time.perf_counter() - started
        return out

    def chunk_vectors(self, docs: list[str]) -> tuple[list[Chunk], np.ndarray]:
        chunks = self.chunks(docs)
        started = time.perf_counter()
        embedder = self.resources.embedder()
        parts = []
        for number, doc in enumerate(docs, start=1):
            if doc not in self._vectors:
                self.notify(f"{self.dataset}: embed chunks {number}/{len(docs)} {Path(doc).name[:30]}")
                self._vectors[doc] = self._chunk_cache.vectors(Path(doc), self._chunks[doc], embedder)
            parts.append(self._vectors[doc])
        self.chunk_seconds += time.perf_counter() - started
        vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dim), np.float32)
        return chunks, vectors


def _write_json(file: Path, data: dict) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tmp.replace(file)
