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
        "named document in between, by its name match (see partly_named)", BY_HAND)
    relative_cutoff: float = tunable(
        0.1, "fused candidates under this × the best fused score are dropped", "OkraLong's cut-off")
    named_doc_min: float = tunable(
        0.75, "a document is named by the question when its name match is at least this × the best; "
        "named documents get a second retrieval pass of their own", BY_HAND)
    partly_named: float = tunable(
        1.0, "share of its name match that a document named under named_doc_min × the best keeps in the "
        "name prior (1: all of it; 0: none, so beside a named document it needs 1 + name_boost times the "
        "score to count as much)", "1 → 0 was measured and left out: bench/named_documents.py's share of "
        "questions whose context holds another document's passage 0.07 → 0 (the sed FAQ beside sed's manual "
        "page), 150 dev tune-half questions unchanged, but on the report half one filing question lost its own "
        "filing (named 0.55 × the best, beside another quarter's): it did not earn its place")
    column_weights: tuple = tunable(
        (0.0, 0.6, 1.0), "BM25 weight of the FTS5 columns title, path, text: leaves have no title, "
        "and every leaf of a section repeats its path", BY_HAND)
    overfetch: int = tunable(
        4, "rows asked of FTS5 per wanted leaf (section nodes are in the index too)",
        "speed: the match runs without a join to nodes, twice as fast at 100,000 leaves")
    term_count_cap: int = tunable(
        1000, "leaves counted per question word for the 'nothing relevant' coverage",
        "enough to tell a rare word from a common one")
    bm25_common_rows: int = tunable(
        20_000, "a question's phrase held by more index rows than this is common: BM25 over the whole "
        "store scores only rows holding one of its rarer phrases (store/fts_cut.py), unless they are "
        "too few; 0 scores every matching row",
        "measured (bench/bigstore.py): FTS5 scores ~3 µs a matched row, so 20,000 rows cost ~60 ms; at "
        "a million leaves 21 FinanceBench dev questions kept the same top 20, in 154 against 603 ms; a "
        "store of 100,000 leaves has no phrase this common, so smaller stores are not cut")
    dense_exact_max: int = tunable(
        250_000, "dense search scores every vector exactly up to this many in the store (or in a "
        "question's documents); above it, through the candidate cut (dense_cut_pool)",
        "measured (bench/dense_cut.py sizes, a fresh process, load 5.5-6 on 2 cores): at 250,000 vectors "
        "exact took 87 ms and 417 MiB, the cut 99 ms and 74 MiB; at 500,000 the cut is faster (131 "
        "against 155 ms; exact maps 794 MiB); at a million 188 against 351 ms, 117 against 1,547 MiB")
    dense_cut_pool: int = tunable(
        10_000, "above dense_exact_max, the leaves whose sign bits best match the query's that are then "
        "read and scored exactly; the dense top k is taken from them",
        "measured: recall@20 against exact search 0.92-0.94 at a million random vectors (its worst case), "
        "0.977 on 20,155 real vectors with the pool at the same 1 % share (0.994 at 2 %; 300 dev "
        "questions, bench/dense_cut.py real); reading the pool is ~40 ms of the cut")
    dense_cut_levels: int = tunable(
        3, "bands of the query's component sizes that weight the sign-bit mismatches of the cut",
        "measured at a million random vectors, pool 10,000: recall@20 0.71 with 1 band (Hamming), 0.90 "
        "with 2, 0.94 with 3, 0.95 with 4 at more time; on real vectors at a 1 % pool 0.908 against 0.977")
    query_cache: int = tunable(
        16, "query vectors kept (a question, its sub-questions and bridge queries)",
        "covers one question's queries; each is embedded once")

    def dense_cut(self):
        from longqa.store.vectors import Cut  # imported here: store/ loads numpy and SQLite
        return Cut(self.dense_exact_max, self.dense_cut_pool, self.dense_cut_levels)

    def but(self, **changes) -> "RetrievalSettings":
        return replace(self, **changes)


RETRIEVAL = RetrievalSettings()
