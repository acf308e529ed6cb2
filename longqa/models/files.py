"""Model files on disk: checksums remembered between runs, atomic writes, GGUF metadata.

Hashing a multi-gigabyte model on every run would cost seconds, so a file's sha256 is remembered
together with its size and modification time; any change to the file makes it hash again.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import mmap
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Iterator

from longqa import config
from longqa.errors import ModelError

# Architectures whose GGUF files are sentence encoders (they pool token states into one vector).
TEMP_PREFIX = ".tmp-"  # atomic_path's temporary files, and what sweep_stale looks for
ENCODER_ARCHITECTURES = {"bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "modern-bert", "neo-bert", "t5encoder"}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def is_sha256(value: object) -> bool:
    """Whether `value` is a sha256 as this module writes it (64 lowercase hex digits): a cache or
    stamp entry of any other form is damaged, and read as missing."""
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _stat_key(path: Path) -> dict:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _hash_cache_path() -> Path:
    return config.models_dir() / "hashes.json"


def cached_sha256(path: Path) -> str:
    """sha256 of `path`, from the cache in the models dir while size and mtime are unchanged."""
    path = Path(path).resolve()
    cache_file = _hash_cache_path()
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    if not isinstance(cache, dict):  # the cache is ours, but a damaged one is only no cache
        cache = {}
    key, stat = str(path), _stat_key(path)
    entry = cache.get(key)
    if isinstance(entry, dict) and all(entry.get(k) == v for k, v in stat.items()) and is_sha256(entry.get("sha256")):
        return entry["sha256"]
    digest = sha256_file(path)
    cache[key] = {**stat, "sha256": digest}
    with contextlib.suppress(OSError):  # a read-only models dir only costs a re-hash next time
        write_atomic(cache_file, json.dumps(cache, indent=1).encode())
    return digest


def write_atomic(target: Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A temporary path next to `target`, renamed onto it only if the block finishes.

    A crash or Ctrl-C leaves at most a `.tmp-*` file behind, never a half-written `target`. The
    temporary file is locked (flock) while it is written, so the next write into the folder
    knows a leftover from a killed process (unlocked) from one being written now, and removes it:
    a kill -9 during an assembly would otherwise strand up to a model's size on disk.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(target.parent)
    fd, tmp = _locked_temp(target)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual mode
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.close(fd)  # the lock goes with it


def _locked_temp(target: Path) -> tuple[int, Path]:
    """A new `.tmp-<name>-*` file next to `target`, flock'ed by this process. A sweep may take the
    lock between the file's creation and ours and remove it: then another is made."""
    while True:
        fd, name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{target.name}-", dir=target.parent)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(name).st_ino == os.fstat(fd).st_ino:
                return fd, Path(name)
        except FileNotFoundError:
            pass
        os.close(fd)


def sweep_stale(folder: Path) -> list[Path]:
    """Remove `.tmp-*` files in `folder` that no process is writing (no lock held on them): what
    a killed write left. This user's regular files only; a folder that cannot be changed is left
    as it is. Returns the files removed."""
    removed = []
    try:
        candidates = list(folder.glob(f"{TEMP_PREFIX}*"))
    except OSError:
        return removed
    for path in candidates:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if not S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # being written now
            if os.lstat(path).st_ino == info.st_ino:
                os.unlink(path)
                removed.append(path)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def cannot_write(folder: Path, exc: OSError, needs_bytes: int | None = None) -> str:
    """Why a model file could not be written into `folder`, in one line, with what would let it:
    the space it needs, or a writable folder ($LONGQA_MODELS_DIR)."""
    where = f"{folder} ({exc.strerror or type(exc).__name__})"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        needs = f"{_amount(needs_bytes)} free there" if needs_bytes else "more free space there"
        return f"{where}: it needs {needs}, or LONGQA_MODELS_DIR naming a folder on a disk with room"
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{where}: it needs a writable folder: set LONGQA_MODELS_DIR to one"
    return f"{where}: cannot write the model file there"


def _amount(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB" if size >= 1e6 else f"{size:,} bytes"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@dataclass(frozen=True)
class GgufInfo:
    path: Path
    size: int
    architecture: str
    name: str
    context_length: int | None
    embedding_length: int | None
    pooling_type: int | None  # 0 none, 1 mean, 2 cls, 3 last, 4 rank; None when not recorded
    causal: bool | None
    chat_template: str | None = None  # tokenizer.chat_template: how an instruction-tuned model reads turns

    @property
    def is_encoder(self) -> bool:
        """A sentence encoder: known encoder architecture or an explicit non-zero pooling type."""
        return self.architecture in ENCODER_ARCHITECTURES or bool(self.pooling_type)


def read_gguf_info(path: str | os.PathLike) -> GgufInfo:
    """Header metadata of a GGUF file; ModelError (one line) when it is missing or not GGUF."""
    path = config.expand(path)
    if not path.is_file():
        raise ModelError(f"{path}: model file not found")
    try:
        fields = read_gguf_header(path)
    except OSError as exc:
        raise ModelError(f"{path}: cannot read model file ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ModelError(f"{path}: {exc}") from None
    arch = str(fields.get("general.architecture", ""))
    if not arch:
        raise ModelError(f"{path}: GGUF file has no general.architecture")

    def number(key: str) -> int | None:
        value = fields.get(f"{arch}.{key}")
        return int(value) if isinstance(value, (int, float)) else None

    causal = fields.get(f"{arch}.attention.causal")
    return GgufInfo(
        path=path.resolve(),
        size=path.stat().st_size,
        architecture=arch,
        name=str(fields.get("general.name", path.stem)),
        context_length=number("context_length"),
        embedding_length=number("embedding_length"),
        pooling_type=number("pooling_type"),
        causal=bool(causal) if causal is not None else None,
        chat_template=template if isinstance(template := fields.get("tokenizer.chat_template"), str) else None,
    )


# GGUF value types: struct format of the fixed-size ones; 8 is string, 9 is array.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def read_gguf_header(path: Path) -> dict[str, object]:
    """The key/value metadata of a GGUF file: scalars and strings; arrays (vocabularies) are
    skipped, not decoded. A small reader of our own: gguf's GGUFReader decodes every array and
    takes seconds on a 262k-token vocabulary."""
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ValueError("not a GGUF model file")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            try:
                return _parse_kv(data)
            except (struct.error, IndexError, UnicodeDecodeError, KeyError) as exc:
                raise ValueError(f"corrupt GGUF model file ({type(exc).__name__})") from None


def _parse_kv(data) -> dict[str, object]:
    version, _tensors, count = struct.unpack_from("<IQQ", data, 4)
    if version < 2:
        raise ValueError(f"unsupported GGUF version {version}")
    pos, fields = 24, {}
    for _ in range(count):
        key, pos = _string(data, pos)
        (kind,) = struct.unpack_from("<I", data, pos)
        value, pos = _value(data, pos + 4, kind)
        fields[key] = value
    return fields


def _string(data, pos: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", data, pos)
    end = pos + 8 + length
    if end > len(data):
        raise IndexError("string past end of file")
    return bytes(data[pos + 8:end]).decode("utf-8"), end


def _value(data, pos: int, kind: int) -> tuple[object, int]:
    if kind == _STRING:
        return _string(data, pos)
    if kind == _ARRAY:
        item_kind, length = struct.unpack_from("<IQ", data, pos)
        pos += 12
        if item_kind in _SCALARS:
            return None, pos + length * struct.calcsize(_SCALARS[item_kind])
        for _ in range(length):  # strings: step over each one by its length prefix
            if item_kind != _STRING:
                _, pos = _value(data, pos, item_kind)
                continue
            (size,) = struct.unpack_from("<Q", data, pos)
            pos += 8 + size
        if pos > len(data):
            raise IndexError("array past end of file")
        return None, pos
    fmt = _SCALARS[kind]
    return struct.unpack_from(fmt, data, pos)[0], pos + struct.calcsize(fmt)
