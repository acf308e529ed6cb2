"""Every tunable of the ask pipeline, with what it is, its default and how it was chosen.

`AskSettings` gathers five sections, printed by `longqa ask --explain` (one `name = value` line
each) and listed in the README:
- retrieval: first-stage BM25 + dense retrieval and fusion (retrieve/settings.py, which sits below
  ask/ in the import graph);
- relevance: the "nothing relevant" decision (ask/search/relevance.py);
- search: which documents are refined and the search loop (`Pipeline(..., settings=
  SearchSettings(...))` or keyword overrides replace any field; the CLI exposes the stop rules);
- expansion: the outline choice and the generated queries of the search's steps;
- answer: the answer stage (focus, span choice, the draft's vote, tables, sources).
The Pipeline applies one AskSettings for the length of each call and every step reads
`in_effect()` when it runs; users set any field with `--set section.field=value` or a TOML file.

Search defaults were set on the TUNE half of the dev questions (`longqa eval --half tune`);
figures reported come from the other half. Answer-stage values were set by hand on tune-half spot
checks (16 HotpotQA questions, the UDA tune store's table questions, the handbook).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, Iterator

from longqa.retrieve.settings import RETRIEVAL, RetrievalSettings
from longqa.text.sentences import MAX_SENTENCE_CHARS
from longqa.tunables import described
from longqa.tunables import tunable as described_field

# Numbers a setting takes unless its field says otherwise: finite, from 0 up to these. A count
# past a billion is a typo, and would overflow SQLite's LIMIT; a weight past a million, a float.
MAX_COUNT = 10**9
MAX_NUMBER = 1e6
ROUTER_MODES = ("auto", "on", "off")  # SearchSettings.router
SEARCH_MODES = ("tree", "graph", "auto")  # SearchSettings.search
FREE_TEXT_MODES = ("auto", "generate", "quote")  # AnswerSettings.free_text
# Two options of the call (`--budget`, `--max-steps` of ask and eval), declared once here for the
# Pipeline, the CLI and the evaluation.
# Tokens (cl100k) of passage text in the context: the budget the evaluation compares longqa and the
# baselines under (the README's tables); chosen with that protocol, not swept. A reader reads a few
# hundred tokens of it (answer.reader_focus_tokens).
BUDGET_TOKENS = 2000
# Most expansion steps (next-step queries, sub-questions, hops) of one question: set by hand when
# the step-wise search was built, not swept.
MAX_STEPS = 3


@dataclass(frozen=True)
class Allowed:
    """The values a setting takes: a number (each number of a tuple) finite and within [low, high]
    (high: MAX_COUNT for a whole number, MAX_NUMBER for another, where not said); a text one of
    `choices` where there are any. A switch or a file name takes any value of its type."""

    low: float = 0
    high: float | None = None
    choices: tuple[str, ...] = ()

    def problem(self, value: Any) -> str | None:
        """What the setting takes, where `value` (of the field's type) is not that; else None."""
        if isinstance(value, str):
            return None if not self.choices or value in self.choices else self.text(value)
        if isinstance(value, bool):
            return None
        numbers = value if isinstance(value, tuple) else (value,)
        high = self._high(value)
        return None if all(math.isfinite(n) and self.low <= n <= high for n in numbers) else self.text(value)

    def text(self, value: Any) -> str:
        """What a value of `value`'s kind takes, in words (an error's, and docs/settings.md's)."""
        if isinstance(value, str):
            return f"one of {', '.join(self.choices)}" if self.choices else "any text"
        if isinstance(value, bool):
            return "true or false"
        span = f"from {_shown(self.low)} to {_shown(self._high(value))}"
        if isinstance(value, tuple):
            return f"{len(value)} comma-separated numbers, each {span}"
        return f"{'a whole number' if isinstance(value, int) else 'a number'} {span}"

    def _high(self, value: Any) -> float:
        whole = all(isinstance(n, int) for n in (value if isinstance(value, tuple) else (value,)))
        return self.high if self.high is not None else MAX_COUNT if whole else MAX_NUMBER


def _shown(number: float) -> str:
    return f"{int(number):,}" if float(number).is_integer() else f"{number:g}"


def tunable(default: Any, what: str, chosen: str, unlearned: str = "", *, low: float = 0,
            high: float | None = None, choices: tuple[str, ...] = ()) -> Any:
    """A described tunable (longqa/tunables.py) that also declares the values it takes (Allowed):
    `--set`, a settings file and the command line's options are all checked against them."""
    plain = described_field(default, what, chosen, unlearned)
    return field(default=default, metadata={**plain.metadata, "allowed": Allowed(low, high, choices)})


# The first-stage retrieval section is declared in retrieve/settings.py, below this module; its
# fields' ranges (those not from 0 up) are declared here.
RETRIEVAL_ALLOWED = {"k": Allowed(low=1), "pattern_lean": Allowed(high=1), "relative_cutoff": Allowed(high=1),
                     "named_doc_min": Allowed(high=1), "partly_named": Allowed(high=1),
                     "column_weights": Allowed(), "overfetch": Allowed(low=1),
                     "term_count_cap": Allowed(low=1), "query_cache": Allowed(low=1)}

TUNE = "tune-half eval runs"
SPOT = "by hand, tune-half spot checks"
# Why a hand-set search value is not learned (printed after how it was chosen).
SWITCH = "a switch between methods, measured by its ablation, not a weight"
CAP = "a cap on cost (documents, steps, tokens, seconds), not a score"
SEQUENCE = ("it acts on the order of the search's picks and on the fill, which the per-leaf ranker does not "
            "model (its labels say which leaves hold the answer, not which pick comes next)")
SHAPE = ("it sets how much text comes along with a pick (a sentence's end, a table after its caption): a "
         "reading of layout, not of relevance")
LEAVES = ("the learned leaf ranker that reads the same signal as a feature did not beat the hand-weighted "
          "score in the search (see learned_leaves)")
EXCERPT = ("the learned sentence ranker that reads the same signal as a feature did not beat it on the report "
           "half (see learned_excerpt)")


@dataclass(frozen=True)
class RelevanceSettings:
    """Is anything in the store relevant at all (else `ask` exits 4)? Calibration in ask/search/relevance.py."""

    coverage_min: float = tunable(
        0.8, "IDF-weighted share of the question's words found in the store that alone says 'relevant'",
        "eval/relevance-gate-tune.json (bench/relevance.py: tune-half stores + 20 handbook questions in users' "
        "words): with cosine_min it refuses 2 of 170 answerable and lets 44 of 151 foreign through; "
        "0.6 / 0.35 would refuse 2 and let 80 through", high=1)
    cosine_min: float = tunable(
        0.42, "best question–leaf cosine that alone says 'relevant' (all-MiniLM-L6-v2's scale)",
        "same calibration as coverage_min; another embedder's cosines sit on another scale", low=-1, high=1)
    coverage_only_min: float = tunable(
        0.5, "the coverage that suffices when the store has no vectors, or BM25's best leaves for the question lack them (BM25 only)",
        "by hand: the committed calibration's stores all have vectors, so it does not measure this case", high=1)

    def but(self, **changes) -> "RelevanceSettings":
        return replace(self, **changes)


@dataclass(frozen=True)
class SearchSettings:
    # -- the question's scope, R_q (ask/analysis/rules.py) ----------------------------------------
    scope_global: float = tunable(
        0.9, "R_q given a summary-style question (summarise, overview, main points) whatever a model says",
        SPOT, unlearned="a rule's verdict, used where no measured model decides the scope", high=1)
    scope_local: float = tunable(
        0.2, "R_q given a question that wants one short answer (a figure, a date, a name, yes/no, one of "
        "two options) whatever a model says", SPOT,
        unlearned="a rule's verdict, used where no measured model decides the scope", high=1)

    # -- which documents are refined (retrieve/docscore.py) ------------------------------------
    doc_relative: float = tunable(
        0.5, "a document is a refinement candidate when its best leaf scores at least this × the best "
        "document's", TUNE, unlearned=SEQUENCE, high=1)
    max_docs: int = tunable(8, "most candidate documents refined per question", "LongRefiner refines the top 8",
                            unlearned=CAP, low=1)
    spread_docs: int = tunable(
        8, "when the search ends without sufficient evidence, the best leaf of each of this many best "
        "candidate documents joins the context right after the search's best pick, before its other picks "
        "and the fill (0 or 1: off)", "tune half: L-Eval 31 → 32 of 161 answers in context, no answer lost; "
        "always spreading: 33 but MuSiQue evidence 0.88 → 0.85", unlearned=SEQUENCE)
    doc_prior: bool = tunable(
        True, "scale a weaker candidate's leaves by its score relative to the best document's, so the "
        "budget goes first to the document the question is about", TUNE, unlearned=LEAVES)

    # -- local scores (retrieve/local.py) ------------------------------------------------------
    whole_documents: bool = tunable(
        True, "score every leaf of every candidate document (BM25 + cosine), not only first-stage "
        "hits (False: the old behaviour, kept as an ablation)", "LongRefiner's local score as written", unlearned=SWITCH)
    learned_leaves: bool = tunable(
        False, "score the candidate documents' leaves in the order of the learned leaf ranker "
        "(ask/search/leaf_ranker.json) rather than the hand-weighted BM25 + cosine × document prior with back "
        "matter scaled down (True: the longqa-learned-leaves eval system)",
        "bench/leaf_ranker.py: better than the hand-weighted order on the tune half's leaves alone (a gold answer "
        "among the leaves that fill 2,000 tokens for 0.873 of questions, cross-validated, against 0.835), but "
        "not in the search: tune-half answer recall 0.534 against 0.550 at 2,000 tokens and 0.481 against 0.489 "
        "at 500 (eval/dev-report150-corpus-recall-learned-*-tune.json), so the hand-weighted order stays", unlearned=SWITCH)
    back_matter_weight: float = tunable(
        0.3, "local scores of the leaves under a References, External links, Bibliography or Notes heading "
        "are scaled by this unless the question asks about sources (ask/search/back_matter.py; 1: off)", SPOT, unlearned=LEAVES)
    fill_floor: float = tunable(
        0.1, "nodes scoring under this × the best are never chosen, not even to fill the budget", SPOT,
        unlearned=SEQUENCE, high=1)
    fill_run_weight: float = tunable(
        0.8, "when the rest of the budget is filled, the next two leaves of each search pick's section score "
        "at least this × and this² × the pick's score (the two before it also × previous_weight / "
        "neighbour_weight), so a passage running over several leaves stays contiguous (0: off)", "tune-half eval runs: 0.7, 0.8 and 0.9 alike; 0 lost FinanceBench "
        "evidence (0.33 against 0.44-0.56 on 9 questions)", unlearned=SEQUENCE, high=1)
    continuation_tokens: int = tunable(
        120, "a chosen leaf whose text stops mid-sentence (ends on a word or a comma: a long PDF paragraph cut "
        "at the leaf size, an infobox cut between label and value) brings the next leaf of its document, and "
        "one opening mid-sentence (on a lower-case word) the leaf before, when that costs at most this many "
        "tokens (0: off)",
        "tune-half eval run at 2,000 tokens: answer recall 0.596 -> 0.606 (one infobox value), nothing lost; "
        "500 tokens unchanged", unlearned=SHAPE)
    caption_tokens: int = tunable(
        400, "a chosen leaf that announces what follows (ends on a colon, or on a table's units line such as "
        "'(In thousands)') brings the leaves after it in its section and on the page where it ends, in order, "
        "while they fit in this many tokens: a table's caption comes with its table (0: off)",
        "tune half at 2,000 tokens: FinanceBench evidence 0.556 -> 0.667 (9 questions: MGM's EBITDAR table "
        "after its caption), the 120-question set and 150 L-Eval questions unchanged, 500 tokens unchanged; F1 "
        "0.485 -> 0.475 (one table answer moved by the reordered context)", unlearned=SHAPE)

    duplicate_share: float = tunable(
        0.6, "a leaf whose word trigrams are at least this share inside a leaf already chosen is not chosen "
        "again (corpora repeat paragraphs: two copies of one Wikipedia list, a filing's boilerplate; 0: off)",
        SPOT, unlearned=SEQUENCE, high=1)

    excerpt_below: int = tunable(
        1000, "below this context budget the search fills `excerpt_pool` tokens and the context keeps the "
        "best sentences of it under the budget (ask/excerpt.py; 0: off)",
        "tune half: at 500 tokens 0.356 → 0.500 answers in context; at 2,000 (from 4,000) answers 0.596 → "
        "0.606 but evidence 0.864 → 0.841, so whole paragraphs stay from 1,000 up", unlearned=CAP)
    excerpt_pool: int = tunable(
        2000, "how many tokens the search fills when the context will be cut to its best sentences",
        "tune half at 500 tokens: 2,000 → 0.500, 3,000 → 0.490", unlearned=CAP, low=1)
    excerpt_whole_share: float = tunable(
        0.0, "when the context is cut to sentences, the search's best passages are first kept whole while they "
        "fit in this share of the budget (0: every passage is cut to its best sentences)",
        "tune half at 500 tokens, before the second hop: 0 → 0.423, 0.5 → 0.413", unlearned=SEQUENCE, high=1)
    learned_excerpt: bool = tunable(
        False, "order a tight-budget context's sentences by the learned sentence ranker (ask/excerpt_ranker.json) "
        "rather than focus + excerpt_leaf_weight × the paragraph's score + excerpt_kind_weight (True: the "
        "longqa-learned-excerpt eval system)",
        "bench/excerpt_ranker.py: on the tune half's sentences it reaches a gold answer within 500 tokens for "
        "0.841 of questions (cross-validated) against 0.870 for the hand-weighted score; in the search, tune-half "
        "answer recall at 500 tokens 0.443 against 0.481 (both with the learned leaf order), so the "
        "hand-weighted score stays", unlearned=SWITCH)
    excerpt_leaf_weight: float = tunable(
        0.3, "a sentence's excerpt score adds this × its paragraph's search score (relative to the best): "
        "what the search knew of the paragraph (section titles, bridge hops) counts for its sentences",
        "tune half at 500 tokens: 0.15 → 0.500, 0.3 → 0.500 (evidence 0.511 against 0.487), 0.5 → 0.490", unlearned=EXCERPT)
    excerpt_kind_weight: float = tunable(
        0.3, "when the question wants a date, a figure, a duration or a frequency, a sentence holding a span "
        "of that kind adds this × the best sentence's excerpt score (one without one cannot answer it)",
        "tune half at 500 tokens: 0 → 0.500 answers in context, 0.3 → 0.538, 0.6 → 0.538", unlearned=EXCERPT)

    # -- the search loop (ask/search.py) -------------------------------------------------------
    use_loop: bool = tunable(True, "run the search loop (False: plain LongRefiner greedy selection, an ablation)",
                             "ablation switch", unlearned=SWITCH)
    confidence: float = tunable(
        0.75, "the evidence suffices when the combined sufficiency reaches this (PECAN's t_p)", TUNE, unlearned=SEQUENCE, high=1)
    patience: int = tunable(1, "stop after this many steps judged sufficient (PECAN's t_n)", TUNE, unlearned=SEQUENCE, low=1)
    max_nodes: int = tunable(8, "cap on node-adding steps", TUNE, unlearned=CAP)
    max_seconds: float = tunable(10.0, "safety cap on seconds spent in the loop (model probes included), for "
                                 "slow servers; with the default models the step caps end the loop first",
                                 "results must not depend on machine load: at 1.2 s the cap cut 16 of 150 "
                                 "report questions' searches under load 2 (99th percentile 4.3 s)", unlearned=CAP)
    seed_leaves: int = tunable(8, "the best leaves that start the frontier", TUNE, unlearned=SEQUENCE, low=1)
    neighbour_weight: float = tunable(
        0.7, "the next leaf of a selected leaf enters the frontier with this × its priority (text "
        "announces what follows it: a table after its lead-in)", "GARLIC's successor score; " + TUNE, unlearned=SEQUENCE)
    previous_weight: float = tunable(0.6, "the previous leaf of a selected leaf enters with this × its priority",
                                     "GARLIC's successor score; " + TUNE, unlearned=SEQUENCE)
    parent_weight: float = tunable(0.5, "a selected leaf's parent section enters with this × its priority",
                                   "GARLIC's successor score; " + TUNE, unlearned=SEQUENCE)
    probe_tokens: int = tunable(
        80, "each selected node is shown to the sufficiency probe cut to this many tokens (one "
        "KV-cached prefix per question)", "latency: a step costs only the new node's tokens", unlearned=CAP, low=1)
    max_hops: int = tunable(2, "most bridge hops (a new query with an entity read from the evidence)", TUNE, unlearned=CAP)
    bridge_new_share: float = tunable(
        0.5, "a name read from the evidence is a bridge entity only when at least this share of its content "
        "words are not the question's (a name the question already says leads nowhere new)",
        "by hand: half a name new, not swept", unlearned=SEQUENCE, high=1)
    hop_after: int = tunable(
        3, "picks the first hop waits for (the best leaf alone is often a near miss)", TUNE, unlearned=SEQUENCE)
    parent_gather: float = tunable(
        0.33, "when the rest of a selected leaf's parent fits in this share of the budget, the parent enters "
        "with parent_weight × the leaf's priority × the number of its children already selected: a small "
        "section whose leaves keep being chosen comes in whole (0: off)",
        "tune half unchanged (120 questions at 2,000 and 500 tokens, FinanceBench; F1 0.475 -> 0.474); "
        "the share set by hand, not swept: a statement page is about 600 tokens, and a report-half answer "
        "showed a whole 1,200-token note crowding a table out", unlearned=SEQUENCE, high=1)
    bridge_weight: float = tunable(1.0, "a bridge hit enters the frontier with its fused score × this", TUNE, unlearned=SEQUENCE)
    precise_mode: bool = tunable(
        True, "when the loop ends judged insufficient but retrieval found relevant material, retry "
        "once with the best whole sections", "OkraLong's precise mode", unlearned=SWITCH)
    precise_margin: float = tunable(
        0.05, "the whole sections are kept only when the sufficiency check rises by this much", TUNE,
        unlearned=SEQUENCE, low=-1, high=1)
    shape_missing: float = tunable(
        0.5, "the coverage rule is multiplied by this while no figure, date or name of the asked kind "
        "is among the picks", SPOT, unlearned=SEQUENCE, high=1)

    search: str = tunable(
        "tree", "which search: tree (this loop over the document trees), graph (GARLIC's best-first search "
        "over the information-point graph of `ingest --graph`, ask/search/graph.py; a document without a "
        "current graph falls back to tree) or auto (graph when every candidate document has a current "
        "graph, else tree)", "the user's choice (--search)", unlearned=SWITCH, choices=SEARCH_MODES)
    graph_max_nodes: int = tunable(
        16, "cap on the graph search's node-adding steps (points are one sentence each, so it takes more "
        "steps than the tree search)", SPOT, unlearned=CAP)
    graph_seed_share: float = tunable(
        0.75, "the graph search first visits the retrieval's best leaves (BM25 + cosine over the whole "
        "document, the tree search's seeds), best first, while they fit in this share of the budget; the "
        "graph leads the rest", TUNE, unlearned=SEQUENCE, high=1)

    # -- RDR2's router (ask/router.py) -----------------------------------------------------------
    router: str = tunable(
        "auto", "RDR2's ANSWER / EXPAND / REFUSE move each step: auto = only when the model's measured "
        "router skill is above chance (gemma-3-270m's is not: no latency added), on = always, off = never",
        "bench/decisions.py --decisions router, tune half", unlearned=SWITCH, choices=ROUTER_MODES)
    router_tokens: int = tunable(600, "the serialised subtree shown to the router is cut to this many tokens",
                                 "latency: ~170 tokens of worked example come on top", unlearned=CAP, low=1)
    router_frontier: int = tunable(8, "frontier nodes shown to the router, best first", SPOT, unlearned=CAP, low=1)
    router_hidden_words: int = tunable(10, "words shown of a leaf not opened yet (then '…'); headings in full", SPOT, unlearned=CAP)
    router_open_words: int = tunable(40, "words shown of an opened (selected) leaf", SPOT, unlearned=CAP)
    router_max_answer: int = tunable(4, "most ids an ANSWER move may list", SPOT, unlearned=CAP, low=1)

    def but(self, **changes) -> "SearchSettings":
        return replace(self, **changes)


@dataclass(frozen=True)
class ExpansionSettings:
    """The outline choice and the queries the search's steps generate."""

    outline_entries: int = tunable(10, "sections shown to the model in the outline prompt", SPOT, low=1)
    outline_summary_words: int = tunable(14, "words of a section's summary shown in the outline", SPOT)
    outline_min_weight: float = tunable(
        0.05, "a section's outline weight must reach this to count (measured at chance: the call is skipped)", SPOT, high=1)
    outline_max_chosen: int = tunable(3, "most sections the outline choice weights", SPOT, low=1)
    max_query_chars: int = tunable(120, "longest generated next query or sub-question", "one short line", low=1)
    reader_query_tokens: int = tunable(24, "token cap of a reader's next query", "a cap, not swept: one short line",
                                       low=4)
    same_query_overlap: float = tunable(
        0.8, "a generated query or sub-question whose content words overlap one already asked this much or more "
        "(shared over all, Jaccard) is the same query and is not asked again",
        "by hand: a reworded query that adds one word of five is the same query, not swept", high=1)
    max_known_chars: int = tunable(120, "longest generated 'what the context already shows' line", "one short line", low=1)
    bridge_question_words: int = tunable(
        4, "question words carried into a bridge query (more make it match the question again)", SPOT)


@dataclass(frozen=True)
class AnswerSettings:
    """The answer stage (ask/answer/)."""

    # -- what is generated (ask/answer/stage.py) ----------------------------------------------------
    short_answer_tokens: int = tunable(120, "token cap of a short (one-line) answer", SPOT, low=1)
    long_answer_tokens: int = tunable(256, "token cap of a free-text answer", SPOT, low=1)
    long_scope: float = tunable(
        0.6, "R_q from which a question is answered in free text over spread sentences", SPOT, high=1)
    short_sentences: int = tunable(1, "sentences kept of a short answer (what a 270M model adds is invention)", SPOT, low=1)
    long_sentences: int = tunable(6, "sentences kept of a free-text answer", SPOT, low=1)
    free_text: str = tunable(
        "auto", "a broad question's answer: 'generate' (the model's own words, each sentence traced to "
        "a source), 'quote' (the best focused sentences), 'auto' (generate only with a model whose free "
        "text was measured to beat quoting, or was never measured: models/skill.py)", TUNE, choices=FREE_TEXT_MODES)
    quote_sentences: int = tunable(3, "sentences quoted as a broad question's answer", TUNE, low=1)
    summary_diversity: float = tunable(
        0.3, "a summary's points (ask/answer/summary.py): weight of overlap with the points already chosen "
        "against relevance and centrality (Maximal Marginal Relevance)",
        "not tuned: the dev questions carry no summary labels; a common MMR setting", high=1)
    kind_fit: tuple = tunable(
        (1.0, 0.4, -0.25, -0.5), "a candidate's kind_fit feature by where its kind stands for the kind of answer "
        "asked (answer/span_fit.py): it fits (a date for 'when'), is near (a coarser or partial answer: a month "
        "for a date, a bare quantity for a duration), is unlikely (a figure for 'which device', a plain phrase "
        "for a name), clashes; 0 where no kind is asked. The ranker's learned kind_fit weight scales it",
        "by hand, four levels standing for the per-kind values set on tune-half spot checks "
        "(1.0 / 0.8 to 0.3 / -0.2 to -0.3 / -0.5)", unlearned="the levels define the feature the ranker weighs; "
        "only their spacing is a choice", low=-1, high=1)
    # -- sentence focus (ask/focus.py) ------------------------------------------------------------
    focus_tokens: int = tunable(
        260, "tokens of best sentences shown for extractive, arithmetic and bridge questions",
        "first-token latency: the prompt's reading time scales with it; " + SPOT, low=1)
    spread_tokens: int = tunable(700, "tokens of sentences spread over the passages for broad questions", SPOT, low=1)
    focus_weights: tuple = tunable(
        (0.5, 0.35, 0.15), "a sentence's score: weights of term coverage, cosine to the question, "
        "its passage's refinement score", SPOT)
    neighbour_share: float = tunable(
        0.3, "a sentence borrows this share of its better neighbour's score (pronouns)", SPOT, high=1)
    dense_top: int = tunable(24, "sentences embedded per question", "~0.3 s of MiniLM on 2 cores")
    hop_weight: float = tunable(
        0.6, "a sentence naming the first hop's bridge entity gains this x the best sentence's score (ask/answer/hops.py)",
        SPOT)
    hop_first: int = tunable(8, "best sentences searched for the first hop (the one holding the question's names, "
        "then its rarest words)", SPOT)
    hop_entities: int = tunable(2, "bridge entities taken from the first hop", SPOT)
    hop_pool: int = tunable(6, "names of the first hop re-ranked by the bridge's described noun", SPOT)
    hop_type: float = tunable(
        0.05, "a name's rank step against its cosine to the noun the question describes its bridge by "
        "(\"the state where ...\"); 0 keeps the words rule's order", SPOT)
    hop_unsaid: float = tunable(
        1.0, "extra share of the hop bonus for holding the question words the first hop leaves unsaid", SPOT)
    hop_pronoun: float = tunable(
        1.0, "share of a sentence's hop bonus that the sentences going on about the entity by pronoun right after "
        "it get", "tune half: F1 0.425 -> 0.434 (0.8 the same, 0.5 no change); recall at 500 tokens 0.529 -> 0.538")
    # -- span choice (ask/answer/choose.py; its weights are learned: ask/answer/ranker.json) ------
    ranker_weights: str = tunable(
        "", "a weights file for the answer ranker (bench/answer_ranker.py fit writes one, e.g. for another "
        "model); empty: the shipped ask/answer/ranker.json", "the shipped file is fitted on the tune half")
    max_candidates: int = tunable(12, "candidates the ranker's prior stage keeps for the model to score (each costs "
                                  "a few decodes)", "cross-validated top F1 on the tune half's 147 short-answer questions "
                                  "(bench/answer_ranker.py fit with each size): 8: 0.266, 12: 0.283, 16: 0.276", low=1)
    sentence_choices: int = tunable(3, "best sentences the model chooses among when the answer is a sentence", SPOT, low=1)
    sentence_tokens: int = tunable(24, "a sentence is scored by the model on at most its first tokens", SPOT, low=1)
    w_sentence_model: float = tunable(
        1.0, "weight of the model's probability of copying a sentence against its score / the best's", SPOT)
    candidate_sentences: int = tunable(10, "best focused sentences that candidate spans come from", SPOT, low=1)
    max_option_tokens: int = tunable(8, "a candidate is scored by the model on at most its first tokens", SPOT, low=1)
    stem_chars: int = tunable(6, "letters compared when a word meets a question word by its stem", SPOT, low=1)
    stem_only: float = tunable(0.7, "credit of a word that meets a question word only by its stem", SPOT, high=1)
    w_model: float = tunable(1.0, "lettered options: weight of the model's letter probability against the option's "
                             "support in the focused sentences", SPOT)
    verdict_sentences: int = tunable(4, "best focused sentences the yes/no word rule reads", SPOT)
    person_scale: float = tunable(
        0.03, "cosine margin (person centroid against the nearest other kind's) that counts as fully a "
        "person's name; all-MiniLM-L6-v2's margins run from about -0.35 to +0.25", SPOT, low=0.001, high=1)
    person_pool: int = tunable(24, "best candidates by prior whose person margin is read (one embedding batch)", SPOT)
    draft_tokens: int = tunable(16, "token cap of the model's draft answer", SPOT, low=1)
    draft_tokens_typed: int = tunable(
        6, "... when the rules know the answer kind (enough for 'about 52 hours')", "first-token latency; " + SPOT, low=1)
    max_draft_words: int = tunable(12, "a longer draft is not a span to copy", SPOT, low=1)
    proximity_chars: int = tunable(150, "characters within which a span counts as near a question word", SPOT)
    min_trace_overlap: float = tunable(
        0.2, "an answer sentence is traced to a source sharing this share of its words", SPOT, high=1)
    min_new_words: int = tunable(
        2, "a sentence quoted as the answer says at least this many content words the question does not "
        "(a heading that repeats the question answers nothing)", SPOT)
    max_phrase_words: int = tunable(5, "longest phrase span, in content words", SPOT, low=1)
    heading_words: int = tunable(
        12, "a line of at most this many words without closing punctuation is heading-like: a span on it "
        "reads the ranker's in_heading feature, whose weight is learned (answer/candidates.py)", SPOT,
        unlearned="it defines the feature the ranker weighs, not a weight", low=1)
    max_sentence_chars: int = tunable(
        MAX_SENTENCE_CHARS, "longer runs (tables flattened into one line) are cut at spaces into sentences "
        "(ingest's sentence splits use the same default, text/sentences.py)", SPOT, low=1)
    # -- tables (ask/tables.py) and sources (ask/citations.py) ---------------------------------------
    min_label_match: float = tunable(
        0.6, "share of the question's row words that a table row's label must contain", "UDA tune table questions", high=1)
    header_lookback: int = tunable(40, "sentences searched backwards for a table's year header", SPOT)
    max_sources: int = tunable(3, "most sources listed under an answer", "what supports a short answer")
    # -- the reader (a chat profile writes the answer; ask/answer/reader.py) --------------------------
    reader_focus_tokens: int = tunable(
        700, "tokens of best sentences a reader profile reads for a short answer (focus_tokens for the others)",
        "qwen2.5-coder-1.5b, 150 questions a half: 260 -> 400 -> 700 took the tune half's F1 0.341 -> 0.378 -> "
        "0.387 and the report half's 0.323 -> 0.342 -> 0.373; at 700 its fresh ask took 11.4 s and 13.3 s in two "
        "runs on 2 idle cores (7.8-8.7 s at 400), inside the 15 s the default may take", low=16)
    reader_window: str = tunable(
        "paragraphs", "what fills a reader's window for a fact: 'paragraphs' (whole paragraphs, best first by their "
        "best sentence, the room left to the best sentences) or 'sentences' (the best sentences of the passages); "
        "a verdict reads sentences either way (focus.reads_paragraphs)",
        "qwen2.5-coder-1.5b, 60 questions a half, the same window size and decline threshold: paragraphs took the "
        "report half's F1 0.263 -> 0.306 and the tune half's 0.278 -> 0.281, the quick-start ask as fast (982 "
        "tokens read in place of 1,008); asked without their documents it declined 78.7 % of the report half's "
        "questions against 85.1 % (bench/RESULTS.md)",
        choices=("sentences", "paragraphs"))
    reader_tokens_out: int = tunable(24, "token cap of the reader's reply (an answer and its passage number)",
                                     "a cap, not swept: a short answer of a dozen words and its number", low=4)
    reader_sure: float = tunable(
        0.5, "a proven reply whose confidence is below this is shown unsure (the profile's fitted table over "
        "its signals, reader_confidence.py; else its own probability, the per-token geometric mean)",
        "the midpoint of a calibrated probability: right as often as wrong; bench/reader_confidence.py "
        "check shows the share it leaves sure", high=1)
    reader_decline: float = tunable(
        -1.0, "a reader's proven answer whose calibrated confidence is below this is declined: 'The documents do "
        "not say.' (exit 4), the answer kept first among the alternatives (ask/answer/outcome.py); -1: the "
        "threshold chosen for the reader profile's confidence table (its provenance's decline_below); a reader "
        "with no table or no chosen threshold never declines on confidence",
        "per profile, on the tune half with bench/refusal.py --choose --write (the highest threshold losing at "
        "most 5% of right answers); qwen2.5-coder-1.5b, 60 questions: 0.121, so 88% of the tune half's questions "
        "asked without their documents were declined (78% at 0), no right answer lost, F1 0.303 -> 0.286; on the "
        "report half 85% (77% at 0), none of 11 right answers lost, F1 0.280 -> 0.262 (bench/refusal-*60-*.json)",
        low=-1, high=1)
    declined_alternatives: int = tunable(3, "candidates shown beside 'The documents do not say.'",
                                         "a display cap, not swept", low=0)
    selection_tokens_out: int = tunable(
        32, "token cap of the reader's reply naming sentences (a verdict and its sentence, or up to seven numbers)",
        "a cap, not swept: seven bracketed numbers", low=4)
    selection_most: int = tunable(7, "most sentences a selection reply quotes", "a summary's longest, not swept", low=1)


@dataclass(frozen=True)
class AskSettings:
    retrieval: RetrievalSettings = field(default_factory=lambda: RETRIEVAL)
    relevance: RelevanceSettings = field(default_factory=RelevanceSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    expansion: ExpansionSettings = field(default_factory=ExpansionSettings)
    answer: AnswerSettings = field(default_factory=AnswerSettings)

    def lines(self) -> list[str]:
        """`section.name = value`, one per tunable (what `ask --explain` prints)."""
        return [f"{name} = {value}" for name, value, _, _ in described(self)]

    def table(self) -> str:
        """The settings as a Markdown table (name, default, what it is, how it was chosen)."""
        takes = {f"{part.name}.{item.name}": allowed(section, item.name).text(getattr(section, item.name))
                 for part in fields(self) for section in [getattr(self, part.name)] for item in fields(section)}
        rows = ["| setting | default | takes | what it is | how it was chosen |", "|---|---|---|---|---|"]
        rows += [f"| `{name}` | {value} | {takes[name]} | {what} | {chosen} |"
                 for name, value, what, chosen in described(self)]
        return "\n".join(rows)


    def but(self, **sections) -> "AskSettings":
        return replace(self, **sections)

    def with_values(self, assignments: dict[str, object]) -> "AskSettings":
        """A copy with `section.field` values replaced, each converted to the field's type and
        checked against the values it takes (`allowed`); raises SettingsError naming the key for an
        unknown key, a value of the wrong type or one out of its range."""
        result = self
        for key, raw in assignments.items():
            section_name, _, name = key.partition(".")
            section = getattr(result, section_name, None) if not section_name.startswith("_") else None
            if not is_dataclass(section) or not name or name not in {f.name for f in fields(section)}:
                raise SettingsError(f"unknown setting {_short(key)} (see `longqa ask --explain` for the names)")
            value = _typed(key, getattr(section, name), raw)
            wanted = allowed(section, name).problem(value)
            if wanted:
                raise SettingsError(f"setting {key!r} takes {wanted}, not {_short(raw)}")
            result = replace(result, **{section_name: replace(section, **{name: value})})
        return result


class SettingsError(ValueError):
    """A setting named or typed wrongly (the CLI exits 2 with this one line)."""


def allowed(section: object, name: str) -> Allowed:
    """The values the field `name` of a settings section takes."""
    if isinstance(section, RetrievalSettings):
        return RETRIEVAL_ALLOWED.get(name, Allowed())
    return next(f.metadata.get("allowed", Allowed()) for f in fields(section) if f.name == name)


def _short(value: object) -> str:
    """A value as an error shows it: its repr, cut to one short line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _typed(key: str, current: object, raw: object) -> object:
    """`raw` (a string from the command line, or a TOML value) as the type of `current`."""
    kind = type(current)
    try:
        if isinstance(raw, kind) and not (kind is int and isinstance(raw, bool)):
            return raw
        if kind is bool:
            text = str(raw).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise ValueError(raw)
        if kind is tuple:
            items = raw if isinstance(raw, (list, tuple)) else str(raw).strip("()[] ").split(",")
            if len(items) != len(current) or any(isinstance(v, (bool, list, tuple, dict)) for v in items):
                raise ValueError(raw)
            return tuple(type(c)(str(v).strip()) for c, v in zip(current, items))
        if kind is float and isinstance(raw, int) and not isinstance(raw, bool):
            return float(raw)
        if kind in (int, float, str) and isinstance(raw, str):
            return kind(raw)
    except (TypeError, ValueError):
        pass
    shown = f"{len(current)} comma-separated numbers" if kind is tuple else kind.__name__
    raise SettingsError(f"setting {key!r} takes {shown}, not {_short(raw)}")


def flatten(table: dict, prefix: str = "") -> dict[str, object]:
    """A TOML document's nested tables as `section.field` keys (`[answer]` / `quote_sentences = 5`).
    Walked without recursion: a file of thousands of nested tables is refused as unknown keys,
    not a crash."""
    flat: dict[str, object] = {}
    pending = [(prefix, table)]
    while pending:
        at, items = pending.pop()
        for key, value in items.items():
            if isinstance(value, dict):
                pending.append((f"{at}{key}.", value))
            else:
                flat[at + key] = value
    return flat


DEFAULTS = AskSettings()

# The settings of the question being asked. The Pipeline sets them for the length of each call
# (`applied`), and every step reads `in_effect()` when it runs, never a copy taken at import: so
# two pipelines with different settings, or `--set answer.quote_sentences=5`, change what runs.
_IN_EFFECT: ContextVar[AskSettings] = ContextVar("longqa_ask_settings", default=DEFAULTS)


def in_effect() -> AskSettings:
    return _IN_EFFECT.get()


@contextmanager
def applied(settings: AskSettings) -> Iterator[AskSettings]:
    token = _IN_EFFECT.set(settings)
    try:
        yield settings
    finally:
        _IN_EFFECT.reset(token)


if __name__ == "__main__":  # docs/settings.md, written from a module above this one and the answer ranker
    from longqa.ask.settings_doc import document

    print(document(), end="")
