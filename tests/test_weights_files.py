"""A linear model's weights file is checked when it is read: every weight a number (a string, NaN or
1e308 is a one-line error naming the file, never a TypeError at scoring), and the file itself a
regular file of bounded size (a pipe or a device is refused at once, never waited on)."""

from __future__ import annotations

import json
import math
import os
import threading
import time
from pathlib import Path

import pytest

from longqa.errors import LongqaError
from longqa.linear import confidence_inputs, read_stage
from longqa.probabilities import softmax

FEATURES = {"coverage", "cosine"}


def weights(**changes) -> dict:
    table = {"weights": {"coverage": 1.5, "cosine": 0.5}, "means": {"coverage": 0.2, "cosine": 0.3},
             "scales": {"coverage": 1.0, "cosine": 0.5}, "bias": -0.1}
    for part, value in changes.items():
        table[part] = value
    return table


def test_a_weights_file_of_numbers_is_read(tmp_path):
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(weights()), encoding="utf-8")
    stage, _ = read_stage(path, FEATURES, "a test ranker weights file")
    assert stage.score({"coverage": 1.2, "cosine": 0.3}) == pytest.approx(-0.1 + 1.5)


@pytest.mark.parametrize("changes, named", [
    ({"weights": {"coverage": "high", "cosine": 0.5}}, "weights.coverage is 'high'"),
    ({"means": {"coverage": None, "cosine": 0.3}}, "means.coverage is None"),
    ({"scales": {"coverage": True, "cosine": 0.5}}, "scales.coverage is True"),
    ({"bias": "0"}, "bias is '0'"),
    ({"weights": [1, 2]}, "weights is not a table of numbers"),
])
def test_a_weight_that_is_not_a_number_is_a_one_line_error_naming_the_file(tmp_path, changes, named):
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(weights(**changes)), encoding="utf-8")
    with pytest.raises(LongqaError) as caught:
        read_stage(path, FEATURES, "a test ranker weights file")
    message = str(caught.value)
    assert message.startswith(f"{path}: not a test ranker weights file") and named in message
    assert "\n" not in message


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e308"])
def test_a_weight_that_no_score_can_carry_is_refused(tmp_path, number):
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(weights()).replace("1.5", number), encoding="utf-8")
    with pytest.raises(LongqaError, match=r"weights\.coverage is .*, not a number of at most 1e\+09"):
        read_stage(path, FEATURES, "a test ranker weights file")


def test_the_answer_rankers_weights_file_is_checked_on_load(tmp_path):
    from longqa.ask.answer import ranker

    table = json.loads(ranker.WEIGHTS_FILE.read_text(encoding="utf-8"))
    name = next(iter(table["final"]["weights"]))
    table["final"]["weights"][name] = "heavy"
    path = tmp_path / "answer-ranker.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(LongqaError, match=rf"^{path}: not an answer ranker weights file \(ValueError: "
                                          rf"weights\.{name} is 'heavy'"):
        ranker.load(path)


def _rescue(fifo: Path) -> threading.Thread:
    """Opens the pipe for writing after 5 s, so that a reader waiting on it is let go (and a
    check that fails does not hang the run)."""
    def release():
        time.sleep(5)
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader waiting: nothing to let go
            return
        os.close(fd)

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_weights_file_that_is_no_regular_file_is_refused_at_once(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "weights.json"
        os.mkfifo(path)
        _rescue(path)
    else:
        path = Path("/dev/null")
    started = time.monotonic()
    with pytest.raises(LongqaError) as caught:
        read_stage(path, FEATURES, "a test ranker weights file")
    assert time.monotonic() - started < 1
    assert str(caught.value) == f"{path}: not a regular file ({'a named pipe' if kind == 'fifo' else 'a device'}); " \
                                "not a test ranker weights file"


def test_one_softmax_for_scores_and_log_probabilities():
    assert softmax([0.0, 0.0]) == [0.5, 0.5]
    assert softmax([math.log(0.2), math.log(0.6)]) == pytest.approx([0.25, 0.75])
    assert softmax([-math.inf, 1.0]) == [0.0, 1.0]  # an unreachable label gets nothing
    assert softmax([-math.inf, -math.inf]) == [0.5, 0.5] and softmax([]) == []
    # a near-certain share keeps its odds: the others' shares are summed, not 1 - p
    assert confidence_inputs([50.0, 0.0], "share")[0] == pytest.approx(50.0)
