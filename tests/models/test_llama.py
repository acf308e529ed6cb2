"""The llama.cpp backend with the real embedded default models (gemma-3-270m, all-MiniLM-L6-v2)."""

from __future__ import annotations

import math
import re
import shutil

import numpy as np
import pytest

from longqa.errors import ModelError
from longqa.models import grammar
from longqa.models.base import Embedder, Generator
from longqa.models.convert import write_vocabulary
from longqa.models.defaults import VOCABULARY_DIR, default_embedder_path, default_generator_path
from tests.conftest import needs_minilm_package
from longqa.models.resolve import load_embedder, load_generator
from longqa.models.prompt_fit import PromptTooLong

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def generator():
    return load_generator()


@pytest.fixture(scope="module")
def embedder():
    return load_embedder()


def test_defaults_implement_the_protocols(generator, embedder):
    assert isinstance(generator, Generator) and isinstance(embedder, Embedder)
    assert generator.n_ctx == 8192 and generator.name == "gemma-3-270m-q4_k_m"
    assert embedder.dim == 384


def test_complete_continues_the_prompt(generator):
    # A continuation the model is sure of: after "the city of" gemma-3-270m weighs " Paris" 0.54
    # against " lights" 0.45 on the CPU, and on an H100 the greedy pick was " lights".
    assert "six" in generator.complete("One, two, three, four, five,", max_tokens=3)


def test_stream_yields_the_same_text_in_pieces(generator):
    prompt = "One, two, three, four,"
    pieces = list(generator.stream(prompt, max_tokens=6))
    assert len(pieces) > 1 and "".join(pieces) == generator.complete(prompt, max_tokens=6)


def test_stop_string_ends_the_completion(generator):
    text = generator.complete("Monday, Tuesday, Wednesday,", max_tokens=12, stop=[","])
    assert "," not in text and text.strip()


def test_grammar_constrains_the_output(generator):
    colours = [" red", " green", " blue"]
    assert generator.complete("The sky on a clear day is", max_tokens=4, grammar=grammar.choice(colours)) in colours
    year = generator.complete("The first moon landing happened in the year", max_tokens=6, grammar=grammar.integer(4))
    assert re.fullmatch(r"[0-9]{1,4}", year)


def test_invalid_grammar_is_an_error_not_a_crash(generator):
    with pytest.raises(ValueError, match="invalid GBNF"):
        generator.complete("x", max_tokens=2, grammar="root ::= (")
    assert generator.complete("One, two,", max_tokens=2)  # the model still works


def test_label_probs_sum_to_one_and_favour_the_right_label(generator):
    probs = generator.label_probs("Paris is the capital of", [" France", " Germany", " Spain"])
    assert math.isclose(sum(probs.values()), 1.0, rel_tol=1e-9)
    assert max(probs, key=probs.get) == " France"


def test_labels_sharing_a_first_token_are_scored_whole(generator):
    prompt = "The colour of the sky on a clear day is"
    greedy = generator.complete(prompt, max_tokens=2)
    assert greedy == " blue."  # what the model itself would write
    probs = generator.label_probs(prompt, [" blue sky", " blue.", " green."])
    assert math.isclose(sum(probs.values()), 1.0, rel_tol=1e-9)
    assert max(probs, key=probs.get) == " blue."


def test_label_probs_do_not_depend_on_what_is_in_the_kv_cache(generator):
    prompt, labels = "Question: Is water wet?\nAnswer (yes or no):", [" yes", " no"]
    generator.complete("Something unrelated to evaluate first.", max_tokens=2)
    after_other = generator.label_probs(prompt, labels)
    generator.complete(prompt + " yes, it is", max_tokens=2)  # shares the prompt as prefix
    after_prefix = generator.label_probs(prompt, labels)
    generator.clear_cache()
    fresh = generator.label_probs(prompt, labels)
    # Reused prefixes are evaluated in different batch splits, and llama.cpp's quantized
    # kernels round differently per split (measured: up to ~0.03 in probability here). A stale
    # or misplaced cache would be far off, and would not keep the answer.
    for label in labels:
        assert after_other[label] == pytest.approx(fresh[label], abs=0.05)
        assert after_prefix[label] == pytest.approx(fresh[label], abs=0.05)
    assert max(after_prefix, key=after_prefix.get) == max(fresh, key=fresh.get) == " yes"


def test_option_logprobs_score_whole_options_in_one_batch(generator):
    prompt = ("Sentences:\nThe fuel store holds enough diesel to run both generators for about 52 hours.\n"
              "Question: How long can both generators run?\nAnswer:")
    options = [" about 52 hours", " about 4 days", " The documents do not say.", " 52"]
    batched = generator.option_logprobs(prompt, options)
    # The same scores one option at a time, rolling the KV cache back after each.
    tokens = generator._prompt_tokens(prompt)
    first = generator._prefill(tokens)
    single = []
    for option in options:
        continuation = generator._continuation(prompt, tokens, option)
        single.append(generator._sequence_logprob(tokens, continuation, first) / len(continuation))
    assert batched == pytest.approx(single, abs=0.15)  # batch numerics differ slightly
    assert max(range(len(options)), key=batched.__getitem__) in (0, 3)  # the stated figure wins
    assert generator.complete("The capital of France is", max_tokens=4)  # the context still generates


def _scored_then_head_kept(generator, head: str, prompt: str, options: list[str]) -> list[float]:
    """The options' scores read from an empty cache; then `head` is kept and the cache filled with
    something else, so that the next call on `prompt` reads (or loads) the head."""
    generator.clear_cache()
    fresh = generator.option_logprobs(prompt, options)
    generator.keep_prefix(head)
    generator.complete("Something unrelated fills the cache.", max_tokens=2)
    return fresh


def test_a_kept_prompt_head_is_loaded_instead_of_read_again(generator):
    head = "Questions about the works, each answered with one word from its sentence.\n\n" * 4
    prompt = head + "Sentence: The pumps are tested monthly.\nQuestion: How often are the pumps tested?\nAnswer:"
    options = [" monthly", " yearly", " never"]
    fresh = _scored_then_head_kept(generator, head, prompt, options)
    generator.option_logprobs(prompt, options)  # reads the head once and keeps its state
    loaded = generator.prefixes_loaded
    generator.complete("Something else unrelated.", max_tokens=2)
    again = generator.option_logprobs(prompt, options)
    assert generator.prefixes_loaded == loaded + 1
    # The same choice as read from an empty cache. Compared as a distribution over the options: a
    # restored state and a fresh batch differ in float rounding, by up to ~0.2 nats on an option
    # the model gives ~0.1 % (seen on one CPU build), which moves its probability by nothing.
    assert _softmax(again) == pytest.approx(_softmax(fresh), abs=0.02)
    assert max(range(3), key=again.__getitem__) == max(range(3), key=fresh.__getitem__)
    generator.complete("Unrelated again.", max_tokens=2)
    assert generator.complete(prompt, max_tokens=3)  # generation after a loaded head works too
    assert generator.prefixes_loaded == loaded + 2


def test_many_options_are_scored_in_decodes_of_bounded_output(generator):
    # More option tokens than one decode's output budget (OUTPUT_MIB of vocabulary-wide rows):
    # they go through several decodes and score as one at a time does.
    from longqa.models.llama import OUTPUT_MIB

    prompt = "Sentences:\nThe pump room is in the basement of block C.\nQuestion: Where is the pump room?\nAnswer:"
    options = [f" in the basement of block {letter}" for letter in "ABCDEFGHIJKL"]
    rows = OUTPUT_MIB * 2**20 // (4 * generator._n_vocab)
    tokens = generator._prompt_tokens(prompt)
    lengths = [len(generator._continuation(prompt, tokens, option)) for option in options]
    assert sum(n - 1 for n in lengths) > rows  # more than one decode's worth
    batched = generator.option_logprobs(prompt, options)
    first = generator._prefill(tokens)
    single = [generator._sequence_logprob(tokens, generator._continuation(prompt, tokens, option), first) / n
              for option, n in zip(options, lengths)]
    assert batched == pytest.approx(single, abs=0.15)
    assert max(range(len(options)), key=batched.__getitem__) == 2  # block C, as the sentence says


def test_a_kept_head_is_kept_on_disk_for_the_next_process(generator, tmp_path, monkeypatch):
    from longqa.models.llama import KEPT_HEADS_DIR

    monkeypatch.setenv("LONGQA_MODELS_DIR", str(tmp_path))
    head = "Answers about the maintenance schedule, one word each, copied from the sentence.\n\n" * 3
    prompt = head + "Sentence: The filters are changed weekly.\nQuestion: How often are the filters changed?\nAnswer:"
    options = [" weekly", " daily", " never"]
    fresh = _scored_then_head_kept(generator, head, prompt, options)
    read = generator.option_logprobs(prompt, options)  # reads the head and writes its state
    files = list((tmp_path / KEPT_HEADS_DIR).glob("*.kv"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    # A fresh process: nothing kept in memory, the file on disk. Its state is loaded, not read.
    generator._kept.clear()
    generator.clear_cache()
    generator.keep_prefix(head)
    loaded = generator.prefixes_loaded
    from_disk = generator.option_logprobs(prompt, options)
    assert generator.prefixes_loaded == loaded + 1
    assert from_disk == pytest.approx(read, abs=1e-6)  # the same cells as reading the head here
    assert max(range(3), key=from_disk.__getitem__) == max(range(3), key=fresh.__getitem__) == 0
    # A file that is not a state (cut short, another build's) is read again and replaced.
    files[0].write_bytes(b"not a state")
    generator._kept.clear()
    generator.clear_cache()
    generator.keep_prefix(head)
    again = generator.option_logprobs(prompt, options)
    assert again == pytest.approx(read, abs=1e-6)
    assert files[0].stat().st_size > len(b"not a state")
    generator._kept.clear()


def test_saving_a_kept_head_removes_those_of_another_build(generator, tmp_path, monkeypatch):
    from longqa.models.llama import KEPT_HEADS_DIR

    monkeypatch.setenv("LONGQA_MODELS_DIR", str(tmp_path))
    folder = tmp_path / KEPT_HEADS_DIR
    folder.mkdir()
    stem = generator.info.path.stem
    stale = folder / f"{stem}-00000000-0123456789abcdef.kv"  # the same model name, another build
    earlier = folder / f"{stem}-0123456789abcdef0123.kv"  # named the earlier way
    other = folder / "another-model-00000000-0123456789abcdef.kv"
    for path in (stale, earlier, other):
        path.write_bytes(b"state")
    head = "Answers about the service contract, copied from the sentence.\n\n" * 3
    generator.keep_prefix(head)
    generator.option_logprobs(head + "Sentence: Notice is 30 days.\nQuestion: What notice?\nAnswer:", [" 30 days"])
    kept = [p for p in folder.glob("*.kv") if p not in (stale, earlier, other)]
    assert len(kept) == 1 and kept[0].name.startswith(stem + "-")
    assert not stale.exists() and not earlier.exists() and other.exists()
    generator._kept.clear()


def test_prompt_too_long_is_refused_never_truncated(generator):
    prompt = "word " * 8200
    assert generator.count_tokens(prompt) > generator.n_ctx
    with pytest.raises(PromptTooLong, match="8192-token context window"):
        generator.complete(prompt, max_tokens=4)
    fits = "word " * 8000
    with pytest.raises(PromptTooLong):  # fits alone, not with the tokens to generate
        generator.complete(fits, max_tokens=500)


def test_related_passage_ranks_above_unrelated_ones(embedder):
    query = "How much did revenue grow last year?"
    passages = [
        "The cat slept on the warm windowsill all afternoon.",
        "Net sales increased 12% in fiscal 2023 compared with the prior year.",
        "The recipe calls for two cups of flour and a pinch of salt.",
        "The hiking trail climbs steeply through pine forest.",
    ]
    vectors = embedder.embed([query] + passages)
    assert vectors.dtype == np.float32 and vectors.shape == (5, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    scores = vectors[1:] @ vectors[0]
    assert int(np.argmax(scores)) == 1


def test_batching_does_not_change_vectors_and_long_text_is_cut(embedder):
    texts = ["short one", "a rather longer sentence about quarterly earnings and revenue", "x " * 3000]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.all((together * alone).sum(axis=1) > 0.9999)  # same vectors up to float rounding
    assert embedder.embed([]).shape == (0, 384)


def test_generator_file_as_embedder_is_refused(tmp_path):
    with pytest.raises(ModelError, match="gemma3 is a text generator, not a sentence-embedding model"):
        load_embedder(str(default_generator_path()))


def test_embedder_file_as_generator_is_refused(tmp_path):
    write_vocabulary(VOCABULARY_DIR, tmp_path / "minilm-vocab.gguf")  # a BERT header, no tensors
    with pytest.raises(ModelError, match="bert is a sentence-embedding model, not a text generator"):
        load_generator(str(tmp_path / "minilm-vocab.gguf"))


def test_truncated_model_file_is_a_model_error(tmp_path):
    needs_minilm_package()
    source = default_embedder_path()  # header whole, tensors cut: llama.cpp's own refusal
    cut = tmp_path / "cut.gguf"
    with source.open("rb") as handle:
        cut.write_bytes(handle.read(source.stat().st_size // 2))
    with pytest.raises(ModelError, match="cut.gguf: llama.cpp cannot load this model"):
        load_embedder(str(cut))


def test_copy_of_the_converted_gguf_has_its_identity(tmp_path):
    from longqa.models.defaults import GGUF_EMBEDDER_NAME

    needs_minilm_package()
    copy = tmp_path / "my-minilm.gguf"
    shutil.copyfile(default_embedder_path(), copy)
    assert load_embedder(str(copy)).name == GGUF_EMBEDDER_NAME


def _softmax(logprobs: list[float]) -> list[float]:
    peak = max(logprobs)
    weights = [math.exp(lp - peak) for lp in logprobs]
    return [w / sum(weights) for w in weights]


def test_a_short_prompt_allocates_the_small_cache_and_a_longer_one_reopens_it(monkeypatch):
    from longqa.models import llama

    # Both models on the same number of threads: a model opened on another count (the cores free
    # at the moment) sums in another order and its probabilities differ in the fifth decimal.
    monkeypatch.setenv("LONGQA_THREADS", "1")
    path = default_generator_path()
    growing = llama.LlamaGenerator(path, name="growing")
    assert (growing.n_ctx, growing.allocated) == (8192, llama.FIRST_ALLOCATION) == (8192, 2048)
    assert "six" in growing.complete("One, two, three, four, five,", max_tokens=3)
    assert growing.reopened == 0 and growing.llama.n_ctx() == 2048  # a short call needs no more

    prompt = "Counting: " + ", ".join(str(i) for i in range(1, 440)) + ","
    assert 2048 < growing.count_tokens(prompt) + 4 < 4096
    labels = [" 440", " 441", " 439"]
    text, probs = growing.complete(prompt, max_tokens=4), growing.label_probs(prompt, labels)
    assert growing.reopened == 1 and growing.allocated == 4096 and growing.llama.n_ctx() == 4096

    # The same outputs as a cache allocated for the whole window from the start.
    monkeypatch.setattr(llama, "FIRST_ALLOCATION", 8192)
    whole = llama.LlamaGenerator(path, name="whole")
    assert whole.llama.n_ctx() == 8192
    assert (text, probs) == (whole.complete(prompt, max_tokens=4), whole.label_probs(prompt, labels))
    assert text.startswith(" 440") and max(probs, key=probs.get) == " 440"


def test_prompt_tokens_read_are_counted_once_and_cached_ones_not(generator):
    prompt = "The pump room is ventilated by two fans that run whenever the pumps are on. The fans"
    count = len(generator._prompt_tokens(prompt))
    generator.label_probs("An unrelated prompt that empties the cache of this one.", [" yes", " no"])
    before, seconds = generator.read_tokens, generator.read_seconds
    generator.label_probs(prompt, [" run", " stop"])
    read = count - 1  # the BOS token the two prompts share stays in the cache
    assert generator.read_tokens - before == read and generator.read_seconds > seconds
    generator.label_probs(prompt, [" run", " stop"])  # all in the KV cache: one token for fresh logits
    assert generator.read_tokens - before == read + 1
    list(generator.stream(prompt + " keep", max_tokens=2))  # only the new tokens are read
    assert read + 2 <= generator.read_tokens - before <= read + 4
