"""The question as `ask` receives it: from argv or stdin, any bytes, any length.

Bytes that are not UTF-8 become U+FFFD (so JSON output stays valid UTF-8), control characters
become spaces, and a question longer than the models can read is cut with a warning rather than
refused by the generator halfway through.
"""

from __future__ import annotations

import re
import sys

import typer

from longqa import tokens
from longqa.config import QUESTION_MAX_BYTES, QUESTION_MAX_TOKENS

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
# Long enough to hold QUESTION_MAX_TOKENS tokens of any ordinary text; tokenizing no more than
# this keeps a pasted book from costing seconds before it is cut.
_CHARS_PER_TOKEN_BOUND = 32


def read_question(arg: str) -> tuple[str, list[str]]:
    """The question text and the warnings to print about what was done to it."""
    warnings: list[str] = []
    if arg == "-":
        raw = _read_stdin()
        if len(raw) > QUESTION_MAX_BYTES:
            raw = raw[:QUESTION_MAX_BYTES]
            warnings.append(f"only the first {QUESTION_MAX_BYTES:,} bytes of stdin were read")
        text = raw.decode("utf-8", errors="replace")
    else:
        text = _argv_text(arg)
    text = _CONTROLS.sub(" ", text).strip()
    if not text:
        raise typer.BadParameter("the question is empty", param_hint="QUESTION")
    cut, total = cut_question(text)
    if cut != text:
        size = f"{total:,} tokens" if total is not None else f"{len(text):,} characters"
        warnings.append(
            f"the question was cut to its first {QUESTION_MAX_TOKENS} tokens (it had {size}): "
            "that is what the models can read"
        )
    return cut, warnings


def cut_question(text: str, max_tokens: int = QUESTION_MAX_TOKENS) -> tuple[str, int | None]:
    """`text` cut to `max_tokens` tokens, and its token count (None where not counted in full)."""
    if len(text.encode("utf-8")) <= max_tokens:  # a token holds at least one byte: no need to count
        return text, None
    limit = max_tokens * _CHARS_PER_TOKEN_BOUND
    head = text[:limit]
    count = tokens.count(head)
    if count <= max_tokens:
        return (text, count) if len(text) <= limit else (head, None)
    return tokens.truncate(head, max_tokens).rstrip("\ufffd").rstrip(), count if len(text) <= limit else None


def _read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        return stream.read(QUESTION_MAX_BYTES + 1)
    return sys.stdin.read().encode("utf-8", errors="surrogateescape")


def _argv_text(arg: str) -> str:
    """argv carries undecodable bytes as surrogate escapes: back to bytes, then U+FFFD."""
    try:
        raw = arg.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:  # other lone surrogates (only from callers inside Python)
        raw = arg.encode("utf-8", errors="surrogatepass")
    return raw.decode("utf-8", errors="replace")
