"""A memory-mapped copy of one embedder's vectors, in a file beside the store.

Reading 100,000 vectors out of SQLite costs most of a second in every fresh process; mapping a
file costs almost nothing, and the OS page cache keeps it warm between processes. The store stays
the source of truth: the file records the store's id and its vector version (store/migrations.py
M002: a counter every change to `embeddings` bumps in the same transaction), and it is used only
while both still match. Otherwise it is rebuilt from the store. It is written to a temporary name
and renamed, so a crash leaves either the old file or the new one, never a torn one; a stale file
is simply ignored. Deleting the folder loses nothing.

Layout of `<store>.vectors/<model slug>.lqv`: an 8-byte magic, an 8-byte header length, a JSON
header (store id, version, model, rows, dim), zero padding to a 64-byte boundary, then the node
ids (int64), the document ids (int64) and the matrix (float32, rows L2-normalised), row-major.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import struct
import tempfile
import time
from pathlib import Path

import numpy as np

MAGIC = b"LQVEC001"
ALIGN = 64
STALE_TMP_S = 3600  # a temporary file this old was left by a killed writer, not one still writing


def folder_for(store: Path) -> Path:
    return store.with_name(store.name + ".vectors")


def file_for(store: Path, model: str) -> Path:
    """One file per embedder; the slug keeps the name readable and the hash keeps it unique."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model)[:60]
    digest = hashlib.sha1(model.encode()).hexdigest()[:10]
    return folder_for(store) / f"{slug}-{digest}.lqv"


def _offsets(header_len: int, rows: int, dim: int) -> tuple[int, int, int, int]:
    start = -(-(16 + header_len) // ALIGN) * ALIGN
    docs = start + rows * 8
    matrix = docs + rows * 8
    return start, docs, matrix, matrix + rows * dim * 4


def read(path: Path, *, store_uuid: str, version: int, model: str):
    """(node_ids, doc_ids, matrix) mapped read-only, or None when the file is absent, damaged or
    no longer mirrors the store (another id, version or model)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(16)
            if len(head) != 16 or head[:8] != MAGIC:
                return None
            (header_len,) = struct.unpack("<Q", head[8:])
            if header_len > 1 << 16:
                return None
            header = json.loads(handle.read(header_len))
        if (header.get("store_uuid"), header.get("version"), header.get("model")) != (store_uuid, version, model):
            return None
        rows, dim = int(header["rows"]), int(header["dim"])
        start, docs, matrix, end = _offsets(header_len, rows, dim)
        if path.stat().st_size != end:
            return None
        if rows == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, dim), np.float32)
        raw = np.memmap(path, dtype=np.uint8, mode="r")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    node_ids = raw[start:docs].view(np.int64)
    doc_ids = raw[docs:matrix].view(np.int64)
    vectors = raw[matrix:end].view(np.float32).reshape(rows, dim)
    return node_ids, doc_ids, vectors


def write(path: Path, *, store_uuid: str, version: int, model: str,
          node_ids: np.ndarray, doc_ids: np.ndarray, matrix: np.ndarray) -> bool:
    """Write the file atomically; False (and nothing left behind) when it cannot be written, e.g.
    a read-only folder: the caller then keeps its in-memory copy, which is just slower."""
    rows, dim = matrix.shape
    header = json.dumps({"store_uuid": store_uuid, "version": version, "model": model,
                         "rows": rows, "dim": dim}).encode()
    start, _, _, _ = _offsets(len(header), rows, dim)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(MAGIC + struct.pack("<Q", len(header)) + header)
            handle.write(b"\0" * (start - 16 - len(header)))
            handle.write(np.ascontiguousarray(node_ids, np.int64).tobytes())
            handle.write(np.ascontiguousarray(doc_ids, np.int64).tobytes())
            handle.write(np.ascontiguousarray(matrix, np.float32).tobytes())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False


def _remove_leftovers(folder: Path) -> None:
    for leftover in folder.glob("*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - leftover.stat().st_mtime > STALE_TMP_S:
                leftover.unlink()
