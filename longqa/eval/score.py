"""Scores for one (system, question): model-independent context measures and answer quality."""

from __future__ import annotations

import re

from longqa.eval import choice, metrics
from longqa.eval.retrieved import Retrieved
from longqa.eval.data import Question


def context_measures(question: Question, retrieved: Retrieved) -> dict:
    """Answer recall, evidence recall, page hit and document hit over the measured passages."""
    measured = retrieved.measured
    context = "\n\n".join(p.text for p in measured)
    own = {str(d) for d in question.docs}
    # A QuALITY gold answer is an option's wording, not a span of the story: nothing to find.
    answer_recall = None if question.metric == "choice" else metrics.answer_in_context(question.answers, context)
    evidence, coverages = metrics.evidence_recall([e.text for e in question.evidence], context)
    spans = [(p.page_start, p.page_end or p.page_start) for p in measured if p.doc in own and p.page_start]
    return {
        "answer_recall": _num(answer_recall),
        "evidence_recall": evidence,
        "evidence_coverage": [round(c, 3) for c in coverages],
        "page_hit": _num(metrics.page_hit(question.evidence_pages, spans)),
        "doc_hit": float(any(p.doc in own for p in measured)),
    }


def answer_measures(question: Question, answer: str | None) -> dict:
    """EM and F1 for `f1` records, option accuracy for `choice` records; None where not scored
    (judge records, no generation, or a record without any gold answer)."""
    out = {"em": None, "f1": None, "choice_correct": None, "predicted_letter": None, "gold_letter": None}
    if answer is None or question.metric == "judge":
        return out
    if question.metric == "f1" and any(metrics.normalize(a) for a in question.answers):
        out["em"] = metrics.exact_match(answer, question.answers)
        out["f1"] = round(metrics.token_f1(answer, question.answers), 4)
    elif question.metric == "choice":
        listed = choice.options(question.question)
        gold = choice.gold_letter(question.answers, question.question)
        predicted = choice.extract_letter(answer, listed)
        out.update(gold_letter=gold, predicted_letter=predicted,
                   choice_correct=float(gold is not None and predicted == gold))
    return out


def question_form(question: str) -> str:
    """What a question asks for, as the report groups it: yes/no, how/why (how/why/steps, a
    summary, a passage), option (lettered or "A or B"), or fact."""
    from longqa.ask.analysis.asked import read

    asked = read(question)
    if asked.letters or asked.want == "option":
        return "option"
    if asked.want == "yesno":
        return "yes/no"
    if asked.want in ("summary", "sentence") or re.match(r"\s*(?:how|why)\b(?!\s+(?:many|much|long|often|far|old))",
                                                       question, re.I):
        return "how/why"
    return "fact"


def confidence_measures(question: Question, record: dict) -> dict:
    """For scored short answers: whether a gold answer is the answer or one of its two alternatives
    (token F1 >= 0.5, the ranker's label), whether the answer was given as sure (a confidence at or
    above the ranker's threshold; answers chosen without the ranker count as not sure), and the F1
    of the sure ones."""
    if record.get("f1") is None:
        return {"gold_in_top3": None, "sure": None, "sure_f1": None}
    offered = [record.get("answer") or ""] + list(record.get("alternatives") or [])[:2]
    best = max(metrics.token_f1(text, question.answers) for text in offered)
    sure = record.get("confidence") is not None and not record.get("unsure") and not record.get("declined")
    return {"gold_in_top3": float(best >= 0.5), "sure": float(sure), "sure_f1": record["f1"] if sure else None}


def _num(value: bool | None) -> float | None:
    return None if value is None else float(value)
