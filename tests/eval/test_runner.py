"""The evaluation runner's control flow on real files: a questions JSONL and markdown documents
written here, real chunk baselines and results files; fake models (and one fake system) only where
a model would be needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longqa.eval.baselines import Bm25Chunks, DenseChunks, FullContext, NoContext
from longqa.eval.retrieved import Passage, Retrieved
from longqa.eval.data import load_questions, select
from longqa.eval.runner import EvalSettings, Runner
from longqa.eval.systems import LONGQA_VARIANTS, LongqaSystem, Resources, make_system
from longqa.errors import InputError
from tests.command import run, run_json
from tests.fakes import FAKE_COSINE_MIN, FakeEmbedder, FakeGenerator

FILLER = "The committee met again and discussed routine matters of little consequence. " * 60

DOCS = {
    "alpha/bridges.md": "# Bridges\n\n## History\n\n" + FILLER + "\n\nThe Harbour Bridge opened in 1932 after "
                        "eight years of work.\n\n## Design\n\n" + FILLER,
    "alpha/rivers.md": "# Rivers\n\n## Course\n\n" + FILLER + "\n\nThe Danube flows through ten countries, "
                       "more than any other river.\n\n" + FILLER,
    "alpha/mountains.md": "# Mountains\n\n" + FILLER + "\n\nMount Kosciuszko is the highest peak in mainland "
                          "Australia.\n\n" + FILLER + "\n\nThe summit register was placed by Strzelecki.",
    "beta/story.md": "# A story\n\n" + FILLER + "\n\nThe captain hid the key beneath the lighthouse stairs.",
    "beta/report.md": "# Annual report\n\n" + FILLER + "\n\nNet sales grew to 4,210 million dollars.",
}

QUESTIONS = [
    {"id": "a1", "dataset": "alpha", "task": "fact", "question": "When did the Harbour Bridge open?",
     "answers": ["1932"], "docs": ["docs/alpha/bridges.md"], "metric": "f1",
     "evidence": [{"text": "The Harbour Bridge opened in 1932 after eight years of work.", "page": None}]},
    {"id": "a2", "dataset": "alpha", "task": "fact", "question": "Which river flows through ten countries?",
     "answers": ["the Danube"], "docs": ["docs/alpha/rivers.md"], "metric": "f1", "evidence": []},
    {"id": "a3", "dataset": "alpha", "task": "open", "question": "Who placed the summit register?",
     "answers": ["Strzelecki"], "docs": ["docs/alpha/mountains.md"], "metric": "judge", "evidence": []},
    {"id": "b1", "dataset": "beta", "task": "story", "question": "Where was the key hidden?\n\n (A) Under the "
     "bed \n (B) Beneath the lighthouse stairs \n (C) In the sea ", "answers": ["(B) Beneath the lighthouse stairs"],
     "docs": ["docs/beta/story.md"], "metric": "choice", "evidence": []},
    {"id": "b2", "dataset": "beta", "task": "numbers", "question": "What were net sales?",
     "answers": ["4,210 million dollars"], "docs": ["docs/beta/report.md"], "metric": "f1",
     "evidence": [{"text": "Net sales grew to 4,210 million dollars.", "page": 1}]},
]


@pytest.fixture
def questions_file(tmp_path: Path) -> Path:
    for name, text in DOCS.items():
        path = tmp_path / "data" / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    file = tmp_path / "data" / "questions.jsonl"
    file.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return file


def fake_generator() -> FakeGenerator:
    """The shared fake, favouring option B of a choice question (the right letter of b1)."""
    return FakeGenerator(choose=lambda prompt, labels: "B" if "B" in labels else None)


def longqa_with_fakes(name: str, resources: Resources, budget: int, max_steps: int) -> LongqaSystem:
    """A longqa variant as make_system builds it, with the "nothing relevant" cosine threshold
    of the fake embedder (as tests/ask_support.make_pipeline sets it for every ask test)."""
    return LongqaSystem(name, resources, budget, max_steps, {**LONGQA_VARIANTS[name], "cosine_min": FAKE_COSINE_MIN})


class RecordingSystem:
    """A fake system: remembers the document scope of each call; can stop the run mid-way."""

    needs: set = set()

    def __init__(self, name="recorder", interrupt_after: int | None = None):
        self.name = name
        self.calls: list[tuple[str, list[str]]] = []
        self.prepared: list[str] = []
        self.interrupt_after = interrupt_after

    def prepare(self, workspace) -> None:
        self.prepared.append(workspace.dataset)

    def retrieve(self, question, docs):
        if self.interrupt_after is not None and len(self.calls) >= self.interrupt_after:
            raise KeyboardInterrupt
        self.calls.append((question.id, sorted(Path(d).name for d in docs)))
        return Retrieved([Passage(text=f"context for {question.id}", doc=docs[0])])


def _runner(tmp_path, systems, **settings) -> Runner:
    resources = Resources.of(fake_generator(), FakeEmbedder())
    by_name = {s.name: s for s in systems}
    settings = EvalSettings(systems=[s.name for s in systems], **settings)
    return Runner(settings, resources, tmp_path / "work", lambda name: by_name[name])


# -- selection ----------------------------------------------------------------------------------------
def test_limit_is_round_robin_over_datasets_and_seeded(questions_file):
    questions = load_questions(questions_file)
    assert questions[0].docs[0] == (questions_file.parent / "docs/alpha/bridges.md").resolve()
    picked = select(questions, limit=3, seed=1)
    assert [q.dataset for q in picked] == ["alpha", "alpha", "beta"]
    assert [q.id for q in select(questions, limit=3, seed=1)] == [q.id for q in picked]  # deterministic
    seeds = {tuple(q.id for q in select(questions, limit=2, seed=s)) for s in range(12)}
    assert len(seeds) > 1  # the seed changes which questions a small limit takes
    assert all({q.dataset for q in select(questions, limit=2, seed=s)} == {"alpha", "beta"} for s in range(12))
    assert len(select(questions, limit=50)) == 5
    assert [q.id for q in select(questions, datasets=["beta"])] == ["b1", "b2"]


def test_bad_questions_file_names_file_and_line(tmp_path):
    file = tmp_path / "q.jsonl"
    file.write_text(json.dumps(QUESTIONS[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"q\.jsonl: line 2: not valid JSON"):
        load_questions(file)
    file.write_text(json.dumps({**QUESTIONS[0], "metric": "bleu"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1: unknown metric 'bleu'"):
        load_questions(file)


# -- protocols ------------------------------------------------------------------------------------------
def test_corpus_protocol_searches_every_document_of_the_dataset(questions_file, tmp_path):
    recorder = RecordingSystem()
    _runner(tmp_path, [recorder], limit=2, seed=0, corpus="file").run(questions_file)
    # limit 2 takes one question per dataset, yet each is asked of its whole dataset's corpus
    alpha = [docs for qid, docs in recorder.calls if qid.startswith("a")]
    assert alpha == [["bridges.md", "mountains.md", "rivers.md"]]
    assert recorder.prepared == ["alpha", "beta"]  # once per dataset


def test_selected_corpus_holds_only_the_chosen_questions_documents(questions_file, tmp_path):
    recorder = RecordingSystem()
    _runner(tmp_path, [recorder], limit=2, seed=0, corpus="selected").run(questions_file)
    alpha = [(qid, docs) for qid, docs in recorder.calls if qid.startswith("a")]
    assert len(alpha) == 1 and len(alpha[0][1]) == 1  # its own document is the whole corpus


def test_single_protocol_sees_only_own_documents(questions_file, tmp_path):
    recorder = RecordingSystem()
    _runner(tmp_path, [recorder], protocol="single").run(questions_file)
    assert dict(recorder.calls) == {"a1": ["bridges.md"], "a2": ["rivers.md"], "a3": ["mountains.md"],
                                    "b1": ["story.md"], "b2": ["report.md"]}


def test_without_own_docs_asks_each_question_of_the_others_documents(questions_file, tmp_path):
    recorder = RecordingSystem()
    _runner(tmp_path, [recorder], corpus="file", without_own=True).run(questions_file)
    calls = dict(recorder.calls)
    assert calls["a1"] == ["mountains.md", "rivers.md"]  # its own bridges.md left out
    assert all(own not in calls[qid] for qid, own in (("a2", "rivers.md"), ("b1", "story.md")))


# -- resume ---------------------------------------------------------------------------------------------
def test_a_run_stopped_after_its_minutes_reports_what_it_asked_and_resumes(questions_file, tmp_path):
    stopped = RecordingSystem()
    report = _runner(tmp_path, [stopped], stop_after=0.0).run(questions_file)
    assert stopped.calls == [] and report["partial"]["asked"] == 0 and report["partial"]["chosen"] == 5
    again = RecordingSystem()
    report = _runner(tmp_path, [again]).run(questions_file)
    assert len(again.calls) == 5 and "partial" not in report



def test_interrupted_run_resumes_where_it_stopped(questions_file, tmp_path):
    first = RecordingSystem(interrupt_after=3)
    runner = _runner(tmp_path, [first])
    with pytest.raises(KeyboardInterrupt):
        runner.run(questions_file)
    results = runner.results_path(questions_file)
    assert len(results.read_text().splitlines()) == 3
    with results.open("a") as handle:
        handle.write('{"system": "recorder", "id": "b1", "trunc')  # a line cut by the interruption

    second = RecordingSystem()
    report = _runner(tmp_path, [second]).run(questions_file)
    assert [qid for qid, _ in second.calls] == ["b1", "b2"]  # only what was missing
    assert report["overall"]["recorder"]["n"] == 5
    lines = [json.loads(line) for line in results.read_text().splitlines() if line.startswith('{"system": "recorder", "id": "b2"')]
    assert len(lines) == 1

    third = RecordingSystem()
    _runner(tmp_path, [third]).run(questions_file)
    assert third.calls == []  # nothing left to do
    changed = RecordingSystem()
    _runner(tmp_path, [changed], budget=500).run(questions_file)  # other settings: other results file
    assert len(changed.calls) == 5


def test_a_failing_system_is_recorded_and_the_run_goes_on(questions_file, tmp_path):
    class Broken(RecordingSystem):
        def retrieve(self, question, docs):
            raise RuntimeError("index missing")

    report = _runner(tmp_path, [Broken("broken"), RecordingSystem()]).run(questions_file)
    assert report["overall"]["broken"]["errors"] == 5
    assert report["overall"]["recorder"]["errors"] == 0


# -- real baselines over the markdown documents -----------------------------------------------------------
def test_baselines_and_report_fields(questions_file, tmp_path):
    systems = [Bm25Chunks(budget=300), DenseChunks(300, None), FullContext(cap=200), NoContext()]
    runner = _runner(tmp_path, systems, budget=300, full_context_cap=200, chunk_tokens=512)
    systems[1].embedder = runner.resources.embedder
    report = runner.run(questions_file)

    for key in ("date", "git", "machine", "models", "protocol", "budget", "systems", "questions", "datasets",
                "notes", "ingest", "overall", "by_dataset", "by_task", "full_context_cap"):
        assert key in report
    assert report["machine"]["cpus"] >= 1 and report["models"]["generator"]["name"] == "fake-generator"
    assert report["questions"] == 5 and report["datasets"] == {"alpha": 3, "beta": 2}
    assert set(report["by_dataset"]) == {"alpha", "beta"} and "alpha/fact" in report["by_task"]

    records = {(r["system"], r["id"]): r for r in map(json.loads, runner.results_path(questions_file).open())}
    assert len(records) == 20
    # BM25 over the whole alpha corpus finds the bridge sentence; the budget holds
    bm25 = records[("bm25-chunks", "a1")]
    assert bm25["answer_recall"] == 1.0 and bm25["evidence_recall"] == 1.0 and bm25["doc_hit"] == 1.0
    assert 0 < bm25["context_tokens"] <= 300
    # full context: the generator reads 200 tokens, recall is measured over the whole document
    full = records[("full-context", "a3")]
    assert full["context_tokens"] <= 200 < full["recall_tokens"]
    assert full["answer_recall"] == 1.0  # "Strzelecki" is the last word of the document
    assert records[("no-context", "a1")]["context_tokens"] == 0
    assert records[("no-context", "a1")]["answer_recall"] == 0.0
    # answers: judge records are not generated, choice is read from the letter probabilities
    assert records[("bm25-chunks", "a3")]["answer"] is None
    assert records[("bm25-chunks", "b1")]["choice_correct"] == 1.0
    assert records[("bm25-chunks", "b1")]["answer_recall"] is None
    assert records[("bm25-chunks", "a1")]["model_calls"] == 1
    assert records[("dense-chunks", "a1")]["embed_calls"] == 1  # the question; chunks were embedded before


def test_make_system_rejects_unknown_names():
    from longqa.errors import LongqaError

    with pytest.raises(LongqaError, match="unknown system 'bm26'"):
        make_system("bm26", Resources(), 2000)


def test_misspelt_ablation_option_fails_before_the_run():
    from longqa.errors import LongqaError
    from longqa.eval.systems import LongqaSystem

    with pytest.raises(LongqaError, match="unknown pipeline option.*use_tre"):
        LongqaSystem("longqa-flat", Resources(), 2000, 3, {"use_tre": False})
    from longqa.eval.systems import LONGQA_VARIANTS

    for name, options in LONGQA_VARIANTS.items():  # every published ablation names real options
        LongqaSystem(name, Resources(), 2000, 3, options)


def test_halves_split_the_questions_stably(questions_file):
    from longqa.eval.data import half_of

    questions = load_questions(questions_file)
    tune, report = select(questions, half="tune"), select(questions, half="report")
    assert {q.id for q in tune} | {q.id for q in report} == {q.id for q in questions}
    assert not {q.id for q in tune} & {q.id for q in report}
    assert all(half_of(q.id) == "tune" for q in tune) and half_of("a1") == half_of("a1")


def test_longqa_answers_come_from_ask_and_baselines_from_the_reader(questions_file, tmp_path):
    resources = Resources.of(fake_generator(), FakeEmbedder())
    runner = Runner(EvalSettings(systems=["longqa", "bm25-chunks"], budget=400), resources, tmp_path / "work",
                    lambda name: make_system(name, resources, 400, 3))
    runner.run(questions_file)
    records = [json.loads(line) for line in runner.results_path(questions_file).open()]
    longqa = [r for r in records if r["system"] == "longqa" and r["metric"] == "f1"]
    assert longqa and all(r["answer"] and "[" not in r["answer"] for r in longqa)  # markers left out
    assert all(r["prompt_tokens"] is None for r in longqa)  # not the harness's reader prompt
    assert all(r["prompt_tokens"] for r in records if r["system"] == "bm25-chunks" and r["metric"] == "f1")
    # the ranker's confidence travels with longqa's span answers and is scored: a gold answer among
    # the answer and its alternatives, and the F1 of the answers given as sure
    ranked = [r for r in longqa if r.get("confidence") is not None]
    assert ranked and all(0.0 <= r["confidence"] <= 1.0 and isinstance(r["alternatives"], list) for r in ranked)
    assert all(r["gold_in_top3"] in (0.0, 1.0) and r["sure"] == float(not r["unsure"]) for r in ranked)
    assert all(r["sure_f1"] == (r["f1"] if r["sure"] else None) for r in ranked)
    assert all(r.get("gold_in_top3") is None for r in records if r["f1"] is None)


# -- the command ----------------------------------------------------------------------------------------
def test_cli_recall_only_run_and_json_report(questions_file, tmp_path):
    out = tmp_path / "report.json"
    args = ["eval", questions_file, "--systems", "bm25-chunks,no-context", "--no-generate", "--limit", "3",
            "--half", "report", "--budget", "1500", "--work-dir", tmp_path / "work", "--out", out]
    result, report = run_json(*args)
    assert result.returncode == 0, result.stderr
    # What a reader checks first is at the report's top level (the commit where a git checkout has one).
    assert report["half"] == "report" and report["budget"] == 1500 and report["generate"] is False
    assert report["commit"] == report["git"]["commit"] and "--half report" in report["command"]
    assert 1 <= report["questions"] < 3  # the report half of the five questions
    n = report["questions"]
    assert report["overall"]["bm25-chunks"]["n"] == n and report["overall"]["bm25-chunks"]["f1"] is None
    assert json.loads(out.read_text())["systems"] == ["bm25-chunks", "no-context"]
    table = run(*args)
    assert table.returncode == 0
    assert "bm25-chunks" in table.stdout and "alpha" in table.stdout and "ans rec" in table.stdout


def test_cli_errors_are_one_line(questions_file, tmp_path):
    bad = run("eval", questions_file, "--systems", "nonsense", "--work-dir", tmp_path / "w")
    assert bad.returncode == 2 and "nonsense" in bad.stderr and "Traceback" not in bad.stderr
    missing = questions_file.parent / "docs/beta/report.md"
    missing.unlink()
    gone = run("eval", questions_file, "--systems", "no-context", "--work-dir", tmp_path / "w")
    assert gone.returncode == 1 and "Traceback" not in gone.stderr
    assert "document not found" in gone.stderr and len(gone.stderr.strip().splitlines()) == 1


# -- real models, real evaluation data ----------------------------------------------------------------------
@pytest.mark.models
@pytest.mark.evaldata
def test_small_real_run_over_evaldata(evaldata, tmp_path):
    """Three real questions through every default system with the default models."""
    result, report = run_json(
        "eval", evaldata / "dev.jsonl", "--protocol", "single", "--datasets", "hotpotqa,musique",
        "--limit", "3", "--budget", "1000", "--work-dir", tmp_path / "work", timeout=1800,
    )
    assert result.returncode == 0, result.stderr
    assert report["questions"] == 3 and report["models"]["generator"]["name"]
    assert report["git"]["commit"] and report["machine"]["cpus"] >= 1
    for system in ("longqa", "bm25-chunks", "dense-chunks", "full-context", "no-context"):
        stats = report["overall"][system]
        assert stats["n"] == 3 and stats["errors"] == 0, (system, stats)
        assert stats["model_calls"] >= 1  # every f1 question gets a generated answer
        assert stats["f1"] is not None
    for system in ("longqa", "bm25-chunks", "dense-chunks"):
        assert 0 < report["overall"][system]["context_tokens"] <= 1000
    assert report["overall"]["full-context"]["doc_hit"] == 1.0
    assert report["overall"]["no-context"]["context_tokens"] == 0
    records = [json.loads(line) for line in Path(report["results_file"]).open()]
    assert len(records) == 15 and all(isinstance(r["answer"], str) for r in records)


def test_longqa_systems_through_the_real_pipeline_and_a_cached_store(questions_file, tmp_path):
    """The adapter: the real ask pipeline over a real store ingested from the markdown files
    (fake models). The store is built once and reused by the next run with the same settings."""
    names = ["longqa", "longqa-no-analysis", "longqa-flat", "longqa-no-expansion", "longqa-bm25", "longqa-dense"]
    resources = Resources.of(fake_generator(), FakeEmbedder())
    runner = Runner(EvalSettings(systems=names, budget=400), resources, tmp_path / "work",
                    lambda name: longqa_with_fakes(name, resources, 400, 3))
    report = runner.run(questions_file)
    assert report["ingest"]["alpha"]["documents"] == 3 and report["ingest"]["alpha"]["ingested_now"] == 3
    records = [json.loads(line) for line in runner.results_path(questions_file).open()]
    assert len(records) == 30 and not any(r["error"] for r in records)
    full = [r for r in records if r["system"] == "longqa"]
    assert all(r["context_tokens"] > 0 and r["doc_hit"] == 1.0 for r in full)
    bridge = next(r for r in full if r["id"] == "a1")
    assert bridge["answer_recall"] == 1.0 and bridge["passages"][0]["doc"] == "bridges.md"
    assert "stage.retrieval" in bridge["seconds"]
    assert next(r for r in full if r["id"] == "b2")["page_hit"] == 1.0  # pages reach the measures

    again = Runner(EvalSettings(systems=["longqa"], budget=400), resources, tmp_path / "work",
                   lambda name: longqa_with_fakes(name, resources, 400, 3))
    report = again.run(questions_file, fresh=True)
    assert report["ingest"]["alpha"]["ingested_now"] == 0  # the cached store was reused
    assert report["ingest"]["alpha"]["seconds_recorded"] > 0
    assert report["overall"]["longqa"]["n"] == 5

    # single protocol: documents enter the store question by question; dense retrieval still sees them
    single = Runner(EvalSettings(systems=["longqa"], budget=400, protocol="single"), resources,
                    tmp_path / "work-single", lambda name: longqa_with_fakes(name, resources, 400, 3))
    single.run(questions_file)
    records = [json.loads(line) for line in single.results_path(questions_file).open()]
    assert len(records) == 5 and not any("dense retrieval off" in r["note"] for r in records)
    assert all(sum(p["chars"] for p in r["passages"]) > 0 for r in records)


def test_hybrid_chunks_sum_min_max_bm25_and_cosine():
    import numpy as np

    from longqa.eval.chunks import Chunk
    from longqa.eval.rank import HybridRanker

    def chunk(text):
        return Chunk(doc="d", title="", text=text, page_start=1, page_end=1, tokens=len(text.split()))

    chunks = [chunk("the zeolite filter bed is rinsed weekly"), chunk("water flows through the plant"),
              chunk("maintenance of sand beds and rinsing schedules")]
    vectors = np.array([[0.1, 0.99], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)  # the third is nearest the query
    query_vector = np.array([0.95, 0.3], dtype=np.float32)
    ranked = HybridRanker(chunks, vectors).rank("zeolite schedules", query_vector)
    # BM25 alone puts "zeolite" first, cosine alone the third chunk; both lead the unrelated one
    assert {c.text for c in ranked[:2]} == {chunks[0].text, chunks[2].text}
    assert ranked[-1] is chunks[1]
    assert HybridRanker([], np.zeros((0, 2))).rank("x", query_vector) == []


def test_the_graph_system_builds_graphs_for_the_questions_documents(questions_file, tmp_path):
    """`longqa-graph` through the harness: graphs built (cosine edges, as for a server) and
    searched, with no error on any question."""
    resources = Resources.of(fake_generator(), FakeEmbedder())
    runner = Runner(EvalSettings(systems=["longqa-graph-cosine"], budget=400), resources, tmp_path / "work",
                    lambda name: longqa_with_fakes(name, resources, 400, 3))
    report = runner.run(questions_file)
    records = [json.loads(line) for line in runner.results_path(questions_file).open()]
    assert len(records) == 5 and not any(r["error"] for r in records), [r["error"] for r in records]
    assert report["overall"]["longqa-graph-cosine"]["n"] == 5
    import sqlite3

    (store,) = (tmp_path / "work" / "stores").glob("alpha-*.db")
    edges = {row[0] for row in sqlite3.connect(store).execute("SELECT edges FROM graph_docs")}
    assert edges == {"cosine"}  # graphs were built for the questions' documents, with cosine edges
    assert any(r["context_tokens"] > 0 for r in records)
