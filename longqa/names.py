"""File names as longqa stores and prints them.

A POSIX file name is bytes; Python hands names that are not valid UTF-8 over as strings with
lone surrogates, which SQLite, JSON and a UTF-8 terminal all refuse. The store therefore keeps
such bytes written as `\\xNN` (one text form per name, stable across runs, so unchanged files are
still skipped), and messages print names with control characters escaped too, so that a newline
or a terminal escape code in a file name can neither split a message line nor drive the terminal.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# C0/C1 controls, DEL, line and paragraph separators, and the bidirectional overrides that can
# make a printed name read differently from what it is.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def as_text(name: str) -> str:
    """`name` as valid Unicode: bytes that were not UTF-8 (surrogate escapes) become `\\xNN`."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", errors="backslashreplace")


def stored_path(path: Path) -> str:
    """The key a file is stored under: its absolute, symlink-resolved path, as text."""
    return as_text(str(Path(path).expanduser().resolve()))


def shown(name: object) -> str:
    """A name (or any text) fit for one line of a message: valid Unicode, no control characters."""
    text = as_text(str(name))
    return _UNPRINTABLE.sub(_escape, text)


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


# Document text printed to a terminal keeps its line breaks and tabs; other controls and the
# bidirectional overrides (which can make a quote read differently from what is stored) are escaped.
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u061c\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def for_terminal(text: str, stream) -> str:
    """`text` as printed on `stream`: valid Unicode, then escaped on a terminal, unchanged when
    piped (exact text)."""
    text = valid_unicode(text)
    isatty = getattr(stream, "isatty", None)
    return _TERMINAL_UNSAFE.sub(_escape, text) if isatty is not None and isatty() else text


# A lone surrogate is no character: a JSON string's `\udcXX` escape, or an undecodable byte
# carried through Python's surrogateescape. Left in, the filters above never see what it becomes:
# stdout's surrogateescape writes `\udcc2\udc9b` as the bytes of U+009B (a terminal's CSI), and
# a strict stream raises UnicodeEncodeError.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD: text from outside (a server's reply, JSON) is
    made valid before any filter looks at it or any stream writes it."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def valid_json(value):
    """A decoded JSON value with every string in it, keys too, made valid (valid_unicode)."""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, dict):
        return {valid_unicode(k): valid_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [valid_json(v) for v in value]
    return value
