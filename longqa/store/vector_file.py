"""A memory-mapped copy of one embedder's vectors, in a file beside the store.

Reading 100,000 vectors out of SQLite costs most of a second in every fresh process; mapping a
file costs almost nothing, and the OS page cache keeps it warm between processes. The store stays
the source of truth: the file records the store's id and its vector version (store/migrations.py
M002: a counter every change to `embeddings` bumps in the same transaction), and it is used only
while both still match. Otherwise it is rebuilt from the store. It is written to a temporary name
and renamed, so a crash leaves either the old file or the new one, never a torn one; a stale file
is simply ignored. Deleting the folder loses nothing.

The folder is private (0700) and used only while it is a real folder of this user that no one
else may write: in a shared directory another user could otherwise plant a file, a link or a
pipe under the predictable name. The file is opened without following links and used only when
it is a regular file of this user.

Layout of `<store>.vectors/<model slug>.lqv`: an 8-byte magic, an 8-byte header length, a JSON
header (store id, version, model, rows, dim, sha256 of the id arrays), zero padding to a 64-byte
boundary, then the node ids (int64), the document ids (int64), the matrix (float32, rows
L2-normalised), row-major, and the rows' sign bits (bit set where a component is > 0), one uint64
word per 64 dimensions, word-major: a million rows of 384 dimensions take 48 MB, which a search
can scan whole where the 1.5 GB matrix would not fit its time or memory (store/vectors.py). Rows
moved within the file change the id checksum, so the file is rebuilt rather than a vector given to
the wrong leaf. A file of an older layout (another magic) is simply rebuilt.

A large matrix is read row by row with pread, not through the mapping: touching a few thousand
scattered rows of a mapping maps whole folios around each (measured: 20,000 rows of a 1.5 GB
mapping left the process holding all 1.5 GB), and that memory counts against the process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import struct
import tempfile
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from longqa.config import make_private_dir

MAGIC = b"LQVEC002"  # 002: sign bits after the matrix
ALIGN = 64
STALE_TMP_S = 3600  # a temporary file this old was left by a killed writer, not one still writing


def folder_for(store: Path) -> Path:
    return store.with_name(store.name + ".vectors")


def file_for(store: Path, model: str) -> Path:
    """One file per embedder; the slug keeps the name readable and the hash keeps it unique."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model)[:60]
    digest = hashlib.sha1(model.encode()).hexdigest()[:10]
    return folder_for(store) / f"{slug}-{digest}.lqv"


def _offsets(header_len: int, rows: int, dim: int) -> tuple[int, int, int, int, int]:
    start = -(-(16 + header_len) // ALIGN) * ALIGN
    docs = start + rows * 8
    matrix = docs + rows * 8
    codes = matrix + rows * dim * 4
    return start, docs, matrix, codes, codes + code_words(dim) * rows * 8


def code_words(dim: int) -> int:
    return -(-dim // 64)


def sign_codes(matrix: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """The rows' sign bits as (words, rows) uint64, dimensions padded with 0 bits to a multiple of
    64 (a query's codes are padded alike, so the padding never counts as a difference)."""
    rows, dim = matrix.shape
    words = code_words(dim)
    codes = np.empty((words, rows), np.uint64)
    for start in range(0, rows, chunk):
        block = np.asarray(matrix[start:start + chunk]) > 0
        if dim % 64:
            block = np.pad(block, ((0, 0), (0, words * 64 - dim)))
        codes[:, start:start + len(block)] = np.packbits(block, axis=1).view(np.uint64).T
    return codes


class RowReader:
    """Rows of the matrix read with pread from the descriptor the mapping was made from (a file
    renamed over it meanwhile cannot mix in another's rows); adjacent rows are read in one call."""

    def __init__(self, fd: int, offset: int, dim: int):
        self.fd, self.offset, self.dim = fd, offset, dim
        self._closer = weakref.finalize(self, os.close, fd)

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, np.int64)
        out = np.empty((len(rows), self.dim), np.float32)
        if not len(rows):
            return out
        width = self.dim * 4
        view = memoryview(out).cast("B")
        breaks = np.flatnonzero(np.diff(rows) != 1) + 1
        for first, last in zip(np.r_[0, breaks], np.r_[breaks, len(rows)]):
            first, last = int(first), int(last)
            wanted = (last - first) * width
            got = os.preadv(self.fd, [view[first * width:last * width]], self.offset + int(rows[first]) * width)
            if got != wanted:
                raise OSError(f"vector file shorter than its header says ({got} of {wanted} bytes)")
        return out


def private_folder(folder: Path) -> bool:
    """True when `folder` is a real directory (not a link) of this user that no one else may
    write; only then are its files trusted and written."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def _open_own_file(path: Path) -> int | None:
    """A descriptor of `path` when it is a regular file of this user, reached without following a
    link; None otherwise. O_NONBLOCK: opening a planted pipe must not wait for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        os.close(fd)
        return None
    return fd


def _ids_digest(node_ids: np.ndarray, doc_ids: np.ndarray) -> str:
    # hashed from the arrays' own memory: a bytes copy of a million mapped ids cost ~9 ms per process
    digest = hashlib.sha256(np.ascontiguousarray(node_ids, np.int64))
    digest.update(np.ascontiguousarray(doc_ids, np.int64))
    return digest.hexdigest()


@dataclass
class Mapped:
    node_ids: np.ndarray
    doc_ids: np.ndarray
    matrix: np.ndarray
    codes: np.ndarray  # (words, rows) uint64 sign bits
    rows: RowReader | None  # None for an empty file


def read(path: Path, *, store_uuid: str, version: int, model: str) -> Mapped | None:
    """The ids, matrix and sign bits mapped read-only (Mapped), or None when the file is absent, damaged,
    not this user's own regular file in a private folder, or no longer mirrors the store (another
    id, version or model, or ids that do not match their checksum)."""
    if not private_folder(path.parent):
        return None
    fd = _open_own_file(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
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
            start, docs, matrix, codes, end = _offsets(header_len, rows, dim)
            if os.fstat(handle.fileno()).st_size != end:
                return None
            if rows == 0:
                return Mapped(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, dim), np.float32),
                              np.zeros((code_words(dim), 0), np.uint64), None)
            raw = np.memmap(handle, dtype=np.uint8, mode="r", shape=(end,))  # maps this descriptor
            reader = RowReader(os.dup(handle.fileno()), matrix, dim)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    node_ids = raw[start:docs].view(np.int64)
    doc_ids = raw[docs:matrix].view(np.int64)
    if header.get("ids_sha256") != _ids_digest(node_ids, doc_ids):
        return None
    vectors = raw[matrix:codes].view(np.float32).reshape(rows, dim)
    signs = raw[codes:end].view(np.uint64).reshape(code_words(dim), rows)
    return Mapped(node_ids, doc_ids, vectors, signs, reader)


def write(path: Path, *, store_uuid: str, version: int, model: str,
          node_ids: np.ndarray, doc_ids: np.ndarray, matrix: np.ndarray) -> bool:
    """Write the file atomically; False (and nothing left behind) when it cannot be written, e.g.
    a read-only folder: the caller then keeps its in-memory copy, which is just slower."""
    rows, dim = matrix.shape
    header = json.dumps({"store_uuid": store_uuid, "version": version, "model": model, "rows": rows, "dim": dim,
                         "ids_sha256": _ids_digest(node_ids, doc_ids)}).encode()
    start = _offsets(len(header), rows, dim)[0]
    tmp = None
    try:
        make_private_dir(path.parent)
        _tighten(path.parent)
        if not private_folder(path.parent):
            return False
        _remove_leftovers(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(MAGIC + struct.pack("<Q", len(header)) + header)
            handle.write(b"\0" * (start - 16 - len(header)))
            handle.write(np.ascontiguousarray(node_ids, np.int64).tobytes())
            handle.write(np.ascontiguousarray(doc_ids, np.int64).tobytes())
            for first in range(0, rows, 65536):  # in slices: no second copy of a large matrix
                handle.write(np.ascontiguousarray(matrix[first:first + 65536], np.float32).tobytes())
            handle.write(sign_codes(matrix).tobytes())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False


def _tighten(folder: Path) -> None:
    """A folder of this user made by an earlier version (0755, or 0775 under a group umask) is
    made private; anyone else's is left alone, and then not used."""
    with contextlib.suppress(OSError):
        info = folder.lstat()
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o077:
            os.chmod(folder, 0o700)


def _remove_leftovers(folder: Path) -> None:
    for leftover in folder.glob("*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - leftover.stat().st_mtime > STALE_TMP_S:
                leftover.unlink()
