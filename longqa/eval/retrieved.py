"""What a system hands back for one question: the passages the generator will read, and where
they came from (document and pages), so recall can be measured without the model."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from longqa import tokens


@dataclass
class Passage:
    text: str
    doc: str  # resolved path of the source document ("" when unknown)
    title: str = ""  # document title
    label: str = ""  # section path inside the document, shown after the title
    page_start: int | None = None
    page_end: int | None = None
    score: float | None = None

    def with_text(self, text: str) -> "Passage":
        return replace(self, text=text)


@dataclass
class Retrieved:
    passages: list[Passage]  # given to the generator
    # Measured for recall instead of `passages` when they differ (full-context: the untruncated
    # documents, i.e. the ceiling any retrieval could reach).
    recall_passages: list[Passage] | None = None
    stages: dict[str, float] = field(default_factory=dict)  # seconds by stage, the system's own timings
    note: str = ""
    # longqa's own answer: the ranker's confidence, whether it was shown unsure, the next candidates
    confidence: float | None = None
    unsure: bool | None = None
    alternatives: list[str] = field(default_factory=list)
    mode: str | None = None  # how the answer was chosen (Grounding.mode: read, span, yesno, ...)
    signals: dict = field(default_factory=dict)  # a reader's confidence signals (bench/reader_confidence.py)
    declined: bool | None = None  # the answer stage said the documents do not say (None: not asked)
    declined_mode: str = ""  # the mode of the answer it declined, when it had one

    @property
    def measured(self) -> list[Passage]:
        return self.passages if self.recall_passages is None else self.recall_passages

    def context_tokens(self) -> int:
        return sum(tokens.count(p.text) for p in self.passages)
