"""The search's log: `Step` records, printed by `ask --json` in the shape it has always had."""

from __future__ import annotations

import json

from longqa.ask.search.steps import Step, add_step
from tests.ask_support import build_store, make_pipeline, reactor_handbook

# The keys of each kind of step, in the order `ask --json` prints them; a reader of the JSON
# (scripts, the evaluation's records) depends on both.
KEYS = {
    "outline": ["step", "action", "chosen", "shown", "titles"],
    "split": ["step", "action", "query", "source"],
    "router": ["step", "action", "move", "ids", "added", "shown", "tokens", "reply", "seconds"],
    "add": ["step", "action", "node", "kind", "reason", "priority", "tokens", "coverage", "p_yes", "sufficiency"],
    "stop": ["step", "action", "reason", "nodes", "tokens", "seconds"],
    "precise": ["step", "action", "sections", "sufficiency_before", "sufficiency", "kept"],
    "excerpt": ["step", "action", "searched_tokens", "tokens"],
}


def test_add_step_numbers_steps_and_keeps_the_details_order():
    steps: list[Step] = []
    add_step(steps, "outline", chosen=[3], shown=2)
    last = add_step(steps, "stop", reason="sufficient", nodes=1)
    assert steps[-1] is last and [s.number for s in steps] == [1, 2]
    assert json.dumps(last.to_json()) == '{"step": 2, "action": "stop", "reason": "sufficient", "nodes": 1}'


def test_a_real_run_prints_every_step_in_the_same_shape(tmp_path, db_path):
    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    result = make_pipeline(db, budget=600).answer("Compare the Cooling System and the Staff Training rules")
    printed = result.as_json()["steps"]
    assert [step["step"] for step in printed] == list(range(1, len(printed) + 1))
    assert set(KEYS) <= {step["action"] for step in printed}  # the run shows every kind pinned here
    for step in printed:
        assert list(step) == KEYS[step["action"]], step
    assert printed == [step.to_json() for step in result.refined.steps]
    split = next(step for step in printed if step["action"] == "split")
    assert json.dumps(split).startswith('{"step": 1, "action": "split", "query": "Compare Cooling System rules"')
