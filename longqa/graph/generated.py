"""Generated information points: GARLIC's summarising step, for measuring a model's faithfulness.

The model continues a bullet list after its sources: one fact or event per bullet, names
spelled out instead of pronouns. The prompt is completion-shaped (the default gemma-3-270m is a
base model) and opens the first bullet itself. bench/graph.py measures, per model, the share of
a bullet's content words found in its sources (points.faithfulness); the default model did not
reach the bar there, so `ingest --graph` stores extractive points (points.py).
"""

from __future__ import annotations

from longqa.models.prompt_fit import PromptTooLong

PROMPT_HEAD = (
    "Below are passages of a document, then a list of summary points about them. Each summary point "
    "states one event or fact from the passages, in one sentence, with full names instead of "
    "he, she or they.\n\nPassages:\n"
)


def points_prompt(texts: list[str]) -> str:
    passages = "".join(f"* {' '.join(text.split())}\n" for text in texts)
    return f"{PROMPT_HEAD}{passages}\nSummary points:\n*"


def generated_points(generator, texts: list[str], max_tokens: int) -> list[str]:
    """The model's bullets for one group (at most `max_tokens` generated); [] when the prompt
    does not fit the model."""
    try:
        text = generator.complete(points_prompt(texts), max_tokens=max_tokens, stop=["\n\n", "Passages:"])
    except PromptTooLong:
        return []
    lines = ("*" + text).split("\n")
    bullets = [line.lstrip("*").strip() for line in lines if line.strip().startswith("*") and len(line.strip()) > 3]
    if bullets and not bullets[-1].endswith((".", "!", "?", '"', "'", ")")):
        bullets.pop()  # cut off by max_tokens mid-sentence
    return bullets
