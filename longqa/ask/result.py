"""What `ask` produces: the refined context (no generation) and the full answer, as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from longqa.ask.analysis.analyze import Analysis
from longqa.ask.answer.citations import cited_numbers, citation_list
from longqa.ask.context import Passage, Quote, render
from longqa.ask.search.relevance import EvidenceCheck
from longqa.ask.search.steps import Step
from longqa.ask.answer.grounded import Grounding, quote_of
from longqa.ask.answer.outcome import Outcome, settle
from longqa.retrieve.fusion import Fused


@dataclass
class Refined:
    question: str
    analysis: Analysis
    evidence: EvidenceCheck
    passages: list[Passage] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    budget: int = 0
    fused: dict[int, Fused] = field(default_factory=dict)  # every retrieved leaf, for --explain
    notes: list[str] = field(default_factory=list)  # e.g. why dense retrieval was off
    explained: list[str] = field(default_factory=list)  # shown by --explain only (what steers, and why)
    answer_prompt: str = ""  # what the generator read to answer (the focused sentences)
    leaf_scores: dict[int, float] = field(default_factory=dict)  # the search's score of each candidate leaf

    @property
    def found(self) -> bool:
        return self.evidence.found and bool(self.passages)

    @property
    def context_tokens(self) -> int:
        return sum(p.tokens for p in self.passages)

    @property
    def context(self) -> str:
        return render(self.passages)

    def as_json(self, answer: str | None = None, cited: list[int] | None = None, grounding=None,
                outcome=None) -> dict:
        """The `ask --json` document; `outcome` (answer/outcome.py) says whether anything is
        answered (None: no answer was asked for)."""
        analysis = self.analysis.as_dict()
        analysis["evidence"] = self.analysis.evidence
        return {
            "question": self.question,
            "answer": answer,
            "answer_mode": grounding.mode if grounding else None,
            "declined": grounding.declined if grounding and grounding.declined else None,
            "declined_answer_mode": grounding.answered_as if grounding and grounding.answered_as else None,
            "quotes": [q.as_dict() for q in grounding.quotes] if grounding else [],
            "candidates": grounding.candidates if grounding else [],
            "draft": grounding.draft if grounding else None,
            "focused": [{"node_id": s.leaf.id, "char_start": s.start, "char_end": s.end, "n": s.passage.n,
                         "score": round(s.score, 4), "text": s.text} for s in grounding.focused] if grounding else [],
            "citations": citation_list(self.passages, cited or []),
            "analysis": {**analysis, "relevant": self.evidence.as_dict()},
            "context": [p.as_context() for p in self.passages],
            "context_tokens": self.context_tokens,
            "steps": [step.to_json() for step in self.steps],
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
            "found": self.found and (outcome is None or outcome.answered),
            "confidence": None if grounding is None or grounding.confidence is None else round(grounding.confidence, 4),
            "unsure": bool(grounding and grounding.unsure),
            "alternatives": [alternative(c) for c in grounding.alternatives] if grounding else [],
            "notes": self.notes,
        }


def alternative(candidate) -> dict:
    """A next candidate with its probability and the quote it stands in."""
    return {"text": candidate.text, "kind": candidate.kind, "probability": round(candidate.probability, 4),
            "quote": quote_of(candidate.sentence).as_dict() if candidate.sentence is not None else None}


@dataclass
class AskResult:
    refined: Refined
    answer: str | None  # None when the store holds nothing relevant
    grounding: Grounding | None = None  # quotes and the candidates the answer was chosen from
    outcome: Outcome | None = None  # what is shown and whether anything is answered (None: nothing relevant)

    def __post_init__(self):
        if self.answer is not None and self.outcome is None:
            self.outcome = settle(self.answer, self.grounding)
            self.answer = self.outcome.answer

    @property
    def question(self) -> str:
        return self.refined.question

    @property
    def passages(self) -> list[Passage]:
        return self.refined.passages

    @property
    def timings(self) -> dict[str, float]:
        return self.refined.timings

    @property
    def quotes(self) -> list[Quote]:
        return self.grounding.quotes if self.grounding else []

    @property
    def found(self) -> bool:
        """Something relevant was found and the outcome answers it ("The documents do not say."
        answers nothing: exit 4)."""
        return self.refined.found and self.outcome is not None and self.outcome.answered

    @property
    def cited(self) -> list[int]:
        """Passages that support the answer: those quoted, then any [n] the answer wrote."""
        numbers = [q.passage.n for q in self.quotes]
        numbers += cited_numbers(self.answer or "", len(self.passages))
        return list(dict.fromkeys(numbers))

    def as_json(self) -> dict:
        return self.refined.as_json(self.answer, self.cited, self.grounding, self.outcome)


class AnswerStream:
    """Iterate for the answer's text pieces; `result` is complete once iteration ends."""

    def __init__(self, refined: Refined, pieces: Iterator[str], finish):
        self.refined = refined
        self._pieces = pieces
        self._finish = finish
        self.result: AskResult | None = None

    def __iter__(self) -> Iterator[str]:
        collected: list[str] = []
        for piece in self._pieces:
            collected.append(piece)
            yield piece
        self.result = self._finish("".join(collected))
