"""Read a text file in whatever encoding decodes it; undecodable bytes become U+FFFD, not errors."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from longqa.errors import InputError

_BOMS = [
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
]


# C0 controls but tab, newline, form feed (a page break) and carriage return; DEL; C1 controls.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None
    return decode_bytes(data, path)


def decode_bytes(data: bytes, path: Path) -> str:
    """The text of `data`, with control characters (terminal escape codes among them) removed:
    stored text is printed back to terminals by `inspect` and `ask --context-only`."""
    return _CONTROLS.sub("", _decode(data, path))


def _decode(data: bytes, path: Path) -> str:
    encoding = wide_encoding(data)
    if encoding:
        return data.decode(encoding, errors="replace")
    if looks_binary(data):
        raise InputError(path, "not a text document (binary data)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
        return text
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


def wide_encoding(data: bytes) -> str | None:
    """The encoding named by a byte-order mark, or UTF-16 recognised without one; None for text
    to be read as UTF-8 or cp1252. Such text holds NUL bytes, so this is asked before binary data
    is refused."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return utf16_without_bom(data)


def utf16_without_bom(data: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" for UTF-16 text written without a byte-order mark: mostly Latin
    text, whose every other byte is NUL, on the same side throughout the first 8 KiB."""
    head = data[:8192]
    head = head[: len(head) - len(head) % 2]
    if len(head) < 8:
        return None
    even, odd = head[0::2], head[1::2]
    half = len(head) // 2
    if odd.count(0) > 0.6 * half and even.count(0) == 0:
        return "utf-16-le"
    if even.count(0) > 0.6 * half and odd.count(0) == 0:
        return "utf-16-be"
    return None


def looks_binary(data: bytes) -> bool:
    """NUL bytes or a high share of control characters in the first 8 KiB mean binary data."""
    head = data[:8192]
    if not head:
        return False
    if b"\x00" in head:
        return True
    controls = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 12, 13, 27))
    return controls / len(head) > 0.1
