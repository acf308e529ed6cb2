"""Every tunable of first-stage retrieval (retrieve/), with its default and how it was chosen.

`HybridRetriever(settings=...)` and `fusion.fuse` read them; ask/settings.py gathers them with the
ask pipeline's other sections (it sits above retrieve/, so this section lives here).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from longqa.tunables import tunable

BY_HAND = "set by hand when hybrid retrieval was built; not swept"


@dataclass(frozen=True)
class RetrievalSettings:
    k: int = tunable(20, "leaves each retriever (BM25, dense) returns per query before fusion", BY_HAND)
    pattern_lean: float = tunable(
        0.6, "fusion weight of the retriever the question's information pattern favours (exact: BM25, "
        "semantic: dense); the other gets 1 − this, and 0.5 each when it favours both",
        "OkraLong's assembled retriever leans 3:2")
    name_boost: float = tunable(
        3.0, "leaves of documents the question does not name count 1 / (1 + this) as much; a partly "
        "named document in between, by its name match", BY_HAND)
    relative_cutoff: float = tunable(
        0.1, "fused candidates under this × the best fused score are dropped", "OkraLong's cut-off")
    named_doc_min: float = tunable(
        0.75, "a document is named by the question when its name match is at least this × the best; "
        "named documents get a second retrieval pass of their own", BY_HAND)
    column_weights: tuple = tunable(
        (0.0, 0.6, 1.0), "BM25 weight of the FTS5 columns title, path, text: leaves have no title, "
        "and every leaf of a section repeats its path", BY_HAND)
    overfetch: int = tunable(
        4, "rows asked of FTS5 per wanted leaf (section nodes are in the index too)",
        "speed: the match runs without a join to nodes, twice as fast at 100,000 leaves")
    term_count_cap: int = tunable(
        1000, "leaves counted per question word for the 'nothing relevant' coverage",
        "enough to tell a rare word from a common one")
    query_cache: int = tunable(
        16, "query vectors kept (a question, its sub-questions and bridge queries)",
        "covers one question's queries; each is embedded once")

    def but(self, **changes) -> "RetrievalSettings":
        return replace(self, **changes)


RETRIEVAL = RetrievalSettings()
