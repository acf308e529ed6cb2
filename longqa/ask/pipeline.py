"""`ask` end to end: rules → retrieve → relevant? → analyse → search the trees → answer.

The Pipeline is the Python API the CLI and the evaluation harness share:

    pipeline = Pipeline(db, generator, embedder, budget=BUDGET_TOKENS, max_steps=MAX_STEPS)
    refined = pipeline.retrieve_context(question, doc_ids=None)  # Refined: passages, no answer
    result = pipeline.answer(question)                           # AskResult: answer + citations
    stream = pipeline.stream(question)                           # iterate pieces; then .result

`refined.found` is False when the store holds nothing relevant (the CLI exits 4); `as_json()`
on either result gives the `ask --json` document. The switches are the ablations: use_analysis
(query analysis), use_tree (tree propagation + outline selection versus flat leaves),
use_expansion (sub-questions and bridge hops), retrieval ("hybrid" | "bm25" | "dense"); the
search's tunables (ask/settings.py) come as `settings=` or as single keyword overrides
(use_loop=False, whole_documents=False, precise_mode=False, confidence=..., max_nodes=...).
"""

from __future__ import annotations

import time
from typing import Iterator

import sqlite_utils

from longqa.ask.analysis import analyze as analysis_mod
from longqa.ask.search import relevance as evidence_mod
from longqa.ask import excerpt
from longqa.ask.answer import hops
from longqa.ask import prompts
from longqa.ask.answer.stage import answer_settings, plan_answer, run_answer
from longqa.ask.analysis.asked import read as read_asked
from longqa.ask.context import build_passages
from longqa.ask.search.plan import Planner, SearchContext
from longqa.ask.search.steps import add_step
from longqa.ask.result import AnswerStream, AskResult, Refined
from longqa.ask.settings import BUDGET_TOKENS, DEFAULTS, MAX_STEPS, AskSettings, SearchSettings, applied
from longqa.models import profiles, skill
from longqa.models.base import KEEPS_PREFIX, Embedder, Generator, supports
from longqa.retrieve.hybrid import HybridRetriever
from longqa.store import snapshot


class Pipeline:
    def __init__(
        self,
        db: sqlite_utils.Database,
        generator: Generator | None = None,
        embedder: Embedder | None = None,
        *,
        budget: int = BUDGET_TOKENS,
        max_steps: int = MAX_STEPS,
        use_analysis: bool = True,
        use_tree: bool = True,
        use_expansion: bool = True,
        retrieval: str = "hybrid",
        k: int | None = None,
        coverage_min: float | None = None,
        cosine_min: float | None = None,
        settings: SearchSettings | AskSettings | None = None,
        on_relevant=None,
        **overrides,
    ):
        if budget < 1:
            raise ValueError("budget must be at least 1 token")
        self.db = db
        self.generator = generator
        # Every tunable (ask/settings.py), applied for the length of each call: `settings` is the
        # whole AskSettings (or only its search section); keyword overrides such as
        # whole_documents=False or confidence=0.9 replace single search fields (the eval ablations).
        whole = settings if isinstance(settings, AskSettings) else DEFAULTS.but(search=settings or DEFAULTS.search)
        relevance = whole.relevance.but(**{name: value for name, value in
                                           (("coverage_min", coverage_min), ("cosine_min", cosine_min))
                                           if value is not None})
        self.ask_settings = whole.but(search=whole.search.but(**overrides), relevance=relevance)
        self.settings = self.ask_settings.search
        self.budget, self.max_steps = budget, max(0, max_steps)
        self.use_analysis, self.use_tree, self.use_expansion = use_analysis, use_tree, use_expansion
        # "Nothing relevant" thresholds; the cosine one is calibrated for all-MiniLM-L6-v2.
        self.coverage_min, self.cosine_min = relevance.coverage_min, relevance.cosine_min
        # The retriever reads the call's retrieval section (--set retrieval.*), `k` winning over it.
        self.retriever = HybridRetriever(db, embedder if retrieval != "bm25" else None, retrieval, k,
                                         settings=whole.retrieval)
        self._heads_kept = False
        # Called once retrieval has found relevant passages, before any model call (the CLI starts
        # loading the generator there, so an answer need not wait for the whole load).
        self.on_relevant = on_relevant

    def _keep_heads(self) -> None:
        """Once the generator is needed: a local backend keeps the fixed prompt heads' KV state,
        so each question reads only its own part of the analysis and answer prompts."""
        if self._heads_kept or self.generator is None:
            return
        self._heads_kept = True
        # A reader's head is its chat template's system turn, kept when its prompt is built
        # (stage.reader_prompt): reading the template here would load the model for --context-only.
        if not supports(self.generator, KEEPS_PREFIX) or profiles.is_reader(self.generator):
            return
        for head in prompts.KEPT_HEADS:
            self.generator.keep_prefix(head)

    def settings_in_effect(self) -> AskSettings:
        """Every tunable as this pipeline runs it (ask/settings.py; printed by `ask --explain`)."""
        return self.ask_settings.but(retrieval=self.retriever.settings.but(k=self.retriever.k))

    # -- context only ------------------------------------------------------------------------
    def retrieve_context(self, question: str, doc_ids: list[int] | None = None) -> Refined:
        """The refined, cited context for `question` (no answer is generated)."""
        # One read transaction from retrieval to the context: a document removed or replaced by
        # another process meanwhile is read as it was, never half (store.snapshot).
        with applied(self.ask_settings), snapshot(self.db):
            return self._retrieve_context(question, doc_ids)

    def _retrieve_context(self, question: str, doc_ids: list[int] | None) -> Refined:
        question = " ".join(question.split())
        timings: dict[str, float] = {}
        started = time.perf_counter()
        # Rules fix the fusion pattern, so retrieval and the "nothing relevant" decision run
        # before any model call: a question about something absent never waits for the model.
        analysis = (analysis_mod.from_rules(question) if self.use_analysis
                    else analysis_mod.without_model(question))
        tick = time.perf_counter()
        first = self.retriever.retrieve(question, analysis.pattern, doc_ids)
        timings["retrieval"] = time.perf_counter() - tick
        tick = time.perf_counter()
        found = evidence_mod.check(self.db, question, first.max_cosine, doc_ids, self.coverage_min, self.cosine_min,
                                   unseen_by_dense=self.retriever.unseen_by_dense(first))
        timings["evidence"] = time.perf_counter() - tick
        refined = Refined(question, analysis, found, budget=self.budget,
                          fused={c.node_id: c for c in first.candidates})
        if self.retriever.dense_note and self.retriever.mode != "bm25":
            refined.notes.append(f"dense retrieval off: {self.retriever.dense_note}")
        refined.notes.extend(self.retriever.notes)
        if not found.found or not first.candidates:
            refined.timings = {**timings, "context": time.perf_counter() - started}
            return refined
        if self.on_relevant is not None:
            self.on_relevant()
        self._keep_heads()
        if (unmeasured := skill.unmeasured_note(self.generator)) is not None:
            refined.explained.append(unmeasured)
        refined.explained.extend(skill.explained(self.generator))
        if self.use_analysis and self.generator is not None:
            analysis_mod.with_model(analysis, question, self.generator)
        timings["analysis"] = analysis.seconds

        context = SearchContext(self.db, self.retriever, self.generator, self.settings, self.use_tree,
                                self.use_expansion, self.max_steps)
        planner = Planner(context, question, analysis, doc_ids, first, refined)
        pool = excerpt.search_budget(self.budget, self.settings)
        selection, documents = planner.run(timings, pool)
        tick = time.perf_counter()
        refined.passages = build_passages(selection, documents, pool)
        refined.leaf_scores = {node_id: scored.score for node_id, scored in selection.scores.items()}
        if pool > self.budget:  # a tight budget: the best sentences of the larger search
            self._excerpt(refined, pool)
        refined.budget = self.budget
        timings["passages"] = time.perf_counter() - tick
        timings["context"] = time.perf_counter() - started
        refined.timings = timings
        return refined

    def _excerpt(self, refined: Refined, pool: int) -> None:
        """Cut the `pool`-token context to its best sentences under the budget (ask/excerpt.py)."""
        question, analysis, dense = refined.question, refined.analysis, self.retriever.uses_dense
        asked = analysis.asked or read_asked(question)
        long_form = answer_settings(analysis.type, analysis.scope, asked.want)[0]
        refined.passages = excerpt.excerpt(
            asked, refined.passages, self.budget, self.settings, leaf_scores=refined.leaf_scores,
            embedder=self.retriever.embedder if dense else None,
            query_vector=self.retriever.embed(question) if dense else None,
            spread=analysis.type == "multi-source" or long_form, queries=excerpt.search_queries(refined.steps),
            second_hop=hops.applies(asked, analysis.type, long_form))
        add_step(refined.steps, "excerpt", searched_tokens=pool, tokens=refined.context_tokens)

    # -- answers -----------------------------------------------------------------------------
    def stream(self, question: str, doc_ids: list[int] | None = None, on_draft=None) -> AnswerStream:
        """Context first (blocking), then an iterator over the answer's pieces as generated. A
        reader's reply goes to `on_draft` piece by piece while it is written, before it is proven
        (timings: first_draft)."""
        with applied(self.ask_settings):
            return self._stream(question, doc_ids, on_draft)

    def _stream(self, question: str, doc_ids: list[int] | None, on_draft=None) -> AnswerStream:
        started = time.perf_counter()
        refined = self.retrieve_context(question, doc_ids)
        if not refined.found or self.generator is None:
            return AnswerStream(refined, iter(()), lambda text: self._finish(refined, None, started, None, []))
        tick = time.perf_counter()
        dense = self.retriever.uses_dense
        asked = refined.analysis.asked or read_asked(refined.question)
        plan = plan_answer(asked, refined.passages, refined.analysis.type, refined.analysis.scope,
                           self.retriever.embedder if dense else None,
                           self.retriever.embed(refined.question) if dense else None, self.generator)
        refined.timings["focus"] = time.perf_counter() - tick
        plan.bridges = [step.details["entity"] for step in refined.steps
                        if step.action == "bridge" and step.details.get("entity")] + plan.bridges
        first_token: list[float] = []
        grounding: list = []

        def drafted(piece: str) -> None:
            refined.timings.setdefault("first_draft", time.perf_counter() - started)
            if on_draft is not None:
                on_draft(piece)

        def pieces() -> Iterator[str]:
            tick = time.perf_counter()
            with applied(self.ask_settings):  # the pieces are generated after stream() returned
                for piece in run_answer(self.generator, asked, plan, grounding, drafted):
                    if not first_token:
                        first_token.append(time.perf_counter() - started)
                        refined.timings["to_first_piece"] = time.perf_counter() - tick
                    yield piece
            refined.timings["generation"] = time.perf_counter() - tick

        refined.answer_prompt = plan.prompt
        return AnswerStream(refined, pieces(),
                            lambda text: self._finish(refined, text, started, first_token, grounding))

    def answer(self, question: str, doc_ids: list[int] | None = None) -> AskResult:
        """The whole answer at once (same text as `stream`, at temperature 0)."""
        stream = self.stream(question, doc_ids)
        for _ in stream:
            pass
        assert stream.result is not None
        return stream.result

    def _finish(self, refined: Refined, text: str | None, started: float, first_token, grounding) -> AskResult:
        if first_token:
            refined.timings["first_token"] = first_token[0]
        refined.timings["total"] = time.perf_counter() - started
        if text is None:
            return AskResult(refined, None)
        # settled again here, outside the call's settings: the threshold the answer stage settled
        # it at stands (outcome.threshold)
        return AskResult(refined, text.strip(), grounding[0] if grounding else None)
