"""bench/passage_states.py: the reader's fact prompt split into its head, its passages and the rest."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "passage_states.py"


def _module():
    spec = importlib.util.spec_from_file_location("passage_states", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROMPT = ("<|im_start|>system\nYou answer questions.<|im_end|>\n<|im_start|>user\nPassages:\n"
          "[2] Pump manual > 4. Maintenance (p. 4)\nChange the oil every 500 hours.\n"
          "Check the seals [1] at each change.\n"
          "[5] Pump manual > 6. Faults (p. 7)\nA red light means low pressure.\n"
          "\nQuestion: How often is the oil changed?<|im_end|>\n<|im_start|>assistant\n")


def test_a_fact_prompt_splits_at_its_numbered_passages_and_joins_back_whole():
    head, blocks, tail = _module().split_prompt(PROMPT)
    assert head.endswith("Passages:\n") and tail.startswith("\n\nQuestion: How often")
    assert [b.split("\n")[0] for b in blocks] == ["[2] Pump manual > 4. Maintenance (p. 4)",
                                                  "[5] Pump manual > 6. Faults (p. 7)"]
    assert "Check the seals [1] at each change." in blocks[0]  # a bracket inside a line is text
    assert head + "".join(blocks) + tail == PROMPT


def test_a_prompt_of_another_shape_is_not_split():
    assert _module().split_prompt("Question: How often is the oil changed?\nAnswer:") is None
