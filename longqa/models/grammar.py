"""Small GBNF builders for grammar-constrained decisions, and a cache of validated grammars.

GBNF is llama.cpp's grammar format; the same text is sent as the `grammar` field to
llama-server. Builders return plain strings so callers can log or cache them.
"""

from __future__ import annotations

from typing import Any

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_VALID: dict[str, Any] = {}  # grammar text → llama_cpp.LlamaGrammar that parsed cleanly


def literal(text: str) -> str:
    """A GBNF string literal matching `text` exactly."""
    return '"' + "".join(_ESCAPES.get(ch, ch) for ch in text) + '"'


def choice(options: list[str]) -> str:
    """Output exactly one of `options` (e.g. `choice(["yes", "no"])`)."""
    if not options or any(not option for option in options):
        raise ValueError("choice needs non-empty options")
    return "root ::= " + " | ".join(literal(option) for option in dict.fromkeys(options)) + "\n"


def token_sequence(token_ids: list[int]) -> str:
    """Output exactly these tokens, named by id (`<[id]>`, llama.cpp's token references). A text
    literal would not do for scoring: greedy decoding under it may spell " about" as " ", "a",
    "bout", pieces the tokenizer never makes, each far less likely to the model."""
    if not token_ids or any(isinstance(t, bool) or not isinstance(t, int) or t < 0 for t in token_ids):
        raise ValueError("token_sequence needs token ids (non-negative integers)")
    return "root ::= " + " ".join(f"<[{t}]>" for t in token_ids) + "\n"


def integer(max_digits: int = 6) -> str:
    """A non-negative integer of at most `max_digits` digits."""
    return f"root ::= [0-9]{{1,{max_digits}}}\n"


def line(max_chars: int = 200) -> str:
    """Free text on one line (no newline), at most `max_chars` characters."""
    return f"root ::= [^\\n]{{1,{max_chars}}}\n"


def compile_grammar(llm, text: str):
    """A LlamaGrammar for `text`, validated once per process.

    llama-cpp-python defers parsing to sampling time, where a bad grammar would crash the
    process; here a bad grammar is a ValueError before any generation starts.
    """
    cached = _VALID.get(text)
    if cached is not None:
        return cached
    from longqa.models.llama_lib import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    with suppress_stdout_stderr(disable=False):  # the parser prints its complaints to stderr
        sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, text.encode("utf-8"), b"root")
    if not sampler:
        raise ValueError(f"invalid GBNF grammar: {text[:80]!r}")
    llama_cpp.llama_sampler_free(sampler)
    grammar = llama_cpp.LlamaGrammar.from_string(text, verbose=False)
    _VALID[text] = grammar
    return grammar
