"""`longqa ask`: question analysis, hybrid retrieval, tree refinement, expansion, cited answers."""

from longqa.ask.pipeline import Pipeline
from longqa.ask.result import AnswerStream, AskResult, Refined

__all__ = ["AnswerStream", "AskResult", "Pipeline", "Refined"]
