"""A kept prompt head's file (models/llama.py `_KeptPrefix`, models/kept_file.py) is trusted no
further than the vectors file: a pipe, a file far larger than a head's state, or a link at its path
is no kept state. The head is then read again, its state written over the path, and the model goes
on answering; nothing waits, nothing large is read, no link is followed. With the real default
generator (gemma-3-270m)."""

from __future__ import annotations

import os
import threading
import time
import tracemalloc

import pytest

from longqa.models.resolve import load_generator

pytestmark = pytest.mark.models

HEAD = "Answers about the pump house, one word each, copied from the sentence.\n\n" * 3
PROMPT = HEAD + "Sentence: The pumps are greased weekly.\nQuestion: How often are the pumps greased?\nAnswer:"
OPTIONS = [" weekly", " daily", " never"]


@pytest.fixture(scope="module")
def generator():
    return load_generator()


@pytest.fixture
def head_file(generator, tmp_path, monkeypatch):
    """Where the head's state is kept (in an empty models folder of this test's own), once a first
    run has written it there; and the scores that run read."""
    from longqa.models.llama import KEPT_HEADS_DIR

    monkeypatch.setenv("LONGQA_MODELS_DIR", str(tmp_path / "models"))
    generator._kept.clear()
    generator.clear_cache()
    generator.keep_prefix(HEAD)
    scores = generator.option_logprobs(PROMPT, OPTIONS)
    [path] = (tmp_path / "models" / KEPT_HEADS_DIR).glob("*.kv")
    yield path, scores
    generator._kept.clear()


def _fresh_process_scores(generator) -> tuple[list[float], int, int]:
    """What a fresh process does: keep the head (reading its file, if usable), then score. Returns
    the scores, whether the state came from the file (0 or 1) and the peak Python memory (bytes)
    while keeping it."""
    generator._kept.clear()
    generator.clear_cache()
    tracemalloc.start()
    try:
        generator.keep_prefix(HEAD)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    loaded = generator.prefixes_loaded
    scores = generator.option_logprobs(PROMPT, OPTIONS)
    return scores, generator.prefixes_loaded - loaded, peak


def test_a_usable_kept_file_is_loaded(generator, head_file):
    path, read = head_file
    scores, from_file, peak = _fresh_process_scores(generator)
    assert from_file == 1 and scores == pytest.approx(read, abs=1e-6)
    assert peak < 4 * path.stat().st_size + (1 << 20)  # the state once, not read and then copied


def test_a_pipe_at_the_kept_path_is_not_waited_on(generator, head_file):
    path, read = head_file
    path.unlink()
    os.mkfifo(path)

    def release():  # lets a reader that waits on the pipe go after 5 s, so a failing run ends
        time.sleep(5)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    threading.Thread(target=release, daemon=True).start()
    started = time.monotonic()
    generator._kept.clear()
    generator.keep_prefix(HEAD)
    assert time.monotonic() - started < 2
    scores, from_file, _ = _fresh_process_scores(generator)
    assert from_file == 0 and scores == pytest.approx(read, abs=1e-6)
    assert path.is_file() and not path.is_symlink()  # the state written over the pipe


def test_a_huge_file_at_the_kept_path_is_not_read(generator, head_file):
    path, read = head_file
    with open(path, "r+b") as handle:
        handle.truncate(300 << 20)  # sparse: 300 MiB that take no disk
    scores, from_file, peak = _fresh_process_scores(generator)
    assert from_file == 0 and scores == pytest.approx(read, abs=1e-6)
    assert peak < 16 << 20
    assert path.stat().st_size < 16 << 20  # the state written over it


def test_a_link_at_the_kept_path_is_not_followed(generator, head_file, tmp_path):
    path, read = head_file
    elsewhere = tmp_path / "elsewhere.kv"
    path.rename(elsewhere)  # a real state, but reached through a link
    path.symlink_to(elsewhere)
    scores, from_file, _ = _fresh_process_scores(generator)
    assert from_file == 0 and scores == pytest.approx(read, abs=1e-6)
    assert not path.is_symlink() and elsewhere.read_bytes() == path.read_bytes()  # replaced, not written through
