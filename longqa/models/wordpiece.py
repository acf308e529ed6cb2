"""BERT word pieces in pure Python, token for token the same as llama.cpp's WordPiece tokenizer.

The default embedder needs only token ids from its vocabulary. Loading llama.cpp for them cost a
fresh `ask --context-only` about 0.13 s (the library's import and a vocabulary-only model) and a
GGUF written to the models folder; this reads the shipped vocab.txt instead.

The ids must equal llama.cpp's, not merely be plausible: stores built with that tokenizer hold
vectors of its ids, and a store's vectors and its questions' vectors must come from the same
pieces. So this follows llama.cpp's rules, including where they differ from Hugging Face's
BertTokenizer (each character is replaced by the first character of its canonical
decomposition, which drops accents; symbols outside ASCII stay inside words).
tests/models/test_wordpiece.py compares the two on every code point of the Basic Multilingual Plane and on
real documents.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from longqa.models.convert import llama_wordpiece_tokens

# llama.cpp's whitespace set (Unicode's White_Space property).
WHITESPACE = frozenset(map(chr, [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                                 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]))
# Ideographs that stand alone as words (BERT's CJK ranges, as llama.cpp has them).
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
# Code points that Unicode 15.0 assigned (marks and format controls that llama.cpp drops, and
# punctuation that stands alone) and that Python before 3.12 does not know.
UNICODE_15_DROPPED = ((0x0CF3, 0x0CF3), (0x0ECE, 0x0ECE), (0x10EFD, 0x10EFF), (0x11241, 0x11241),
                      (0x11F00, 0x11F01), (0x11F03, 0x11F03), (0x11F34, 0x11F3A), (0x11F3E, 0x11F42),
                      (0x13439, 0x13440), (0x13447, 0x13455), (0x1E08F, 0x1E08F), (0x1E4EC, 0x1E4EF))
UNICODE_15_ALONE = ((0x11B00, 0x11B09), (0x11F43, 0x11F4F))
WORD_START = "\u2581"  # how llama.cpp marks a piece that begins a word (see llama_wordpiece_tokens)

SPACE, DROP, ALONE, INWORD = range(4)


def _classify(ch: str) -> tuple[int, str]:
    """What a character does in a text: ends a word (SPACE), is skipped (DROP), is a word of
    its own (ALONE) or joins the current word (INWORD); and the lower-cased base character."""
    if ch in WHITESPACE:
        return SPACE, ""
    ch = unicodedata.normalize("NFD", ch)[0]  # the base character: accents go
    if ch in WHITESPACE:
        return SPACE, ""
    category = unicodedata.category(ch)
    code = ord(ch)
    if category == "Cn":  # unassigned in this Python's Unicode database: see UNICODE_15_*
        if _within(code, UNICODE_15_DROPPED):
            return DROP, ""
        if _within(code, UNICODE_15_ALONE):
            return ALONE, ch
    if code == 0 or code == 0xFFFD or category[0] == "M" or (category[0] == "C" and category != "Cn"):
        return DROP, ""
    lower = ch.lower()
    if len(lower) != 1:  # a full case mapping of several characters: llama.cpp uses the simple one
        lower = ch if code != 0x130 else "i"
    if (category[0] == "P" or (code < 0x7F and category[0] == "S")
            or _within(code, CJK_RANGES)):
        return ALONE, lower
    return INWORD, lower


def _within(code: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(low <= code <= high for low, high in ranges)


class WordPiece:
    """Token ids of a BERT vocabulary: `encode(text)` is [CLS] pieces [SEP]."""

    def __init__(self, vocab: list[str]):
        # One table of the vocabulary as llama.cpp reads it (a piece that begins a word keyed with
        # WORD_START in front, a piece inside a word without its `##`); a later duplicate wins.
        self.table = {token: index for index, token in enumerate(llama_wordpiece_tokens(vocab))}
        self.unk, self.cls, self.sep = (vocab.index(t) for t in ("[UNK]", "[CLS]", "[SEP]"))
        self.longest = max(map(len, self.table))
        self._classes: dict[str, tuple[int, str]] = {}

    @classmethod
    def from_file(cls, path: Path) -> "WordPiece":
        return cls(Path(path).read_text(encoding="utf-8").splitlines())

    def words(self, text: str) -> list[str]:
        """The text split into lower-cased, accent-free words and single punctuation marks."""
        words, current = [], []
        classes = self._classes
        for ch in text:
            kind, lower = classes.get(ch) or classes.setdefault(ch, _classify(ch))
            if kind == INWORD:
                current.append(lower)
            elif kind == DROP:
                continue
            else:
                if current:
                    words.append("".join(current))
                    current = []
                if kind == ALONE:
                    words.append(lower)
        if current:
            words.append("".join(current))
        return words

    def word_ids(self, word: str) -> list[int]:
        """Greedy longest-match pieces of one word; [UNK] alone when any part has no piece.
        (A WORD_START inside the text's word lets a word-start piece match there, as in llama.cpp.)"""
        word = WORD_START + word
        ids, start, table = [], 0, self.table
        while start < len(word):
            end = min(len(word), start + self.longest)
            while end > start and word[start:end] not in table:
                end -= 1
            if end == start:
                return [self.unk]
            ids.append(table[word[start:end]])
            start = end
        return ids

    def encode(self, text: str, max_tokens: int | None = None) -> list[int]:
        """[CLS] word pieces [SEP]; with max_tokens, cut to that many keeping the closing [SEP]."""
        out = [self.cls]
        room = None if max_tokens is None else max_tokens - 1
        for word in self.words(text):
            out.extend(self.word_ids(word))
            if room is not None and len(out) >= room:
                return out[:room] + [self.sep]
        out.append(self.sep)
        return out
