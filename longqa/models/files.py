"""Model files on disk: checksums remembered between runs, atomic writes, GGUF metadata.

Hashing a multi-gigabyte model on every run would cost seconds, so a file's sha256 is remembered
together with its size and modification time; any change to the file makes it hash again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from longqa import config
from longqa.errors import ModelError

# Architectures whose GGUF files are sentence encoders (they pool token states into one vector).
ENCODER_ARCHITECTURES = {"bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "modern-bert", "neo-bert", "t5encoder"}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


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
    key, stat = str(path), _stat_key(path)
    entry = cache.get(key)
    if isinstance(entry, dict) and all(entry.get(k) == v for k, v in stat.items()) and entry.get("sha256"):
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

    A crash or Ctrl-C leaves at most a `.tmp-*` file behind, never a half-written `target`.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".tmp-{target.name}-", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual mode
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


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
