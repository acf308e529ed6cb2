"""The adapter between the harness and the rest of longqa: model loading and the ask pipeline.

This is the one file to change when the pipeline's or the model loaders' API changes. Everything
else in longqa.eval sees only `Resources` (lazily loaded, counted models) and the systems: each has a
`name`, `prepare(workspace)` (once per dataset) and `retrieve(question, docs)` → `Retrieved`.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from longqa.ask.answer.citations import strip_markers
from longqa.ask.settings import MAX_STEPS
from longqa.errors import LongqaError
from longqa.eval.baselines import FULL_CONTEXT_CAP, Bm25Chunks, DenseChunks, FullContext, HybridChunks, NoContext
from longqa.eval.retrieved import Passage, Retrieved
from longqa.models.counting import CountingEmbedder, CountingGenerator, Usage
from longqa.models.lazy import LazyModel

# name → keyword arguments of the pipeline (everything else at its defaults)
LONGQA_VARIANTS: dict[str, dict] = {
    "longqa": {},
    "longqa-no-analysis": {"use_analysis": False},
    "longqa-flat": {"use_tree": False},
    "longqa-no-expansion": {"use_expansion": False},
    "longqa-bm25": {"retrieval": "bm25"},
    "longqa-dense": {"retrieval": "dense"},
    "longqa-no-loop": {"use_loop": False},  # LongRefiner's greedy selection, no search loop
    "longqa-no-whole-doc": {"whole_documents": False},  # only first-stage hits get a local score
    "longqa-no-precise": {"precise_mode": False},  # no coarser retry when evidence is missing
    "longqa-learned-leaves": {"learned_leaves": True},  # leaves in the learned ranker's order
    "longqa-learned-excerpt": {"learned_excerpt": True},  # a tight budget's sentences by the learned ranker
    "longqa-learned": {"learned_leaves": True, "learned_excerpt": True},  # both
    "longqa-router": {"router": "on"},  # RDR2's router asked every step, whatever its measured skill
    # GARLIC/PECAN: documents ingested with --graph (attention edges), asked with --search graph
    "longqa-graph": {"search": "graph"},
    "longqa-graph-cosine": {"search": "graph"},  # the same, edges from embedding cosine (as for a server)
}
# How the graph variants build their graphs' edges (GraphSettings.edges).
GRAPH_EDGES = {"longqa-graph": "attention", "longqa-graph-cosine": "cosine"}
BASELINES = ("bm25-chunks", "dense-chunks", "hybrid-chunks", "full-context", "no-context")
ALL_SYSTEMS = tuple(LONGQA_VARIANTS) + BASELINES
DEFAULT_SYSTEMS = ("longqa", "bm25-chunks", "dense-chunks", "full-context", "no-context")


@dataclass
class Resources:
    """Models shared by every system of a run, loaded on first use and wrapped for counting."""

    model: str | None = None
    embed_model: str | None = None
    llm_url: str | None = None
    usage: Usage = field(default_factory=Usage)
    load_seconds: dict[str, float] = field(default_factory=dict)
    _generator: CountingGenerator | None = None
    _embedder: CountingEmbedder | None = None
    _given: bool = False  # the generator came from the caller (Resources.of): it structures too

    @classmethod
    def of(cls, generator=None, embedder=None) -> "Resources":
        """Resources around models already loaded (an API caller's, or a test's)."""
        resources = cls()
        resources._given = generator is not None
        if generator is not None:
            resources._generator = CountingGenerator(generator, resources.usage)
        if embedder is not None:
            resources._embedder = CountingEmbedder(embedder, resources.usage)
        return resources

    def generator(self) -> CountingGenerator:
        if self._generator is None:
            from longqa.models.resolve import load_generator

            model = LazyModel(lambda: load_generator(self.model, self.llm_url))
            self._generator = CountingGenerator(model.loaded, self.usage)
            self.load_seconds["generator"] = round(model.load_seconds, 3)
        return self._generator

    def structurer(self):
        """The generator that divides documents without headings at ingest: the structurer profile
        (models/profiles.py), the run's own generator where it is that profile or was given."""
        from longqa.models.profiles import STRUCTURER
        from longqa.models.resolve import chosen_model, generator_profile, load_generator

        if self._given or generator_profile(chosen_model(self.model)) is STRUCTURER:
            return self.generator()
        return load_generator(STRUCTURER.name)

    def embedder(self) -> CountingEmbedder:
        if self._embedder is None:
            from longqa.models.resolve import load_embedder

            model = LazyModel(lambda: load_embedder(self.embed_model))
            self._embedder = CountingEmbedder(model.loaded, self.usage)
            self.load_seconds["embedder"] = round(model.load_seconds, 3)
        return self._embedder

    def describe(self) -> dict:
        """Model identities for the report (only those actually loaded)."""
        info = {"generator": None, "embedder": None, "load_seconds": dict(self.load_seconds)}
        if self._generator is not None:
            info["generator"] = {"name": self._generator.name, "n_ctx": self._generator.n_ctx}
        if self._embedder is not None:
            info["embedder"] = {"name": self._embedder.name, "dim": self._embedder.dim}
        return info


class LongqaSystem:
    """longqa through the ask pipeline itself: its retrieval (analysis, tree refinement, expansion)
    and, when the run generates, its own answer stage (focused sentences, grounded span choice) —
    the code `longqa ask` runs. The baselines are answered by the harness's plain reader prompt."""

    needs = {"store"}

    def __init__(self, name: str, resources: Resources, budget: int, max_steps: int, options: dict,
                 settings=None):
        from dataclasses import fields

        from longqa.ask.pipeline import Pipeline
        from longqa.ask.settings import SearchSettings

        known = set(inspect.signature(Pipeline).parameters) | {f.name for f in fields(SearchSettings)}
        unknown = sorted(set(options) - known)
        if unknown:  # fail before any work, not once per question inside the run
            raise LongqaError(f"system {name}: unknown pipeline option(s) {', '.join(unknown)}")
        self.name = name
        self.resources = resources
        self.budget = budget
        self.max_steps = max_steps
        self.options = options
        self.settings = settings  # the run's AskSettings (`eval --set`), None for the defaults
        self.workspace = None
        self.pipeline = None
        self._built_at: int | None = None

    def prepare(self, workspace) -> None:
        self.workspace = workspace
        self.pipeline, self._built_at = None, None

    def _pipeline(self):
        """The pipeline over the store as it is now: it reads which vectors exist when built, so
        it is rebuilt whenever documents were added since (the single protocol adds as it goes)."""
        if self.pipeline is None or self._built_at != self.workspace.version:
            from longqa.ask.pipeline import Pipeline

            # Ordinary keyword arguments: a misspelt or renamed ablation option is a TypeError,
            # never silently the full pipeline.
            self.pipeline = Pipeline(self.workspace.store(), self.resources.generator(), self.resources.embedder(),
                                     budget=self.budget, max_steps=self.max_steps, settings=self.settings,
                                     **self.options)
            self._built_at = self.workspace.version
        return self.pipeline

    def _scope(self, docs: list[str]) -> list[int] | None:
        ids = self.workspace.doc_ids(docs)
        if self.options.get("search") == "graph":
            self._ensure_graphs(ids)
        return None if self.workspace.is_whole_store(ids) else ids

    def _ensure_graphs(self, doc_ids: list[int]) -> None:
        """`ingest --graph` for the question's documents (a current graph is kept); the seconds
        spent are added to the workspace's ingest cost."""
        from longqa.graph.build import GraphBuilder
        from longqa.graph.settings import DEFAULT as GRAPH_DEFAULT

        edges = GRAPH_EDGES.get(self.name, "attention")
        local = None if self.resources.llm_url or edges == "cosine" else (lambda: self.resources.generator().inner)
        builder = GraphBuilder(self.workspace.store(), self.resources.embedder(), local,  # server: cosine edges
                               settings=replace(GRAPH_DEFAULT, edges=edges))
        started = time.perf_counter()
        try:
            for doc_id in doc_ids:
                builder.build(doc_id)
        finally:
            builder.close()
            self.workspace.ingest_seconds += time.perf_counter() - started

    def retrieve(self, question, docs: list[str]) -> Retrieved:
        result = self._pipeline().retrieve_context(question.question, doc_ids=self._scope(docs))
        return to_retrieved(result, self.workspace)

    def answer(self, question, docs: list[str]) -> tuple[Retrieved, str]:
        """Context and answer from `ask`'s own answer stage; citation markers are left out of the
        answer text that is scored."""
        result = self._pipeline().answer(question.question, doc_ids=self._scope(docs))
        text = strip_markers(result.answer or "")
        retrieved = to_retrieved(result.refined, self.workspace)
        grounding = result.grounding
        retrieved.declined = not result.found
        if grounding is not None:
            retrieved.mode, retrieved.signals = grounding.mode, dict(grounding.signals)
            retrieved.declined_mode = grounding.answered_as
        if grounding is not None and grounding.confidence is not None:
            retrieved.confidence, retrieved.unsure = grounding.confidence, grounding.unsure
            retrieved.alternatives = [c.text for c in grounding.alternatives]
        return retrieved, text



def _get(item, *names, default=None):
    for name in names:
        if isinstance(item, dict) and name in item:
            return item[name]
        if not isinstance(item, dict) and hasattr(item, name):
            return getattr(item, name)
    return default


def to_retrieved(result, workspace) -> Retrieved:
    """Read the pipeline's context (an object or a dict; a list of passages or of nodes) into
    Passages with their document paths, found through the node ids in the store."""
    items = result if isinstance(result, list) else _get(result, "passages", "nodes", default=None)
    if items is None and isinstance(_get(result, "context"), list):  # the JSON form
        items = _get(result, "context")
    items = items or []
    timings = _get(result, "timings", default={}) if not isinstance(result, list) else {}
    node_ids = [_get(item, "node_id", "id") for item in items]
    doc_of = workspace.docs_of_nodes([n for n in node_ids if n is not None])
    passages = []
    for item, node_id in zip(items, node_ids):
        node = _get(item, "node")  # the selected node itself, when the passage carries it
        source = item if _get(item, "text") or node is None else node
        passages.append(
            Passage(
                text=_get(source, "text", default="") or "",
                doc=_resolved(_get(item, "doc_path", default=None)) or doc_of.get(node_id, ""),
                title=str(_get(item, "doc", "title", default="") or ""),
                label=str(_get(item, "label", "section", "path", default="") or ""),
                page_start=_get(source, "page_start"),
                page_end=_get(source, "page_end"),
                score=_get(item, "score"),
            )
        )
    stages = {k: float(v) for k, v in (timings or {}).items() if isinstance(v, (int, float))}
    notes = list(_get(result, "notes", default=[]) or []) if not isinstance(result, list) else []
    if not isinstance(result, list) and _get(result, "found") is False:
        notes.insert(0, "no evidence found")
    steps = _get(result, "steps", default=None) if not isinstance(result, list) else None
    if steps:
        stages["steps"] = float(len(steps))
    return Retrieved(passages=passages, stages=stages, note="; ".join(notes))


def make_ingestor(db, resources: Resources, structure: str, max_leaf_tokens: int):
    """An Ingestor set up as `longqa ingest` sets one up (ingest.configured_ingestor), with the
    structurer profile dividing documents without headings whatever generator answers: a run's
    stores are shared by every model compared (their key names no model), so each model is
    measured on the same trees. A server run (--llm-url) structures with its server, as before."""
    from longqa.ingest import configured_ingestor

    structurer = resources.generator if resources.llm_url else resources.structurer
    return configured_ingestor(db, structurer, resources.embedder(), structure=structure,
                               max_leaf_tokens=max_leaf_tokens)


def _resolved(path) -> str:
    return str(Path(path).resolve()) if path else ""


def make_system(name: str, resources: Resources, budget: int, max_steps: int = MAX_STEPS,
                full_context_cap: int = FULL_CONTEXT_CAP, settings=None):
    """One system of the run; `settings` (an AskSettings) applies to longqa and its ablations."""
    if name in LONGQA_VARIANTS:
        return LongqaSystem(name, resources, budget, max_steps, LONGQA_VARIANTS[name], settings)
    if name == "bm25-chunks":
        return Bm25Chunks(budget)
    if name == "dense-chunks":
        return DenseChunks(budget, resources.embedder)
    if name == "hybrid-chunks":
        return HybridChunks(budget, resources.embedder)
    if name == "full-context":
        return FullContext(full_context_cap)
    if name == "no-context":
        return NoContext()
    raise LongqaError(f"unknown system {name!r} (choose from {', '.join(ALL_SYSTEMS)})")
