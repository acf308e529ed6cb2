"""Every tunable of the ask pipeline, with what it is, its default and how it was chosen.

`AskSettings` gathers five sections, printed by `longqa ask --explain` (one `name = value` line
each) and listed in the README:
- retrieval: first-stage BM25 + dense retrieval and fusion (retrieve/settings.py, which sits below
  ask/ in the import graph);
- relevance: the "nothing relevant" decision (ask/evidence.py);
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

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Iterator

from longqa.retrieve.settings import RETRIEVAL, RetrievalSettings
from longqa.tunables import described, tunable

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
    """Is anything in the store relevant at all (else `ask` exits 4)? Calibration in ask/evidence.py."""

    coverage_min: float = tunable(
        0.8, "IDF-weighted share of the question's words found in the store that alone says 'relevant'",
        "eval/relevance-gate-tune.json (bench/relevance.py: tune-half stores + 20 handbook questions in users' "
        "words): with cosine_min it refuses 2 of 170 answerable and lets 44 of 151 foreign through; "
        "0.6 / 0.35 would refuse 2 and let 80 through")
    cosine_min: float = tunable(
        0.42, "best question–leaf cosine that alone says 'relevant' (all-MiniLM-L6-v2's scale)",
        "same calibration as coverage_min; another embedder's cosines sit on another scale")
    coverage_only_min: float = tunable(
        0.5, "the coverage that suffices when the store has no vectors (BM25 only)",
        "by hand: the committed calibration's stores all have vectors, so it does not measure this case")

    def but(self, **changes) -> "RelevanceSettings":
        return replace(self, **changes)


@dataclass(frozen=True)
class SearchSettings:
    # -- which documents are refined (retrieve/docscore.py) ------------------------------------
    doc_relative: float = tunable(
        0.5, "a document is a refinement candidate when its best leaf scores at least this × the best "
        "document's", TUNE, unlearned=SEQUENCE)
    max_docs: int = tunable(8, "most candidate documents refined per question", "LongRefiner refines the top 8", unlearned=CAP)
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
        "are scaled by this unless the question asks about sources (ask/back_matter.py; 1: off)", SPOT, unlearned=LEAVES)
    fill_floor: float = tunable(
        0.1, "nodes scoring under this × the best are never chosen, not even to fill the budget", SPOT, unlearned=SEQUENCE)
    fill_run_weight: float = tunable(
        0.8, "when the rest of the budget is filled, the next two leaves of each search pick's section score "
        "at least this × and this² × the pick's score (the two before it also × previous_weight / "
        "neighbour_weight), so a passage running over several leaves stays contiguous (0: off)", "tune-half eval runs: 0.7, 0.8 and 0.9 alike; 0 lost FinanceBench "
        "evidence (0.33 against 0.44-0.56 on 9 questions)", unlearned=SEQUENCE)
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
        SPOT, unlearned=SEQUENCE)

    excerpt_below: int = tunable(
        1000, "below this context budget the search fills `excerpt_pool` tokens and the context keeps the "
        "best sentences of it under the budget (ask/excerpt.py; 0: off)",
        "tune half: at 500 tokens 0.356 → 0.500 answers in context; at 2,000 (from 4,000) answers 0.596 → "
        "0.606 but evidence 0.864 → 0.841, so whole paragraphs stay from 1,000 up", unlearned=CAP)
    excerpt_pool: int = tunable(
        2000, "how many tokens the search fills when the context will be cut to its best sentences",
        "tune half at 500 tokens: 2,000 → 0.500, 3,000 → 0.490", unlearned=CAP)
    excerpt_whole_share: float = tunable(
        0.0, "when the context is cut to sentences, the search's best passages are first kept whole while they "
        "fit in this share of the budget (0: every passage is cut to its best sentences)",
        "tune half at 500 tokens, before the second hop: 0 → 0.423, 0.5 → 0.413", unlearned=SEQUENCE)
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
        0.75, "the evidence suffices when the combined sufficiency reaches this (PECAN's t_p)", TUNE, unlearned=SEQUENCE)
    patience: int = tunable(1, "stop after this many steps judged sufficient (PECAN's t_n)", TUNE, unlearned=SEQUENCE)
    max_nodes: int = tunable(8, "cap on node-adding steps", TUNE, unlearned=CAP)
    max_seconds: float = tunable(10.0, "safety cap on seconds spent in the loop (model probes included), for "
                                 "slow servers; with the default models the step caps end the loop first",
                                 "results must not depend on machine load: at 1.2 s the cap cut 16 of 150 "
                                 "report questions' searches under load 2 (99th percentile 4.3 s)", unlearned=CAP)
    seed_leaves: int = tunable(8, "the best leaves that start the frontier", TUNE, unlearned=SEQUENCE)
    neighbour_weight: float = tunable(
        0.7, "the next leaf of a selected leaf enters the frontier with this × its priority (text "
        "announces what follows it: a table after its lead-in)", "GARLIC's successor score; " + TUNE, unlearned=SEQUENCE)
    previous_weight: float = tunable(0.6, "the previous leaf of a selected leaf enters with this × its priority",
                                     "GARLIC's successor score; " + TUNE, unlearned=SEQUENCE)
    parent_weight: float = tunable(0.5, "a selected leaf's parent section enters with this × its priority",
                                   "GARLIC's successor score; " + TUNE, unlearned=SEQUENCE)
    probe_tokens: int = tunable(
        80, "each selected node is shown to the sufficiency probe cut to this many tokens (one "
        "KV-cached prefix per question)", "latency: a step costs only the new node's tokens", unlearned=CAP)
    max_hops: int = tunable(2, "most bridge hops (a new query with an entity read from the evidence)", TUNE, unlearned=CAP)
    hop_after: int = tunable(
        3, "picks the first hop waits for (the best leaf alone is often a near miss)", TUNE, unlearned=SEQUENCE)
    parent_gather: float = tunable(
        0.33, "when the rest of a selected leaf's parent fits in this share of the budget, the parent enters "
        "with parent_weight × the leaf's priority × the number of its children already selected: a small "
        "section whose leaves keep being chosen comes in whole (0: off)",
        "tune half unchanged (120 questions at 2,000 and 500 tokens, FinanceBench; F1 0.475 -> 0.474); "
        "the share set by hand, not swept: a statement page is about 600 tokens, and a report-half answer "
        "showed a whole 1,200-token note crowding a table out", unlearned=SEQUENCE)
    bridge_weight: float = tunable(1.0, "a bridge hit enters the frontier with its fused score × this", TUNE, unlearned=SEQUENCE)
    precise_mode: bool = tunable(
        True, "when the loop ends judged insufficient but retrieval found relevant material, retry "
        "once with the best whole sections", "OkraLong's precise mode", unlearned=SWITCH)
    precise_margin: float = tunable(
        0.05, "the whole sections are kept only when the sufficiency check rises by this much", TUNE, unlearned=SEQUENCE)
    shape_missing: float = tunable(
        0.5, "the coverage rule is multiplied by this while no figure, date or name of the asked kind "
        "is among the picks", SPOT, unlearned=SEQUENCE)

    search: str = tunable(
        "tree", "which search: tree (this loop over the document trees), graph (GARLIC's best-first search "
        "over the information-point graph of `ingest --graph`, ask/graph_search.py; a document without a "
        "current graph falls back to tree) or auto (graph when every candidate document has a current "
        "graph, else tree)", "the user's choice (--search)", unlearned=SWITCH)
    graph_max_nodes: int = tunable(
        16, "cap on the graph search's node-adding steps (points are one sentence each, so it takes more "
        "steps than the tree search)", SPOT, unlearned=CAP)
    graph_seed_share: float = tunable(
        0.75, "the graph search first visits the retrieval's best leaves (BM25 + cosine over the whole "
        "document, the tree search's seeds), best first, while they fit in this share of the budget; the "
        "graph leads the rest", TUNE, unlearned=SEQUENCE)

    # -- RDR2's router (ask/router.py) -----------------------------------------------------------
    router: str = tunable(
        "auto", "RDR2's ANSWER / EXPAND / REFUSE move each step: auto = only when the model's measured "
        "router skill is above chance (gemma-3-270m's is not: no latency added), on = always, off = never",
        "bench/decisions.py --decisions router, tune half", unlearned=SWITCH)
    router_tokens: int = tunable(600, "the serialised subtree shown to the router is cut to this many tokens",
                                 "latency: ~170 tokens of worked example come on top", unlearned=CAP)
    router_frontier: int = tunable(8, "frontier nodes shown to the router, best first", SPOT, unlearned=CAP)
    router_hidden_words: int = tunable(10, "words shown of a leaf not opened yet (then '…'); headings in full", SPOT, unlearned=CAP)
    router_open_words: int = tunable(40, "words shown of an opened (selected) leaf", SPOT, unlearned=CAP)
    router_max_answer: int = tunable(4, "most ids an ANSWER move may list", SPOT, unlearned=CAP)

    def but(self, **changes) -> "SearchSettings":
        return replace(self, **changes)


@dataclass(frozen=True)
class ExpansionSettings:
    """The outline choice and the queries the search's steps generate."""

    outline_entries: int = tunable(10, "sections shown to the model in the outline prompt", SPOT)
    outline_summary_words: int = tunable(14, "words of a section's summary shown in the outline", SPOT)
    outline_min_weight: float = tunable(
        0.05, "a section's outline weight must reach this to count (measured at chance: the call is skipped)", SPOT)
    outline_max_chosen: int = tunable(3, "most sections the outline choice weights", SPOT)
    max_query_chars: int = tunable(120, "longest generated next query or sub-question", "one short line")
    max_known_chars: int = tunable(120, "longest generated 'what the context already shows' line", "one short line")
    bridge_question_words: int = tunable(
        4, "question words carried into a bridge query (more make it match the question again)", SPOT)


@dataclass(frozen=True)
class AnswerSettings:
    """The answer stage (ask/answer/)."""

    # -- what is generated (ask/answer/stage.py) ----------------------------------------------------
    short_answer_tokens: int = tunable(120, "token cap of a short (one-line) answer", SPOT)
    long_answer_tokens: int = tunable(256, "token cap of a free-text answer", SPOT)
    long_scope: float = tunable(
        0.6, "R_q from which a question is answered in free text over spread sentences", SPOT)
    short_sentences: int = tunable(1, "sentences kept of a short answer (what a 270M model adds is invention)", SPOT)
    long_sentences: int = tunable(6, "sentences kept of a free-text answer", SPOT)
    free_text: str = tunable(
        "auto", "a broad question's answer: 'generate' (the model's own words, each sentence traced to "
        "a source), 'quote' (the best focused sentences), 'auto' (generate only with a model whose free "
        "text was measured to beat quoting, or was never measured: ask/skill.py)", TUNE)
    quote_sentences: int = tunable(3, "sentences quoted as a broad question's answer", TUNE)
    summary_diversity: float = tunable(
        0.3, "a summary's points (ask/answer/summary.py): weight of overlap with the points already chosen "
        "against relevance and centrality (Maximal Marginal Relevance)",
        "not tuned: the dev questions carry no summary labels; a common MMR setting")
    # -- sentence focus (ask/focus.py) ------------------------------------------------------------
    focus_tokens: int = tunable(
        260, "tokens of best sentences shown for extractive, arithmetic and bridge questions",
        "first-token latency: the prompt's reading time scales with it; " + SPOT)
    spread_tokens: int = tunable(700, "tokens of sentences spread over the passages for broad questions", SPOT)
    focus_weights: tuple = tunable(
        (0.5, 0.35, 0.15), "a sentence's score: weights of term coverage, cosine to the question, "
        "its passage's refinement score", SPOT)
    neighbour_share: float = tunable(
        0.3, "a sentence borrows this share of its better neighbour's score (pronouns)", SPOT)
    dense_top: int = tunable(24, "sentences embedded per question", "~0.3 s of MiniLM on 2 cores")
    hop_weight: float = tunable(
        0.6, "a sentence naming the first hop's bridge entity gains this x the best sentence's score (ask/hops.py)",
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
                                  "(bench/answer_ranker.py fit with each size): 8: 0.266, 12: 0.283, 16: 0.276")
    sentence_choices: int = tunable(3, "best sentences the model chooses among when the answer is a sentence", SPOT)
    sentence_tokens: int = tunable(24, "a sentence is scored by the model on at most its first tokens", SPOT)
    w_sentence_model: float = tunable(
        1.0, "weight of the model's probability of copying a sentence against its score / the best's", SPOT)
    candidate_sentences: int = tunable(10, "best focused sentences that candidate spans come from", SPOT)
    max_option_tokens: int = tunable(8, "a candidate is scored by the model on at most its first tokens", SPOT)
    stem_chars: int = tunable(6, "letters compared when a word meets a question word by its stem", SPOT)
    stem_only: float = tunable(0.7, "credit of a word that meets a question word only by its stem", SPOT)
    w_model: float = tunable(1.0, "lettered options: weight of the model's letter probability against the option's "
                             "support in the focused sentences", SPOT)
    verdict_sentences: int = tunable(4, "best focused sentences the yes/no word rule reads", SPOT)
    person_scale: float = tunable(
        0.03, "cosine margin (person centroid against the nearest other kind's) that counts as fully a "
        "person's name; all-MiniLM-L6-v2's margins run from about -0.35 to +0.25", SPOT)
    person_pool: int = tunable(24, "best candidates by prior whose person margin is read (one embedding batch)", SPOT)
    draft_tokens: int = tunable(16, "token cap of the model's draft answer", SPOT)
    draft_tokens_typed: int = tunable(
        6, "... when the rules know the answer kind (enough for 'about 52 hours')", "first-token latency; " + SPOT)
    max_draft_words: int = tunable(12, "a longer draft is not a span to copy", SPOT)
    proximity_chars: int = tunable(150, "characters within which a span counts as near a question word", SPOT)
    min_trace_overlap: float = tunable(
        0.2, "an answer sentence is traced to a source sharing this share of its words", SPOT)
    min_new_words: int = tunable(
        2, "a sentence quoted as the answer says at least this many content words the question does not "
        "(a heading that repeats the question answers nothing)", SPOT)
    max_phrase_words: int = tunable(5, "longest phrase span, in content words", SPOT)
    max_sentence_chars: int = tunable(
        600, "longer runs (tables flattened into one line) are cut at spaces into sentences", SPOT)
    # -- tables (ask/tables.py) and sources (ask/citations.py) ---------------------------------------
    min_label_match: float = tunable(
        0.6, "share of the question's row words that a table row's label must contain", "UDA tune table questions")
    header_lookback: int = tunable(40, "sentences searched backwards for a table's year header", SPOT)
    max_sources: int = tunable(3, "most sources listed under an answer", "what supports a short answer")


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
        rows = ["| setting | default | what it is | how it was chosen |", "|---|---|---|---|"]
        rows += [f"| `{name}` | {value} | {what} | {chosen} |" for name, value, what, chosen in described(self)]
        return "\n".join(rows)


    def but(self, **sections) -> "AskSettings":
        return replace(self, **sections)

    def with_values(self, assignments: dict[str, object]) -> "AskSettings":
        """A copy with `section.field` values replaced, each converted to the field's type; raises
        SettingsError naming the key for an unknown key or a value of the wrong type."""
        result = self
        for key, raw in assignments.items():
            section_name, _, name = key.partition(".")
            section = getattr(result, section_name, None) if not section_name.startswith("_") else None
            if not is_dataclass(section) or not name or name not in {f.name for f in fields(section)}:
                raise SettingsError(f"unknown setting {key!r} (see `longqa ask --explain` for the names)")
            value = _typed(key, getattr(section, name), raw)
            result = replace(result, **{section_name: replace(section, **{name: value})})
        return result


class SettingsError(ValueError):
    """A setting named or typed wrongly (the CLI exits 2 with this one line)."""


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
            values = tuple(type(c)(str(v).strip()) for c, v in zip(current, items))
            if len(values) != len(current) or len(items) != len(current):
                raise ValueError(raw)
            return values
        if kind is float and isinstance(raw, int) and not isinstance(raw, bool):
            return float(raw)
        if kind in (int, float, str) and isinstance(raw, str):
            return kind(raw)
    except (TypeError, ValueError):
        pass
    shown = f"{len(current)} comma-separated numbers" if kind is tuple else kind.__name__
    raise SettingsError(f"setting {key!r} takes {shown}, not {raw!r}")


def flatten(table: dict, prefix: str = "") -> dict[str, object]:
    """A TOML document's nested tables as `section.field` keys (`[answer]` / `quote_sentences = 5`)."""
    flat: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


def document() -> str:
    """docs/settings.md: every setting with its default, what it is and how it was chosen."""
    return ("# Settings\n\n"
            "Every tunable of `longqa ask`, with its default, what it is and how the default was chosen. Set any\n"
            "of them for one call with `--set section.field=value` (repeatable), or in a TOML file passed with\n"
            "`--settings FILE` or named by `$LONGQA_SETTINGS`, one table per section (`[answer]`,\n"
            "`quote_sentences = 5`). `longqa ask --explain` prints the values in effect. This file is generated:\n"
            "`python -m longqa.ask.settings > docs/settings.md`.\n\n" + AskSettings().table() + "\n")


DEFAULTS = AskSettings()
ROUTER_MODES = ("auto", "on", "off")  # SearchSettings.router

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


if __name__ == "__main__":
    print(document(), end="")
