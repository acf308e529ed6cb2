"""The standard RAG baselines' corpus: fixed-size token chunks of each document's body text.

Documents are parsed with longqa's own parsers and chunked over the same body text the tree is built
from (blocks joined by blank lines), so baselines and longqa read identical text. Chunks are exact
slices of the body, cut every `size` cl100k tokens; each keeps the pages it spans. Chunk lists and
their vectors are cached per document (content hash + settings) under the work dir.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from longqa import __version__, tokens
from longqa.ingest import file_digest
from longqa.parse import parse_file
from longqa.structure.build import body_text

CHUNK_TOKENS = 512


@dataclass
class Chunk:
    doc: str  # resolved document path
    title: str
    text: str
    page_start: int
    page_end: int
    tokens: int
    # (offset in `text`, last page of the block starting there): pages of any prefix of the chunk
    marks: list[tuple[int, int]] | None = None

    def prefix_page_end(self, length: int) -> int:
        if not self.marks:
            return self.page_end
        return max([self.page_start] + [page for offset, page in self.marks if offset < length])


def chunk_document(path: Path, size: int = CHUNK_TOKENS) -> list[Chunk]:
    """Parse `path` and cut its body text into consecutive `size`-token chunks."""
    parsed = parse_file(path)
    body, starts = body_text(parsed)
    ids = tokens.encoding().encode_ordinary(body)
    if not ids:
        return []
    _, offsets = tokens.encoding().decode_with_offsets(ids)
    block_pages = [(block.page, block.last_page) for block in parsed.blocks]
    chunks = []
    for first in range(0, len(ids), size):
        start = offsets[first]
        end = offsets[first + size] if first + size < len(ids) else len(body)
        text = body[start:end]
        if not text.strip():
            continue
        first_block = max(bisect.bisect_right(starts, start) - 1, 0)
        last_block = max(bisect.bisect_right(starts, max(end - 1, start)) - 1, 0)
        chunks.append(
            Chunk(
                doc=str(path.resolve()),
                title=parsed.title,
                text=text,
                page_start=block_pages[first_block][0],
                page_end=max(block_pages[last_block][1], block_pages[first_block][0]),
                tokens=tokens.count(text),
                marks=[(max(starts[b] - start, 0), block_pages[b][1]) for b in range(first_block, last_block + 1)],
            )
        )
    return chunks


class ChunkCache:
    """Per-document chunk lists (JSON) and chunk vectors (.npy), keyed by file content."""

    def __init__(self, folder: Path, size: int = CHUNK_TOKENS):
        self.folder = folder
        self.size = size
        folder.mkdir(parents=True, exist_ok=True)

    def _key(self, path: Path) -> str:
        digest, _ = file_digest(path)
        return f"{digest[:20]}-{self.size}-v{__version__}"

    def chunks(self, path: Path) -> list[Chunk]:
        file = self.folder / f"{self._key(path)}.json"
        if file.exists():
            try:
                rows = json.loads(file.read_text(encoding="utf-8"))
                return [Chunk(**{**row, "doc": str(path.resolve()), "marks": [tuple(m) for m in row["marks"]]})
                        for row in rows]
            except (ValueError, TypeError, KeyError):
                pass  # a damaged cache file is rebuilt
        chunks = chunk_document(path, self.size)
        _write_atomic(file, json.dumps([asdict(c) for c in chunks]).encode("utf-8"))
        return chunks

    def vectors(self, path: Path, chunks: list[Chunk], embedder) -> np.ndarray:
        """One vector per chunk (title line + text; the embedder cuts what exceeds its window)."""
        model = hashlib.sha256(embedder.name.encode()).hexdigest()[:12]
        file = self.folder / f"{self._key(path)}-{model}.npy"
        if file.exists():
            try:
                vectors = np.load(file)
                if len(vectors) == len(chunks):
                    return vectors
            except (ValueError, OSError):
                pass
        texts = [f"{c.title}\n{c.text}" for c in chunks]
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32) if texts else np.zeros((0, embedder.dim), np.float32)
        tmp = file.with_suffix(".tmp.npy")
        np.save(tmp, vectors)
        tmp.replace(file)
        return vectors


def _write_atomic(file: Path, data: bytes) -> None:
    tmp = file.with_suffix(file.suffix + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(file)


def fill_budget(ranked: list[Chunk], budget: int, min_tail: int = 64) -> list[Chunk]:
    """Take chunks in rank order while they fit in `budget` tokens; the first chunk that does not
    fit is cut to the remaining room (when at least `min_tail` tokens remain), so every chunk
    baseline uses its budget as fully as longqa does."""
    taken, used = [], 0
    for chunk in ranked:
        room = budget - used
        if chunk.tokens <= room:
            taken.append(chunk)
            used += chunk.tokens
            continue
        if room >= min_tail:
            text = tokens.truncate(chunk.text, room)
            end_page = chunk.prefix_page_end(len(text))
            taken.append(Chunk(chunk.doc, chunk.title, text, chunk.page_start, end_page, room, None))
        break
    return taken
