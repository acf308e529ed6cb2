"""`longqa ingest`: find files, skip unchanged ones by content hash, parse, structure, embed, store.

Each document is parsed and structured in memory, then its text and tree are written in one
transaction, so an interrupted run leaves no partial document and BM25 can answer about it at once.
Its leaf vectors follow (longqa/embedding.py), a chunk per transaction; leaves still without
vectors after an interruption are embedded by the next run, even when the file is unchanged.
"""

from __future__ import annotations

import glob
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import sqlite_utils

from longqa.embedding import LeafEmbedder, embed_pending
from longqa.errors import InputError
from longqa.parse import SUPPORTED_SUFFIXES, parse_file
from longqa.store.documents import DocumentRecord, find_by_path, save_document
from longqa.structure.choose import LlmStructurer, structure_document
from longqa.structure.tree import Node, walk


@dataclass
class IngestResult:
    path: str
    status: str  # added | updated | skipped | failed
    id: int | None = None
    error: str | None = None
    pages: int = 0
    nodes: int = 0
    structure: str | None = None
    seconds: float = 0.0
    embedded: int = 0  # leaves given vectors in this run (also for an unchanged file resumed)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Ingestor:
    db: sqlite_utils.Database
    structure: str = "auto"
    force: bool = False
    embedder: LeafEmbedder | None = None
    llm_structurer: LlmStructurer | None = None
    # Runs on every tree with its source name before it is stored: generated titles, summaries.
    annotate: Callable[[Node, str], None] | None = None
    max_leaf_tokens: int = 300
    on_pages: Callable[[int], None] = field(default=lambda pages: None)

    def ingest(self, path: Path) -> IngestResult:
        started = time.perf_counter()
        stored_path = str(path.resolve())
        result = IngestResult(path=str(path), status="failed")
        try:
            digest, size = file_digest(path)
            existing = find_by_path(self.db, stored_path)
            if existing and existing["sha256"] == digest and not self.force:
                result.status, result.id = "skipped", existing["id"]
                result.pages, result.nodes = existing["pages"], existing["nodes"]
                result.structure = existing["structure"]
                result.embedded = self._embed(existing["id"])
                return result
            parsed = parse_file(path)
            self.on_pages(parsed.pages)
            root, source = structure_document(
                parsed, self.structure, self.llm_structurer, self.max_leaf_tokens
            )
            if self.annotate is not None:
                self.annotate(root, source)
            record = DocumentRecord(
                path=stored_path, sha256=digest, title=parsed.title, format=parsed.format,
                pages=parsed.pages, structure=source, bytes=size,
            )
            self._ready_embedder()
            result.id = save_document(self.db, record, root)
            result.status = "updated" if existing else "added"
            result.pages, result.structure = parsed.pages, source
            result.nodes = sum(1 for _ in walk(root))
            result.embedded = self._embed(result.id)
        except InputError as exc:
            result.error = exc.reason
        finally:
            result.seconds = round(time.perf_counter() - started, 3)
        return result

    def _ready_embedder(self) -> None:
        """Load the embedder before writing: a lazy one refuses a store built with another
        embedder on load, and that refusal must come before the document is replaced."""
        if self.embedder is not None:
            self.embedder.name  # noqa: B018  (the access is what loads it)

    def _embed(self, doc_id: int) -> int:
        """The stored document's leaves that lack vectors, embedded now (see longqa/embedding.py)."""
        return embed_pending(self.db, self.embedder, doc_id) if self.embedder is not None else 0


def file_digest(path: Path) -> tuple[str, int]:
    """sha256 of the file's bytes, read in chunks; and its size."""
    digest, size = hashlib.sha256(), 0
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None
    return digest.hexdigest(), size


def expand_inputs(inputs: Iterable[str]) -> tuple[list[Path], list[IngestResult]]:
    """Files from paths, directories (recursive, supported types only) and glob patterns.

    Returns the files to ingest and a failed result for each input that names nothing usable.
    """
    files: list[Path] = []
    missing: list[IngestResult] = []
    for item in inputs:
        path = Path(item).expanduser()
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES)
            )
        elif path.is_file():
            files.append(path)
        elif any(ch in item for ch in "*?["):
            matches = sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
            if matches:
                files.extend(matches)
            else:
                missing.append(IngestResult(path=item, status="failed", error="no files match this pattern"))
        else:
            missing.append(IngestResult(path=item, status="failed", error="no such file or directory"))
    seen: set[Path] = set()
    unique = [p for p in files if not (p.resolve() in seen or seen.add(p.resolve()))]
    return unique, missing
