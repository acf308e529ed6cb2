"""Evaluation questions: read the unified JSONL, pick a stratified subset, list each dataset's corpus.

Document paths in the JSONL are relative to the JSONL's own folder.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from longqa.errors import InputError

METRICS = ("f1", "choice", "judge")


@dataclass
class Evidence:
    text: str
    page: int | None = None


@dataclass
class Question:
    id: str
    dataset: str
    task: str
    question: str
    answers: list[str]
    docs: list[Path]  # resolved, absolute
    metric: str
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def evidence_pages(self) -> list[int]:
        return [e.page for e in self.evidence if e.page]


def load_questions(path: Path) -> list[Question]:
    """All records of a questions file; any malformed line is an InputError naming file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(path, f"cannot read questions file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(path, "questions file is not UTF-8 text") from None
    base = path.resolve().parent
    questions, seen = [], set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            question = _parse(json.loads(line), base)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise InputError(path, f"line {number}: {_reason(exc)}") from None
        if question.id in seen:
            raise InputError(path, f"line {number}: duplicate id {question.id!r}")
        seen.add(question.id)
        questions.append(question)
    if not questions:
        raise InputError(path, "no questions in file")
    return questions


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg})"
    return str(exc)


def _parse(record: dict, base: Path) -> Question:
    if not isinstance(record, dict):
        raise ValueError("each line must be a JSON object")
    metric = record.get("metric", "f1")
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r} (expected one of {', '.join(METRICS)})")
    answers = record["answers"]
    docs = record["docs"]
    if not isinstance(answers, list) or not isinstance(docs, list) or not docs:
        raise ValueError("'answers' must be a list and 'docs' a non-empty list")
    evidence = [
        Evidence(text=str(e.get("text") or ""), page=e.get("page")) if isinstance(e, dict) else Evidence(str(e))
        for e in record.get("evidence") or []
    ]
    return Question(
        id=str(record["id"]),
        dataset=str(record["dataset"]),
        task=str(record.get("task") or record["dataset"]),
        question=str(record["question"]),
        answers=[str(a) for a in answers],
        docs=[(base / d).resolve() for d in docs],
        metric=metric,
        evidence=evidence,
    )


def check_documents(questions: list[Question], source: Path) -> None:
    """Fail before any work when a referenced document is missing."""
    for question in questions:
        for doc in question.docs:
            if not doc.is_file():
                raise InputError(source, f"question {question.id}: document not found: {doc}")


HALVES = ("all", "tune", "report")


def half_of(question_id: str) -> str:
    """"tune" or "report": a stable split of the questions by a hash of their id. Thresholds are
    tuned on the tune half; figures that are reported come from the report half."""
    return "tune" if hashlib.sha1(question_id.encode("utf-8")).digest()[0] % 2 == 0 else "report"


def select(
    questions: list[Question], datasets: list[str] | None = None, limit: int | None = None, seed: int = 0,
    half: str = "all",
) -> list[Question]:
    """Filter by dataset (and half), then take `limit` questions round-robin across datasets.

    Each dataset's questions are shuffled with `seed` first, so a small limit samples every dataset
    and its tasks evenly rather than taking the head of the file; the same seed gives the same set.
    The result is grouped by dataset (in file order) so each dataset's corpus is prepared once."""
    by_dataset: dict[str, list[Question]] = defaultdict(list)
    for question in questions:
        if (datasets is None or question.dataset in datasets) and (half == "all" or half_of(question.id) == half):
            by_dataset[question.dataset].append(question)
    if limit is None:
        return [q for group in by_dataset.values() for q in group]
    pools = {}
    for name, group in by_dataset.items():
        pool = list(group)
        random.Random(f"{seed}:{name}").shuffle(pool)
        pools[name] = pool
    taken: dict[str, list[Question]] = defaultdict(list)
    count, depth = 0, 0
    while count < limit and any(depth < len(pool) for pool in pools.values()):
        for name, pool in pools.items():
            if count < limit and depth < len(pool):
                taken[name].append(pool[depth])
                count += 1
        depth += 1
    return [q for name in by_dataset for q in taken[name]]


def corpus_documents(questions: list[Question], dataset: str, mode: str = "questions") -> list[Path]:
    """The documents that make up a dataset's corpus under the `corpus` protocol.

    mode "questions": every document referenced by the dataset's questions in `questions`;
    mode "folder": every supported file in the folder(s) holding those documents."""
    from longqa.parse import SUPPORTED_SUFFIXES

    docs = sorted({doc for q in questions if q.dataset == dataset for doc in q.docs})
    if mode == "questions":
        return docs
    if mode != "folder":
        raise ValueError(f"unknown corpus mode {mode!r}")
    folders = sorted({doc.parent for doc in docs})
    found = {
        p.resolve() for folder in folders for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES
    }
    return sorted(found | set(docs))
