"""The reader's check of an answer it gave: does the sentence that proves it state that answer?

The question, the one sentence and the answer (about 80 tokens) are put to the reader in its own
chat format, and its probability of "Yes" against "No" for the first reply token is read: one
forward pass, no generation. It is one signal of the answer's confidence (reader_confidence.py);
the decision to decline is made once, on the calibrated confidence (outcome.py).
"""

from __future__ import annotations

import math

from longqa.ask import prompts
from longqa.models.base import KEEPS_PREFIX, supports
from longqa.models.chat import Message

# The log-odds of a certain check are clipped here: beyond it the reader's probability says nothing
# more, and a calibrated table should not see unbounded values.
LOG_ODDS_CLIP = 8.0


def asked_of(generator, question: str, evidence: str, answer: str | None) -> float | None:
    """The reader's probability that `evidence` states `answer` to `question` (answers it, when
    `answer` is None: a selected sentence is its own answer); None when the
    generator cannot be asked (no chat template, or it gives no label probabilities)."""
    if generator is None or not hasattr(generator, "chat_prompt"):
        return None
    if supports(generator, KEEPS_PREFIX):  # the same system turn opens every check
        generator.keep_prefix(generator.chat_head(prompts.CHECK_SYSTEM))
    prompt = generator.chat_prompt([Message("system", prompts.CHECK_SYSTEM),
                                    Message("user", prompts.check_message(question, evidence, answer))])
    probs = generator.label_probs(prompt, list(prompts.CHECK_LABELS))
    yes, no = probs.get("Yes", 0.0), probs.get("No", 0.0)
    return yes / (yes + no) if yes + no > 0 else None


def log_odds(probability: float | None) -> float:
    """The check as a signal: log(p / (1 - p)), clipped; 0 (no evidence either way) when not asked."""
    if probability is None:
        return 0.0
    p = min(max(probability, 1e-6), 1 - 1e-6)
    return max(-LOG_ODDS_CLIP, min(LOG_ODDS_CLIP, math.log(p / (1 - p))))
