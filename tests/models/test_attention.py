"""Attention read out of llama.cpp with the real default generator (gemma-3-270m)."""

from __future__ import annotations

import numpy as np
import pytest

from longqa.errors import LongqaError
from longqa.graph.edges import AttentionEdges
from longqa.models import attention
from longqa.models.resolve import load_generator

pytestmark = pytest.mark.models

SOURCES = [
    "The harbour of Veltrano was closed in 1842 after a storm destroyed the pier.",
    "Maria Okonkwo planted forty lemon trees on the northern hill behind the chapel.",
    "The railway company sold its last steam engine to a museum in Leeds.",
]


@pytest.fixture(scope="module")
def generator():
    return load_generator()


@pytest.fixture(scope="module")
def edges(generator):
    made = AttentionEdges(generator)
    yield made
    made.close()


def test_captured_attention_rows_sum_to_one_per_head(edges):
    reader = edges.reader
    tokens = reader.tokenize("Sources: " + " ".join(SOURCES), bos=True)
    capture = reader.capture(tokens, first=5)
    assert len(capture.layers) == 18  # gemma-3-270m has 18 layers, every one captured
    for layer, rows in capture.layers.items():
        assert rows.shape == (4, len(tokens) - 5, len(tokens))  # heads, kept rows, keys
        np.testing.assert_allclose(rows.sum(axis=-1), 1.0, atol=1e-4)
        # causal: a row never attends to a later token
        for r in range(rows.shape[1]):
            assert np.all(rows[:, r, 5 + r + 1:] == 0)


def test_sliding_window_layers_are_left_out(edges):
    tokens = edges.reader.tokenize(SOURCES[0], bos=True)
    capture = edges.reader.capture(tokens, first=1)
    assert attention.global_layers(capture) == [5, 11, 17]  # gemma-3: one global layer in six


@pytest.mark.parametrize("copied", [0, 1, 2])
def test_a_point_copied_from_one_source_puts_most_weight_on_it(edges, copied):
    weights = edges.weights(SOURCES, [SOURCES[copied]], keep=8)[0]
    assert weights.sum() == pytest.approx(1.0)
    assert int(np.argmax(weights)) == copied and weights[copied] > 0.5


def test_a_pass_longer_than_the_context_is_refused(edges):
    with pytest.raises(LongqaError, match="exceeds"):
        edges.reader.capture([1] * (edges.reader.n_ctx + 1), first=0)


def test_unchecked_llama_cpp_version_is_one_clear_error(monkeypatch, generator):
    monkeypatch.setattr(attention.llama_cpp, "__version__", "9.9.9")
    with pytest.raises(LongqaError, match="9.9.9.*checked only on"):
        attention.AttentionReader(generator)


def test_a_server_generator_cannot_give_attention():
    from tests.ask_support import FakeGenerator

    with pytest.raises(LongqaError, match="server does not expose"):
        attention.AttentionReader(FakeGenerator())
