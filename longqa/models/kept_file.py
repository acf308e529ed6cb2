"""Reading a kept prompt head's KV state back from its file (models/llama.py `_KeptPrefix`).

The file is a cache under the models folder, so it is trusted no further than the vectors file
is (store/vector_file.py): opened without following a link and without waiting on a pipe, used
only when it is this user's own regular file no larger than the state of that many tokens can
be (`state_cap`), and read straight into the buffer llama.cpp loads from (one copy in memory,
not a bytes object and then an array). Anything else is no kept state: the head is read again,
and its state written over the file.
"""

from __future__ import annotations

import ctypes
import os

from longqa.models.llama_lib import llama_cpp
from longqa.models.regular_file import NotRegularFile, open_regular, read_into

# A sequence's state holds, besides its K and V rows, a header and each cell's position and
# sequence ids: far less than this.
STATE_SLACK_BYTES = 1 << 20
KV_BYTES = 4  # per number: f32, the widest type llama.cpp keeps K and V in (f16 by default)


def state_cap(model, tokens: int) -> int:
    """The most bytes the state of `tokens` tokens of `model` (a llama.cpp model pointer) can
    take: a K and a V row of the model's width per layer and token, at the widest number type."""
    per_token = 2 * llama_cpp.llama_model_n_layer(model) * llama_cpp.llama_model_n_embd(model) * KV_BYTES
    return STATE_SLACK_BYTES + tokens * per_token


def read_state(path: str | os.PathLike, cap: int):
    """The file's bytes as a ctypes array for llama_state_seq_set_data, or None where the file
    is absent, not this user's regular file (a link, a pipe, a device), over `cap` bytes, or
    shorter than it said."""
    try:
        fd, size = open_regular(path, cap, private=True)
    except NotRegularFile:
        return None
    data = (ctypes.c_uint8 * size)()
    try:
        return data if read_into(fd, data) == size else None
    except OSError:
        return None
