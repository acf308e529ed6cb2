"""`longqa ask`: question analysis, hybrid retrieval, tree refinement, expansion, cited answers.

The names below load on first use, so `longqa --help` and the settings do not import the pipeline.
"""

from __future__ import annotations

__all__ = ["AnswerStream", "AskResult", "Pipeline", "Refined"]


def __getattr__(name: str):
    if name == "Pipeline":
        from longqa.ask.pipeline import Pipeline

        return Pipeline
    if name in ("AnswerStream", "AskResult", "Refined"):
        from longqa.ask import result

        return getattr(result, name)
    raise AttributeError(f"module 'longqa.ask' has no attribute {name!r}")
