"""The shared model wrappers: a model loaded at first use, and calls counted in one Usage."""

from __future__ import annotations

import threading

import pytest

from longqa.models.base import CAPABILITIES, KEEPS_PREFIX, READS_ATTENTION, SCORES_OPTIONS, supports
from longqa.models.counting import CountingEmbedder, CountingGenerator, Usage
from longqa.models.lazy import LazyModel, model_of
from tests.fakes import FakeEmbedder, FakeGenerator, KeepingGenerator


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


def _generator_classes():
    from longqa.models.llama import LlamaGenerator
    from longqa.models.openai import OpenAIGenerator
    from tests import fakes

    return [LlamaGenerator, OpenAIGenerator, fakes.FakeGenerator, fakes.KeepingGenerator, fakes.OutlineGenerator]


# The member each capability promises.
PROMISED = {KEEPS_PREFIX: "keep_prefix", SCORES_OPTIONS: "option_logprobs", READS_ATTENTION: "llama"}


def test_every_generator_states_exactly_the_capabilities_it_offers():
    assert set(PROMISED) == CAPABILITIES
    for cls in _generator_classes():
        offered = {name for name, member in PROMISED.items() if hasattr(cls, member)}
        assert cls.capabilities == offered, cls.__name__
    from longqa.models.llama import LlamaGenerator
    assert LlamaGenerator.capabilities == CAPABILITIES  # the local backend offers all of them


def test_supports_reads_the_stated_capabilities_and_refuses_an_unknown_name():
    assert supports(KeepingGenerator(), KEEPS_PREFIX) and not supports(FakeGenerator(), KEEPS_PREFIX)
    assert not supports(None, SCORES_OPTIONS)
    with pytest.raises(ValueError, match="unknown generator capability 'streams'"):
        supports(FakeGenerator(), "streams")


def test_the_wrappers_pass_the_capabilities_through():
    keeping = KeepingGenerator()
    counted = CountingGenerator(LazyModel(lambda: keeping))
    assert supports(counted, KEEPS_PREFIX) and not supports(counted, SCORES_OPTIONS)
    counted.keep_prefix("Manual:")
    assert keeping.kept == ["Manual:"]
    with pytest.raises(AttributeError):
        counted.option_logprobs  # noqa: B018  (offered only over a backend that scores options)


def test_the_pipeline_keeps_the_prompt_heads_only_where_the_generator_states_it(tmp_path, db_path):
    from longqa.ask import prompts
    from longqa.ask.search import router
    from tests.ask_support import build_store, make_pipeline, reactor_handbook

    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    question = "How fast do the emergency diesel generators start?"
    keeping = KeepingGenerator()
    make_pipeline(db, keeping, router="on").answer(question)
    assert set(keeping.kept) == {*prompts.KEPT_HEADS, router.ROUTER_HEAD}  # the fixed heads, the router's example


def test_known_attributes_and_kept_heads_load_nothing_until_a_real_call():
    keeping, calls = KeepingGenerator(), []
    lazy = LazyModel(lambda: calls.append("load") or keeping,
                     known={"name": "manual-reader", "capabilities": frozenset({KEEPS_PREFIX})})
    assert lazy.name == "manual-reader" and supports(lazy, KEEPS_PREFIX)
    lazy.keep_prefix("Manual:")
    assert calls == [] and not lazy.is_loaded and keeping.kept == []
    lazy.label_probs("Is the pump running?", [" yes", " no"])  # the first real call loads
    assert calls == ["load"] and keeping.kept == ["Manual:"]  # the head was kept before that call
    assert lazy.name == keeping.name  # once loaded, the model answers for itself


def test_a_model_started_on_a_thread_is_waited_for_at_first_use():
    gate, loads = threading.Event(), []

    def load():
        gate.wait(5)
        loads.append(1)
        return FakeEmbedder()

    lazy = LazyModel(load)
    lazy.start()
    lazy.start()  # once only
    assert not lazy.is_loaded
    threading.Timer(0.05, gate.set).start()
    assert lazy.embed(["a b"]).shape == (1, 256)
    assert loads == [1] and lazy.wait_seconds > 0 and lazy.load_seconds is not None


def test_a_failed_load_on_a_thread_is_raised_at_first_use_then_tried_again():
    attempts = []

    def load():
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError("model file not found")
        return FakeEmbedder()

    lazy = LazyModel(load)
    lazy.start()
    lazy.settle()
    with pytest.raises(ValueError, match="model file not found"):
        lazy.embed(["x"])
    assert lazy.embed(["x"]).shape == (1, 256) and attempts == [1, 1]
