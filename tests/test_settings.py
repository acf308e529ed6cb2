"""One settings object: every tunable of the ask pipeline described, and the one that runs."""

from dataclasses import fields

from longqa.ask import citations, focus, grounded, refine
from longqa.ask.settings import ANSWER, DEFAULT, AskSettings
from longqa.retrieve.fusion import fuse
from longqa.retrieve.hybrid import HybridRetriever
from longqa.retrieve.settings import RETRIEVAL
from longqa.tunables import described
from tests.ask_support import make_pipeline


def test_every_tunable_says_what_it_is_and_how_it_was_chosen():
    rows = described(AskSettings())
    assert len(rows) == len({name for name, _, _, _ in rows}) > 60
    assert not [name for name, _, what, chosen in rows if not what or not chosen]
    assert {name.split(".")[0] for name, _, _, _ in rows} == {f.name for f in fields(AskSettings)}


def test_modules_run_with_the_settings_values():
    assert (focus.FOCUS_TOKENS, citations.MAX_SOURCES, grounded.NO_ANSWER_PRIOR) == (
        ANSWER.focus_tokens, ANSWER.max_sources, ANSWER.no_answer_prior)
    assert refine.select.__defaults__[0] == DEFAULT.fill_floor  # one 0.1 floor, not two
    assert fuse.__kwdefaults__["cutoff"] == RETRIEVAL.relative_cutoff
    assert HybridRetriever.k == RETRIEVAL.k


def test_the_pipeline_reports_what_it_runs_with(db):
    pipeline = make_pipeline(db, k=7, confidence=0.9)
    effective = pipeline.settings_in_effect()
    assert (effective.retrieval.k, effective.search.confidence) == (7, 0.9)
    assert effective.relevance.cosine_min == pipeline.cosine_min != AskSettings().relevance.cosine_min
    assert "retrieval.k = 7" in effective.lines()
    table = AskSettings().table().splitlines()
    assert table[0].startswith("| setting | default |") and len(table) == len(AskSettings().lines()) + 2


def test_the_settings_page_lists_every_setting_with_its_default():
    from pathlib import Path

    from longqa.ask.settings import AskSettings

    page = (Path(__file__).resolve().parents[1] / "docs" / "settings.md").read_text(encoding="utf-8")
    for row in AskSettings().table().splitlines()[2:]:
        assert row in page, f"docs/settings.md is out of date: {row[:80]}"
