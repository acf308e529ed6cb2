"""Run systems over questions: prepare each dataset once, ask every (system, question) pair not yet
in the results file, score it, append it. Returns the report built from the results file."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from longqa import tokens
from longqa.ask.settings import BUDGET_TOKENS, MAX_STEPS
from longqa.errors import LongqaError
from longqa.eval import answer as answering
from longqa.eval.baselines import FULL_CONTEXT_CAP
from longqa.eval.chunks import CHUNK_TOKENS
from longqa.eval.retrieved import Retrieved
from longqa.eval.data import Question, check_documents, corpus_documents, load_questions, select
from longqa.eval.report import build_report
from longqa.eval.results import ResultsFile, run_key
from longqa.eval.score import answer_measures, confidence_measures, context_measures, question_form
from longqa.eval.workspace import Workspace

PROTOCOLS = ("corpus", "single")
CORPORA = ("selected", "file", "folder")


@dataclass
class EvalSettings:
    systems: list[str]
    protocol: str = "corpus"
    budget: int = BUDGET_TOKENS
    max_steps: int = MAX_STEPS
    generate: bool = True
    full_context_cap: int = FULL_CONTEXT_CAP
    answer_tokens: int = answering.ANSWER_TOKENS
    # Corpus protocol: which documents form a dataset's corpus. selected: those the chosen questions
    # name (with --limit, far cheaper to ingest); file: those all the file's questions name;
    # folder: every document in their folders.
    corpus: str = "selected"
    chunk_tokens: int = CHUNK_TOKENS
    structure: str = "auto"  # ingest structure mode of the longqa stores
    datasets: list[str] | None = None
    limit: int | None = None
    seed: int = 0
    half: str = "all"  # data.HALVES: which half of the questions (tune thresholds, report figures)
    # Each question asked of its dataset's corpus without its own documents: what should be declined
    without_own: bool = False
    # Minutes after which no further question is asked; the report covers those asked and says so
    # (running the same command again resumes). Not part of what changes a result.
    stop_after: float | None = None
    settings: dict = field(default_factory=dict)  # `--set` / `--settings` values that differ from the defaults

    def result_settings(self, questions_path: Path, models: dict) -> dict:
        """What changes a (system, question) result; limit, seed and system choice do not."""
        keep = ["protocol", "budget", "max_steps", "generate", "full_context_cap", "answer_tokens",
                "corpus", "chunk_tokens", "structure"] + (["settings"] if self.settings else []) \
            + (["without_own"] if self.without_own else [])
        if self.corpus == "selected" and self.protocol == "corpus":  # the sample defines the corpus
            keep += ["datasets", "limit", "seed", "half"]
        return {**{k: getattr(self, k) for k in keep}, "questions": str(questions_path.resolve()), **models}


class Progress:
    """What the runner reports while it works; the CLI draws a bar from it."""

    def start(self, total: int) -> None: ...
    def status(self, text: str) -> None: ...
    def advance(self, text: str) -> None: ...
    def warn(self, text: str) -> None: ...


@dataclass
class Runner:
    settings: EvalSettings
    resources: object  # systems.Resources or a test double with generator(), embedder(), usage
    work_dir: Path
    make_system: Callable[[str], object]
    progress: Progress = field(default_factory=Progress)
    model_ids: dict = field(default_factory=dict)  # requested model settings, for the run key
    _deadline: float | None = field(default=None, init=False)  # perf_counter time of --stop-after

    def results_path(self, questions_path: Path) -> Path:
        key = self._key(questions_path)
        return self.work_dir / "runs" / f"{questions_path.stem}-{self.settings.protocol}-{key}.jsonl"

    def _key(self, questions_path: Path) -> str:
        return run_key(self.settings.result_settings(questions_path, self.model_ids))

    def run(self, questions_path: Path, results_path: Path | None = None, fresh: bool = False) -> dict:
        started = time.perf_counter()
        settings = self.settings
        all_questions = load_questions(questions_path)
        chosen = select(all_questions, settings.datasets, settings.limit, settings.seed, settings.half)
        if not chosen:
            raise LongqaError(f"{questions_path}: no questions for datasets {', '.join(settings.datasets or [])}")
        check_documents(chosen, questions_path)
        results = ResultsFile(results_path or self.results_path(questions_path), self._key(questions_path), fresh)
        systems = [self.make_system(name) for name in settings.systems]
        todo = sum(1 for q in chosen for s in systems if not results.has(s.name, q.id))
        self.progress.start(todo)
        preparation: dict[str, dict] = {}
        self._deadline = None if settings.stop_after is None else started + 60 * settings.stop_after
        for dataset in dict.fromkeys(q.dataset for q in chosen):
            if self._past_deadline():
                break
            questions = [q for q in chosen if q.dataset == dataset]
            if all(results.has(s.name, q.id) for q in questions for s in systems):
                continue
            pool = chosen if settings.corpus == "selected" else all_questions
            mode = "folder" if settings.corpus == "folder" else "questions"
            workspace = Workspace(dataset, corpus_documents(pool, dataset, mode),
                                  self.work_dir, self.resources, settings.chunk_tokens, self.progress.status,
                                  settings.structure)
            preparation[dataset] = self._run_dataset(workspace, questions, systems, results)
        records = [results.done[(s.name, q.id)] for q in chosen for s in systems if results.has(s.name, q.id)]
        meta = _update_meta(results.path.with_suffix(".meta.json"), preparation, self.resources.describe())
        report = build_report(records, settings, self.resources, chosen, meta["ingest"],
                              elapsed=time.perf_counter() - started, results_path=results.path,
                              models=meta["models"])
        if len(records) < len(chosen) * len(systems):  # stopped by --stop-after: say what is missing
            asked = {r["id"] for r in records}
            report["partial"] = {"asked": len(asked), "chosen": len(chosen),
                                 "not_asked_by_dataset": {d: sum(1 for q in chosen if q.dataset == d and q.id not in asked)
                                                          for d in dict.fromkeys(q.dataset for q in chosen)}}
        return report

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.perf_counter() >= self._deadline

    def _run_dataset(self, workspace: Workspace, questions: list[Question], systems, results) -> dict:
        needs = set().union(*(getattr(s, "needs", set()) for s in systems))
        corpus = [str(d) for d in workspace.docs]
        prepared = time.perf_counter()
        if self.settings.protocol == "corpus":
            self.progress.status(f"{workspace.dataset}: preparing {len(corpus)} documents")
            self._warm(workspace, needs, corpus)
        for system in systems:
            system.prepare(workspace)
        prepare_seconds = time.perf_counter() - prepared
        first_error: set[str] = set()
        for question in questions:
            if self._past_deadline():
                break
            scope = corpus if self.settings.protocol == "corpus" else [str(d) for d in question.docs]
            if self.settings.without_own:
                own = {str(Path(d).resolve()) for d in question.docs}
                scope = [d for d in corpus if str(Path(d).resolve()) not in own]
                if not scope:  # a dataset of one document has nothing else to ask
                    continue
            pending = [s for s in systems if not results.has(s.name, question.id)]
            if not pending:
                continue
            self._warm(workspace, needs, scope)
            for system in pending:
                record = self.ask(system, question, scope)
                results.append(record)
                if record["error"] and system.name not in first_error:
                    first_error.add(system.name)
                    self.progress.warn(f"{system.name} failed on {question.id}: {record['error']}")
                self.progress.advance(f"{workspace.dataset} · {system.name}")
        return {**workspace.ingest_report(), "prepare_seconds": round(prepare_seconds, 2)}

    def _warm(self, workspace: Workspace, needs: set[str], docs: list[str]) -> None:
        """Build what the systems read (store, chunks, vectors) outside any question's timing."""
        if "store" in needs:
            workspace.ensure_ingested(docs)
        if "vectors" in needs:
            workspace.chunk_vectors(docs)
        elif "chunks" in needs:
            workspace.chunks(docs)

    def ask(self, system, question: Question, scope: list[str]) -> dict:
        usage = self.resources.usage
        before = usage.copy()
        error = None
        started = time.perf_counter()
        answers = self.settings.generate and question.metric != "judge"
        own_answer = answers and hasattr(system, "answer")  # longqa answers through `ask` itself
        answer_text, prompt_tokens, cut = None, None, False
        try:
            if own_answer:
                retrieved, answer_text = system.answer(question, scope)
            else:
                retrieved = system.retrieve(question, scope)
        except Exception as exc:  # one failing question must not end a long run
            retrieved, error = Retrieved(passages=[]), f"retrieve: {type(exc).__name__}: {exc}"
        retrieved_at = time.perf_counter()
        if own_answer:
            answer_text = answer_text or ""
        elif answers and error is None:
            try:
                result = answering.answer(self.resources.generator(), question.question, retrieved.passages,
                                          question.metric == "choice", self.settings.answer_tokens)
                answer_text, prompt_tokens, cut = result.text, result.prompt_tokens, result.context_cut
            except Exception as exc:
                answer_text, error = "", f"generate: {type(exc).__name__}: {exc}"
        elif answers:
            answer_text = ""
        finished = time.perf_counter()
        spent = usage.since(before)
        record = {
            "system": system.name, "id": question.id, "dataset": question.dataset, "task": question.task,
            "metric": question.metric, "answer": answer_text,
            "context_tokens": retrieved.context_tokens(),
            "prompt_tokens": prompt_tokens, "context_cut": cut,
            "generated_tokens": spent.generated_tokens + spent.scored_tokens, "model_calls": spent.generator_calls,
            "embed_calls": spent.embed_calls,
            "seconds": {"retrieve": round(retrieved_at - started, 3), "generate": round(finished - retrieved_at, 3),
                        "total": round(finished - started, 3), "model": round(spent.generator_seconds, 3),
                        "embed": round(spent.embed_seconds, 3),
                        **{f"stage.{k}": round(v, 4) for k, v in retrieved.stages.items()}},
            "passages": [{"doc": Path(p.doc).name if p.doc else "", "pages": [p.page_start, p.page_end],
                          "chars": len(p.text)} for p in retrieved.passages],
            "note": retrieved.note, "error": error,
        }
        if retrieved.recall_passages is not None:
            record["recall_tokens"] = sum(tokens.count(p.text) for p in retrieved.recall_passages)
        record.update(context_measures(question, retrieved))
        record.update(answer_measures(question, answer_text))
        if retrieved.confidence is not None:
            record.update(confidence=round(retrieved.confidence, 4), unsure=retrieved.unsure,
                          alternatives=retrieved.alternatives)
        if retrieved.mode is not None:
            record["answer_mode"] = retrieved.mode
        if retrieved.declined is not None:
            record.update(declined=retrieved.declined, declined_answer_mode=retrieved.declined_mode or None)
        record["form"] = question_form(question.question)
        if retrieved.signals:
            record["signals"] = {name: round(value, 4) for name, value in retrieved.signals.items()}
        record.update(confidence_measures(question, record))
        return record


def _update_meta(path: Path, preparation: dict, models: dict) -> dict:
    """Dataset preparation figures and model identities kept beside the results file, so a resumed
    run that had nothing left to do (and loaded no model) still reports them."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    meta.setdefault("ingest", {}).update(preparation)
    old = meta.get("models") or {}
    meta["models"] = {
        "generator": models.get("generator") or old.get("generator"),
        "embedder": models.get("embedder") or old.get("embedder"),
        "load_seconds": {**old.get("load_seconds", {}), **models.get("load_seconds", {})},
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    tmp.replace(path)
    return meta
