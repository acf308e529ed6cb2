"""Opening a file that a setting names or a cache keeps, only when it is a regular file of bounded size.

(Here, on the bottom floor beside the model backends, so that settings, weights files and kept
prompt heads all open files one way.)

Such a path may name a pipe (opening or reading it waits for a writer forever), a device
(`/dev/zero` reads without end), a folder, or a file far larger than any the tool writes. The file
is opened with O_NONBLOCK, so that opening a pipe returns at once; the opened descriptor (not the
name, which could be swapped in between) must be a regular file within the cap, and is read no
further than its size. Cache files are also opened without following a link and must be this
user's own (`private=True`), as the vectors file is (store/vector_file.py).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = {stat.S_IFIFO: "a named pipe", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device",
          stat.S_IFDIR: "a folder", stat.S_IFSOCK: "a socket"}


class NotRegularFile(OSError):
    """The file is absent, not a regular file, too large, a link or another user's; the message
    says which, in a few words (`{path}: {message}` makes the one-line error)."""


def open_regular(path: str | os.PathLike, cap: int, *, private: bool = False) -> tuple[int, int]:
    """(descriptor, size) of `path` opened for reading; NotRegularFile where it is not a regular
    file of at most `cap` bytes (with `private`: reached through a link, or not this user's)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_NOFOLLOW if private else 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if private and Path(path).is_symlink():
            raise NotRegularFile("a link, not followed") from None
        raise NotRegularFile(exc.strerror or str(exc)) from None
    info = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = f"not a regular file ({_KINDS.get(stat.S_IFMT(info.st_mode), 'a special file')})"
    elif info.st_size > cap:
        problem = f"{_size(info.st_size)}, over the {_size(cap)} such a file may be"
    elif private and info.st_uid != os.geteuid():
        problem = "another user's file"
    if problem:
        os.close(fd)
        raise NotRegularFile(problem)
    return fd, info.st_size


def read_regular(path: str | os.PathLike, cap: int) -> bytes:
    """The bytes of `path`, a regular file of at most `cap` bytes (else NotRegularFile)."""
    fd, size = open_regular(path, cap)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(size + 1)[:cap]  # a file growing meanwhile is read only to the cap


def read_into(fd: int, buffer) -> int:
    """Fill `buffer` (any writable buffer, e.g. a ctypes array) from `fd` with no copy in between;
    the number of bytes read (less than its size only where the file is shorter). Closes `fd`."""
    view = memoryview(buffer).cast("B")
    filled = 0
    with os.fdopen(fd, "rb", buffering=0) as handle:
        while filled < len(view):
            count = handle.readinto(view[filled:])
            if not count:
                break
            filled += count
    return filled


def _size(count: int) -> str:
    return f"{count / (1 << 20):.1f} MiB" if count >= 1 << 20 else f"{count:,} bytes"
