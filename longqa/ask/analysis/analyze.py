"""Question analysis: information scope R_q, question type and information pattern.

Rules run first and fix the information pattern, so retrieval does not wait for the model. Then
one short prompt (ANALYSIS_PREFIX plus the question) is read at up to two label positions that
share the prefix, so the KV cache evaluates the few-shot part once. R_q = p_G / (p_G + p_L) from
the probabilities of the " local" and " global" label tokens (LongRefiner). The type comes from
rule priors when a rule fires, otherwise from the label probabilities (OkraLong's labels); the
information pattern from lexical rules only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from longqa.ask import decisions, prompts
from longqa.ask.analysis import rules
from longqa.ask.analysis.asked import Asked, read
from longqa.models import skill
from longqa.models.base import Generator


@dataclass
class Analysis:
    scope: float  # R_q in [0, 1]: 0 = local, 1 = global
    type: str  # extractive | abstractive | arithmetic | multi-bridge | multi-source
    pattern: str  # exact | semantic | both
    evidence: float | None = None  # p(first retrieval holds the evidence); None = not checked
    decided_by: dict[str, str] = field(default_factory=dict)  # field -> "rule" | "model" | "default"
    probs: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds: float = 0.0
    asked: Asked | None = None  # what the question asks, read once (analysis/asked.py)

    def as_dict(self) -> dict:
        return {"scope": round(self.scope, 4), "type": self.type, "pattern": self.pattern,
                "evidence": None if self.evidence is None else round(self.evidence, 4),
                "decided_by": self.decided_by}


# Without a rule, the model only chooses between the two types that cost nothing extra. A 270M
# base model's guess among all five is close to chance (OkraLong measured 22.9% for a prompted 1B
# model; gemma-3-270m called "How long can the generators run?" multi-bridge with p > 0.5), and a
# wrong multi-bridge or multi-source costs generated steps before the first answer token. The
# expensive types come from the rules, which look for their surface signs.
MODEL_TYPES = ("extractive", "abstractive")


def without_model(question: str) -> Analysis:
    """The ablation "no query analysis": a neutral scope, an extractive type, balanced fusion."""
    return Analysis(scope=0.5, type="extractive", pattern="both",
                    decided_by={"scope": "default", "type": "default", "pattern": "default"}, asked=read(question))


def from_rules(question: str) -> Analysis:
    """What the rules say, before any model call. The pattern is final here, so retrieval (and the
    "nothing relevant" decision) run before the generator is even loaded."""
    analysis = Analysis(scope=0.5, type="extractive", pattern="both", asked=read(question))
    rule_type = rules.question_type(question)
    if rule_type is not None:
        analysis.type, analysis.decided_by["type"] = rule_type, "rule"
    rule_scope = rules.scope_prior(question, analysis.asked.want)
    if rule_scope is not None:
        analysis.scope, analysis.decided_by["scope"] = rule_scope, "rule"
    # The pattern is decided by rules alone: gemma-3-270m labelled 8 of 8 test questions "exact"
    # (summaries included), and even OkraLong's fine-tuned analyzer gets it right only 64.6% of
    # the time. Literal cues mean exact; an explanation question without them is semantic.
    rule_pattern = rules.information_pattern(question)
    if rule_pattern is not None:
        analysis.pattern = rule_pattern
    else:
        analysis.pattern = "semantic" if analysis.type == "abstractive" else "both"
    analysis.decided_by["pattern"] = "rule"
    return analysis


def with_model(analysis: Analysis, question: str, generator: Generator) -> Analysis:
    """Add the model's R_q (a global rule's R_q it only raises; a local rule's it does not ask
    about, which saves the call before a figure's or a date's first answer token) and its type
    where no rule fired."""
    started = time.perf_counter()
    by_rule = analysis.decided_by.get("scope") == "rule"
    if skill.weight(generator, "scope") <= 0:  # an unmeasured model's R_q would not steer: no call
        analysis.decided_by.setdefault("scope", "default")
    elif not (by_rule and analysis.scope < 0.5):
        probs = decisions.scope(generator, question)
        p_local, p_global = probs["local"], probs["global"]
        model_scope = p_global / (p_global + p_local) if p_global + p_local > 0 else 0.5
        analysis.probs["scope"] = {"local": p_local, "global": p_global}
        # The model's R_q counts as far as its measured skill goes (skill.py): at chance it stays
        # at the neutral 0.5 and does not steer the global score.
        model_scope = 0.5 + skill.weight(generator, "scope") * (model_scope - 0.5)
        if by_rule:
            analysis.scope = max(analysis.scope, model_scope)
        else:
            analysis.scope, analysis.decided_by["scope"] = model_scope, "model"
    if "type" not in analysis.decided_by:
        if skill.weight(generator, "type") > 0:
            scope_label = "global" if analysis.scope >= 0.5 else "local"
            analysis.type = _pick(generator, prompts.analysis_prompt(question, scope_label), MODEL_TYPES,
                                  analysis, "type")
        else:  # a choice measured at chance does not steer (nor cost a call): the safe default stays
            analysis.decided_by["type"] = "default"
    analysis.seconds += time.perf_counter() - started
    return analysis


def analyze(question: str, generator: Generator | None) -> Analysis:
    """Rules, then (with a generator) the model's scope and type."""
    analysis = from_rules(question)
    if generator is None:
        analysis.decided_by.setdefault("scope", "default")
        analysis.decided_by.setdefault("type", "default")
        return analysis
    return with_model(analysis, question, generator)


def _pick(generator: Generator, prompt: str, labels: tuple[str, ...], analysis: Analysis, name: str) -> str:
    raw = generator.label_probs(prompt, [f" {label}" for label in labels])
    probs = {label.strip(): p for label, p in raw.items()}
    analysis.probs[name] = probs
    analysis.decided_by[name] = "model"
    return max(probs, key=probs.get)
