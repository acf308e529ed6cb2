"""How much a model-made decision may steer, from its measured skill (bench/decisions.py).

Each decision (scope, type, outline choice, sufficiency, the router's moves) was scored against
dev labels on the TUNE half with the model in use: accuracy for choices, AUC for probabilities.
Its weight is how far that stands above chance, scaled to [0, 1] — 0 at chance (the decision does
not steer), 1 for a perfect one:
    weight = max(0, (skill - chance) / (1 - chance))        (AUC: chance 0.5)
A model that was never measured (one passed with -m or --llm-url) gets weight 1: the same code
lets a stronger model steer fully, and bench/decisions.py measures it when that matters.
"""

from __future__ import annotations

# generator identity prefix -> decision -> (measured skill, chance level). Measured with
# `python bench/decisions.py --half tune` (bench/RESULTS.md, "Model-made decisions"); each group
# names the commit that recorded it, whose parent is the code measured.
MEASURED: dict[str, dict[str, tuple[float, float]]] = {
    # 48 questions of the tune half (8 per dataset), corpus-protocol stores, load average 6.8
    # (recorded in 3d1eded):
    "gemma-3-270m": {
        "scope": (0.672, 0.5),  # AUC of p(global) for free-form (judged) vs short-answer questions
        "type": (0.500, 0.5),  # balanced accuracy, extractive vs abstractive, as ask asks it (25)
        "outline": (0.000, 0.1),  # top-1 section holding the answer, 13 questions, 10 shown
        "sufficiency": (0.518, 0.5),  # AUC of p(yes): shown passages hold a gold answer (95 pairs)
        # 30 questions of the tune half, `--decisions router`, load average 4.3 (recorded in
        # d3e5d22): the router nearly always says EXPAND, so it never says ANSWER at the right time.
        "router-expand": (0.273, 0.230),  # the node read holds gold, 11 subtrees (chance: gold share)
        "router-answer": (0.500, 0.5),  # balanced accuracy of ANSWER vs any other move, 22 subtrees
        # 11 broad questions of the tune half answered in free text (token F1 to the gold answers):
        # the model's own words 0.178, quoting the 3 best focused sentences 0.217 ("chance" here;
        # recorded in 3c73eea).
        "free-text": (0.178, 0.217),
        # 7 yes/no questions of the tune half (bench/answer_tuning.py): the calibrated Yes/No
        # probabilities chose right 0 times (chance 0.5); the word rule (grounded.verdict_rule) 4 times
        # (recorded in bcf7d60).
        "verdict": (0.0, 0.5),
    },
}


def weight(generator, decision: str) -> float:
    """Weight in [0, 1] of `decision` made by `generator` (0 without a generator)."""
    if generator is None:
        return 0.0
    name = str(getattr(generator, "name", "") or "")
    for prefix, table in MEASURED.items():
        if name.startswith(prefix):
            if decision not in table:
                return 0.0
            skill, chance = table[decision]
            return max(0.0, (skill - chance) / (1.0 - chance)) if chance < 1 else 0.0
    return 1.0


def router_weight(generator) -> float:
    """The router makes two decisions in one move: which node to read next and whether to stop; it
    steers only as far as the weaker of the two was measured to be (0 when either is at chance)."""
    return min(weight(generator, "router-expand"), weight(generator, "router-answer"))
