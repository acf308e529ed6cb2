"""The default embedder's word pieces (models/wordpiece.py) against llama.cpp's WordPiece tokenizer,
which made the vectors of earlier stores: the same ids for every character and on real text."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from longqa.models.convert import write_vocabulary
from longqa.models.defaults import VOCABULARY_DIR, VOCABULARY_PATH
from longqa.models.llama_lib import llama_cpp
from longqa.models.wordpiece import UNICODE_15_ALONE, UNICODE_15_DROPPED, WordPiece

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def llama_vocab(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.gguf"
    write_vocabulary(VOCABULARY_DIR, path)
    model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    yield lambda text: model.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    model.close()


@pytest.fixture(scope="module")
def pieces():
    return WordPiece.from_file(VOCABULARY_PATH)


def differences(texts, llama_vocab, pieces) -> list[tuple[str, list[int], list[int]]]:
    return [(text, llama_vocab(text), pieces.encode(text)) for text in texts
            if llama_vocab(text) != pieces.encode(text)]


def test_ordinary_text_becomes_cls_pieces_sep(pieces):
    ids = pieces.encode("The pump's relief valve opens at 8.5 bar.")
    vocab = VOCABULARY_PATH.read_text(encoding="utf-8").splitlines()
    assert [vocab[i] for i in ids] == ["[CLS]", "the", "pump", "'", "s", "relief", "valve", "opens", "at",
                                       "8", ".", "5", "bar", ".", "[SEP]"]
    assert [vocab[i] for i in pieces.encode("Café unrepairable")][1:-1] == ["cafe", "un", "##re", "##pa", "##ira", "##ble"]


def test_every_character_of_the_basic_plane_as_llama_cpp_reads_it(llama_vocab, pieces):
    # Alone, inside a word, and doubled after a word: whether it splits, joins, is dropped or
    # unknown, and how it is lower-cased and stripped of accents.
    characters = [chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF]
    texts = [form for ch in characters for form in (ch, f"a{ch}b", f"x {ch}{ch}ing")]
    assert differences(texts, llama_vocab, pieces) == []


def test_unicode_15_characters_as_llama_cpp_reads_them(llama_vocab, pieces):
    # Assigned after the Unicode version of older Pythons: listed in wordpiece.py.
    codes = [c for low, high in (*UNICODE_15_DROPPED, *UNICODE_15_ALONE) for c in range(low, high + 1)]
    texts = [form for c in codes for form in (chr(c), f"a{chr(c)}b")]
    assert differences(texts, llama_vocab, pieces) == []


def test_mixed_text_long_words_and_markers_as_llama_cpp_reads_them(llama_vocab, pieces):
    rng = random.Random(7)
    alphabet = [chr(c) for c in [*range(0x20, 0x250), 0x2581, 0x301, 0x0, 0xFFFD, 0x200B, 0x4E00,
                                 0x3000, 0xA0, 0x85, 0x1F600, 0x130, 0x2126]]
    parts = ["tion", "ing", "un", "##", "[UNK]", "[CLS]", "a" * 120, "antidisestablishmentarianism"]
    texts = ["".join(rng.choice(alphabet) if rng.random() < 0.7 else rng.choice(parts)
                     for _ in range(rng.randint(1, 30))) for _ in range(3000)]
    assert differences(texts, llama_vocab, pieces) == []


def test_the_sample_handbook_as_llama_cpp_reads_it(llama_vocab, pieces):
    with pymupdf.open(REPO / "examples" / "kestrel_valley_handbook.pdf") as pdf:
        texts = [block[4] for page in pdf for block in page.get_text("blocks")]
    assert len(texts) > 20 and differences(texts, llama_vocab, pieces) == []


def test_real_documents_as_llama_cpp_reads_them(evaldata, llama_vocab, pieces):
    texts = []
    for folder in sorted((evaldata / "docs").iterdir()):
        for path in sorted(folder.glob("*.txt"))[:3]:
            texts += [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
        for path in sorted(folder.glob("*.pdf"))[:2]:
            with pymupdf.open(path) as pdf:
                texts += [block[4] for page in pdf for block in page.get_text("blocks")]
    assert len(texts) > 1000 and differences(texts, llama_vocab, pieces) == []


def test_a_cut_keeps_the_closing_separator(llama_vocab, pieces):
    text = "Section 4.2: the contractor shall maintain insurance for the duration of the works. " * 5
    whole = llama_vocab(text)
    assert pieces.encode(text, 16) == whole[:15] + whole[-1:]
    assert pieces.encode("short", 16) == llama_vocab("short")


def test_the_default_embedder_does_not_load_llama_cpp(tmp_path):
    # The point of the module: `ask --context-only` embeds the question without llama.cpp.
    script = ("import sys\nfrom longqa.models.resolve import load_embedder\n"
              "vector = load_embedder().embed(['When is the annual inspection due?'])\n"
              "assert vector.shape == (1, 384)\nprint('llama_cpp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "False", out.stderr
