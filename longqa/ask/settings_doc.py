"""docs/settings.md: every setting of `longqa ask` (ask/settings.py) and the learned features of the
answer ranker (ask/answer/features.py, ranker.json) with their fitted weights.

It lives above both, so that settings.py, which every step of ask/ reads, imports nothing of the
answer stage. Written by `python -m longqa.ask.settings > docs/settings.md`.
"""

from __future__ import annotations

from longqa.ask.answer import ranker
from longqa.ask.answer.features import FEATURES
from longqa.ask.settings import AskSettings


def document() -> str:
    """docs/settings.md: every setting with its default, what it is and how it was chosen."""
    return ("# Settings\n\n"
            "Every tunable of `longqa ask`, with its default, what it is and how the default was chosen. Set any\n"
            "of them for one call with `--set section.field=value` (repeatable), or in a TOML file passed with\n"
            "`--settings FILE` or named by `$LONGQA_SETTINGS` (a regular file of at most 1 MiB), one table per\n"
            "section (`[answer]`, `quote_sentences = 5`). `longqa ask --explain` prints the values in effect. A\n"
            "value outside what the setting takes (the `takes` column) is a usage error, exit 2, as is a file\n"
            "that cannot be read as settings. This file is generated:\n"
            "`python -m longqa.ask.settings > docs/settings.md`.\n\n" + AskSettings().table() + "\n"
            + learned_features() + "\n")


def learned_features() -> str:
    """docs/settings.md's second table: the answer ranker's features (what each reads of a candidate
    span, the rules among them included) with the weights fitted for them, so a reading counts only
    as far as its learned weight says."""
    fitted = ranker.load()
    made = fitted.provenance
    lines = ["## Learned features of the answer ranker", "",
             "Every reading of a candidate span the answer ranker weighs (`longqa/ask/answer/features.py`), with",
             "the weights fitted for it on standardised values (`longqa/ask/answer/ranker.json`: "
             f"`{made['command']}`, commit {made['commit']}, {made['questions']} tune-half questions,",
             f"label: {made['label']}). The first stage (prior) shortlists, the final stage picks; a",
             "reading whose weights are near 0 does not steer. Not settings: refit with `bench/answer_ranker.py`.", "",
             "| feature | what it reads | prior weight | final weight |", "|---|---|---|---|"]
    for name, (_, what) in FEATURES.items():
        weights = [fitted.prior.weights.get(name), fitted.final.weights.get(name)]
        shown = ["–" if w is None else f"{w:+.3f}" for w in weights]
        lines.append(f"| `{name}` | {what} | {shown[0]} | {shown[1]} |")
    return "\n".join(lines) + "\n"
