"""The shared model wrappers: a model loaded at first use, and calls counted in one Usage."""

from __future__ import annotations

import pytest

from longqa.models.counting import CountingEmbedder, CountingGenerator, Usage
from longqa.models.lazy import LazyModel, model_of
from tests.fakes import FakeEmbedder, FakeGenerator


def test_a_lazy_model_loads_once_at_first_use_and_checks_before_handing_out():
    loads, checked = [], []
    lazy = LazyModel(lambda: loads.append(1) or FakeEmbedder(), on_load=lambda e: checked.append(e.name))
    assert not lazy.is_loaded and lazy.load_seconds is None and loads == []
    assert lazy.embed(["a b"]).shape == (1, 256) and lazy.name == "fake-bow-256"
    assert loads == [1] and checked == ["fake-bow-256"] and lazy.load_seconds >= 0


def test_a_failed_check_hands_nothing_out():
    def refuse(model):
        raise ValueError("another embedder built this store")

    lazy = LazyModel(FakeEmbedder, on_load=refuse)
    with pytest.raises(ValueError, match="another embedder"):
        lazy.embed(["x"])
    assert not lazy.is_loaded


def test_model_of_takes_a_model_or_a_factory():
    generator = FakeGenerator()
    assert model_of(generator) is generator and model_of(lambda: generator) is generator


def test_counting_generator_counts_text_and_scored_tokens_apart():
    usage = Usage()
    counted = CountingGenerator(FakeGenerator(), usage)
    text = counted.complete("Question: why?\nPassages:\n[1] Doc\nThe pump failed. Then it ran.")
    counted.label_probs("Yes or no?", [" yes", " no"])
    assert counted.calls == usage.generator_calls == 2
    assert usage.generated_tokens == counted.generated_tokens == FakeGenerator().count_tokens(text) > 0
    assert usage.scored_tokens == 1


def test_a_call_that_raised_is_counted():
    def fail(prompt, labels):
        raise RuntimeError("the prompt does not fit")

    usage = Usage()
    with pytest.raises(RuntimeError):
        CountingGenerator(FakeGenerator(choose=fail), usage).label_probs("x", [" yes", " no"])
    assert (usage.generator_calls, usage.generated_tokens) == (1, 0)
    embedder = CountingEmbedder(FakeEmbedder(), usage)
    embedder.embed(["a", "b"])
    assert (usage.embed_calls, usage.embedded_texts) == (1, 2)
    assert usage.since(Usage(generator_calls=1)).generator_calls == 0
