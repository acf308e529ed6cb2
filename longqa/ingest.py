"""`longqa ingest`: find files, skip unchanged ones by content hash, parse, structure, embed, store.

Each document is parsed and structured in memory, then its text and tree are written in one
transaction, so an interrupted run leaves no partial document and BM25 can answer about it at once.
Its leaf vectors follow (longqa/embedding.py), a chunk per transaction; leaves still without
vectors after an interruption are embedded by the next run, even when the file is unchanged.
Without an embedder (`ingest --no-embed`) that phase is left out, for `longqa reindex` to do.
With `--graph` the document's information-point graph follows (longqa/graph), also resumed for
an unchanged file that has none yet.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import os
import sqlite3
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

import sqlite_utils

from longqa import environment
from longqa.config import Limits
from longqa.embedding import LeafEmbedder, embed_pending
from longqa.errors import DocumentChanged, InputError, LongqaError, StoreError
from longqa.models.prompt_fit import PromptTooLong
from longqa.names import as_text, stored_path
from longqa.parse import SUPPORTED_SUFFIXES, parse_file
from longqa.store.documents import DocumentRecord, find_by_path, page_ranges, parse_page_ranges, save_document
from longqa.store.vectors import pending_leaf_count
from longqa.structure.split import LEAF_TOKENS
from longqa.structure.tree_source import LlmStructurer, structure_document
from longqa.tree_types import Node, walk

if TYPE_CHECKING:  # the graph pulls in llama.cpp: loaded only by `ingest --graph`
    from longqa.graph.build import GraphBuilder


# Write errors that no later document could escape: the batch ends on them.
STORE_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}


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
    warnings: list[str] = field(default_factory=list)  # stored, but not everything went well
    embedded: int = 0  # leaves given vectors in this run (also for an unchanged file resumed)
    leaves_without_vectors: int = 0  # left for `longqa reindex` (stored without an embedder)
    # Why a document without headings was stored without sections (also among `warnings`, except
    # under auto for a text merely too short to divide).
    structure_note: str | None = None
    graph: str | None = None  # ingest --graph: "built", or "kept" (a current graph was there)
    # Divided by the local model as a collection of short articles, one section each (None: not
    # divided by the model).
    collection: bool | None = None
    ocr_pages: list[int] = field(default_factory=list)  # PDF pages whose text was read by OCR

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
    max_leaf_tokens: int = LEAF_TOKENS
    limits: Limits = field(default_factory=Limits)
    on_pages: Callable[[int], None] = field(default=lambda pages: None)
    # Told of each PDF page as it is read, and whether by OCR (seconds a page): a progress line can
    # move while a scan is read. Its pages are counted through on_pages as they come.
    on_page: Callable[[bool], None] = field(default=lambda ocr: None)
    graph: GraphBuilder | None = None  # ingest --graph: the information-point graph (longqa/graph)

    def ingest(self, path: Path) -> IngestResult:
        """One file → one stored document, or a failed result saying why (one line).

        Whatever goes wrong with this file — its bytes, its name, a bug it triggers — fails this
        file only. Problems no other file could escape (the store cannot be written, a model cannot
        be loaded) raise a LongqaError for the caller to end the batch with."""
        started = time.perf_counter()
        result = IngestResult(path=as_text(str(path)), status="failed")
        try:
            stored = stored_path(path)
            digest, size = file_digest(path)
            existing = find_by_path(self.db, stored)
            if existing and existing["sha256"] == digest and not self.force:
                result.status, result.id = "skipped", existing["id"]
                result.pages, result.nodes = existing["pages"], existing["nodes"]
                result.structure = existing["structure"]
                result.ocr_pages = sorted(parse_page_ranges(existing.get("ocr_pages")))
                result.embedded = self._embed(existing["id"])
                result.leaves_without_vectors = self._unembedded(existing["id"])
                result.graph = self._graph(existing["id"], result)
                return result
            counted = 0

            def page_read(ocr: bool) -> None:
                nonlocal counted
                counted += 1
                self.on_pages(1)
                self.on_page(ocr)

            parsed = parse_file(path, self.limits, page_read)
            if file_digest(path) != (digest, size):  # rewritten while parsed: hash and text would disagree
                raise InputError(path, "the file changed while it was read; ingest it again once it is written")
            self.on_pages(parsed.pages - counted)
            structure_notes: list[str] = []  # warnings
            remarks: list[str] = []  # not warnings: a text too short to divide, under auto
            root, source = structure_document(
                parsed, self.structure, self.llm_structurer, self.max_leaf_tokens, self.limits,
                structure_notes, remarks,
            )
            notes = list(parsed.warnings) + structure_notes
            if self.annotate is not None:
                self.annotate(root, source)
            record = DocumentRecord(
                path=stored, sha256=digest, title=parsed.title, format=parsed.format,
                pages=parsed.pages, structure=source, bytes=size, ocr_pages=page_ranges(parsed.ocr_pages),
            )
            self._ready_embedder()
            result.id = save_document(self.db, record, root)
            result.status = "updated" if existing else "added"
            result.pages, result.structure, result.warnings = parsed.pages, source, notes
            result.ocr_pages = list(parsed.ocr_pages)
            result.structure_note = "; ".join(structure_notes + remarks) or None
            if source == "llm" and self.llm_structurer is not None:
                result.collection = self.llm_structurer.report.collection
            result.nodes = sum(1 for _ in walk(root))
            result.embedded = self._embed(result.id)
            result.leaves_without_vectors = self._unembedded(result.id)
            result.graph = self._graph(result.id, result)
        except InputError as exc:
            result.error = exc.reason
        except PromptTooLong as exc:  # one text of this document does not fit the model
            result.error = f"model error: {exc}"
        except LongqaError:
            raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"the store cannot be written ({exc})") from None
        except OSError as exc:
            if exc.errno in STORE_FULL_ERRNOS:
                raise StoreError(f"cannot write to the store ({exc.strerror or exc})") from None
            result.error = f"I/O error ({exc.strerror or exc})"
        except Exception as exc:  # a bug this file triggers must not cost the rest of the batch
            result.error = _unexpected(exc)
        finally:
            result.seconds = round(time.perf_counter() - started, 3)
        return result

    def _ready_embedder(self) -> None:
        """Load the embedder before writing: a lazy one refuses a store built with another
        embedder on load, and that refusal must come before the document is replaced."""
        if self.embedder is not None:
            self.embedder.name  # noqa: B018  (the access is what loads it)

    def _embed(self, doc_id: int) -> int:
        """The stored document's leaves that lack vectors, embedded now (see longqa/embedding.py).
        The document is stored by then: where the store cannot take its vectors (a full disk),
        the error says so, as `inspect docs` does, rather than leave it seeming not stored."""
        if self.embedder is None:
            return 0
        try:
            return embed_pending(self.db, self.embedder, doc_id)
        except (StoreError, sqlite3.DatabaseError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno not in STORE_FULL_ERRNOS:
                raise
            if isinstance(exc, StoreError):
                problem = str(exc)
            else:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                problem = f"the store cannot be written ({reason})"
            error = StoreError(f"{problem}; the document is stored, but some of its leaves have no vectors: "
                               "run `longqa reindex` once the store can be written")
            error.problem = problem  # what the files after it are told: true of them too, unlike the rest
            raise error from None

    def _unembedded(self, doc_id: int) -> int:
        """The document's leaves still without vectors: none once `_embed` ran (it embeds them all)."""
        return 0 if self.embedder is not None else pending_leaf_count(self.db, doc_id)

    def _graph(self, doc_id: int, result: IngestResult) -> str | None:
        """The document's graph, built unless a current one (same content, same edges) is stored;
        "skipped", with a warning, when another process removed or replaced the document meanwhile."""
        if self.graph is None:
            return None
        try:
            return "built" if self.graph.build(doc_id) is not None else "kept"
        except DocumentChanged:
            result.warnings.append("removed or stored again by another process while its graph was "
                                   "built; no graph stored")
            return "skipped"


def _unexpected(exc: BaseException) -> str:
    if environment.debug():
        raise exc
    detail = " ".join(str(exc).split())[:200]
    return f"internal error while reading it ({type(exc).__name__}: {detail}; set LONGQA_DEBUG=1 for details)"


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


def expand_inputs(inputs: Iterable[str], *, follow_links: bool = False) -> tuple[list[Path], list[IngestResult]]:
    """Files from paths, directories (recursive, supported types only) and glob patterns.

    Returns the files to ingest and a failed result for each input that names nothing usable:
    missing, unreadable, a symlink loop, a directory with no documents, a device or pipe. In a
    directory, a link to a file outside it is reported, not followed, unless `follow_links`.
    """
    files: list[Path] = []
    failed: list[IngestResult] = []

    def fail(name: str, reason: str) -> None:
        failed.append(IngestResult(path=as_text(name), status="failed", error=reason))

    for item in inputs:
        path = Path(item).expanduser()
        try:
            info = path.stat()
        except (OSError, ValueError) as exc:
            if any(ch in item for ch in "*?[") and isinstance(exc, FileNotFoundError):
                matches = sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
                if matches:
                    files.extend(matches)
                else:
                    fail(item, "no such file, and no files match it as a pattern")
            else:
                fail(item, why_unusable(path, exc))
            continue
        if stat.S_ISDIR(info.st_mode):
            before = len(failed)
            found = _documents_in(path, fail, follow_links)
            files.extend(found)
            if not found and len(failed) == before:
                suffixes = ", ".join(sorted(SUPPORTED_SUFFIXES))
                fail(item, f"directory holds no documents (no {suffixes} files)")
        elif stat.S_ISREG(info.st_mode):
            files.append(path)
        else:
            fail(item, "not a regular file (a device, pipe or socket)")
    seen: set[str] = set()
    unique = []
    for path in files:
        key = stored_path(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique, failed


def _documents_in(folder: Path, fail: Callable[[str, str], None], follow_links: bool = False) -> list[Path]:
    """Supported files under `folder`, sorted; symlinked directories are not followed. A link to a
    file is judged by its target: its type and suffix, and (unless `follow_links`) whether it lies
    inside `folder`; the target is what is ingested. A document that cannot be reached (a symlink
    loop, a broken link, a link out of the folder), one that is not a regular file (a pipe) and a
    directory that cannot be read are reported through `fail`; files of other types are passed over."""
    found: list[Path] = []
    root = folder.resolve()

    def unreadable(exc: OSError) -> None:
        fail(exc.filename or str(folder), f"cannot read directory ({exc.strerror or exc})")

    for top, dirs, names in os.walk(folder, onerror=unreadable):
        dirs.sort()
        for name in sorted(names):
            path = Path(top) / name
            target = path
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError) as exc:
                    if path.suffix.lower() in SUPPORTED_SUFFIXES:
                        fail(str(path), why_unusable(path, exc if isinstance(exc, OSError) else
                                                     OSError(errno.ELOOP, "loop")))
                    continue
            if target is not path and _special(target):
                # Whatever its suffix: a link in a folder of documents to /dev/zero or a pipe is
                # reported, as other links that cannot be ingested are, never passed over unsaid.
                fail(str(path), f"symbolic link to {target}, not a regular file (a device, pipe or socket)")
                continue
            if target.suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            if target is not path and not follow_links and not target.is_relative_to(root):
                fail(str(path), "symbolic link to a file outside the directory; not followed "
                                "(name the file itself, or pass --follow-links)")
                continue
            try:
                info = target.stat()
            except OSError as exc:
                fail(str(path), why_unusable(path, exc))
                continue
            if stat.S_ISREG(info.st_mode):
                found.append(target)
            else:
                fail(str(path), "not a regular file (a device, pipe or socket)")
    return found


def _special(path: Path) -> bool:
    """Whether `path` is a device, pipe or socket (neither a regular file nor a folder)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def configured_ingestor(db: sqlite_utils.Database, generator, embedder, *, structure: str = "auto",
                        summaries: bool | None = None, force: bool = False, limits: Limits | None = None,
                        max_leaf_tokens: int | None = None, embed: bool = True) -> Ingestor:
    """The one ingest set-up, shared by `longqa ingest` and the evaluation harness: the local
    model structures documents without headings under auto/llm and titles (and, per `summaries`,
    summarises) sections; `generator` may be a zero-argument factory, loaded only when a document
    needs it. The embedder must be the one the store's vectors were made with (checked when it
    loads, or here when it is already loaded). Without `embed` no leaf vectors are made (they are
    left to `longqa reindex`); the embedder still serves the model structuring under auto/llm, so
    a document gets the same tree either way."""
    from longqa.models.lazy import LazyModel
    from longqa.store.vectors import require_current
    from longqa.structure.llm import make_llm_structurer
    from longqa.structure.titles import make_section_annotator

    if embedder is not None and not isinstance(embedder, LazyModel):  # a lazy one checks when it loads
        require_current(db, embedder.name)
    options: dict = {"limits": limits or Limits()}
    if max_leaf_tokens is not None:
        options["max_leaf_tokens"] = max_leaf_tokens
    return Ingestor(db=db, structure=structure, force=force, embedder=embedder if embed else None,
                    llm_structurer=make_llm_structurer(generator, db, embedder) if structure in ("auto", "llm") else None,
                    annotate=make_section_annotator(generator, db, summaries), **options)


def why_unusable(path: Path, exc: Exception) -> str:
    """The reason `path` cannot be opened, in words (the errno's, made precise for links)."""
    if isinstance(exc, ValueError):
        return "invalid file name (it contains a NUL byte)"
    code = getattr(exc, "errno", None)
    if code == errno.ENOENT:
        return "broken symbolic link (its target does not exist)" if path.is_symlink() else "no such file or directory"
    if code == errno.ELOOP:
        return "symbolic link loop (the link leads back to itself)"
    if code == errno.ENOTDIR:
        return "no such file or directory (a part of the path is not a directory)"
    return f"cannot open it ({getattr(exc, 'strerror', None) or exc})"
