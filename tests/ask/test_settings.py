"""One settings object: every tunable of the ask pipeline described, and the one that runs."""

import re
from dataclasses import fields

import pytest

from longqa.ask.search import refine
from longqa.ask.settings import DEFAULTS, AskSettings, SettingsError, applied, flatten, in_effect
from longqa.retrieve.hybrid import HybridRetriever
from longqa.tunables import described
from tests.ask_support import make_pipeline


def test_every_tunable_says_what_it_is_and_how_it_was_chosen():
    rows = described(AskSettings())
    assert len(rows) == len({name for name, _, _, _ in rows}) > 60
    assert not [name for name, _, what, chosen in rows if not what or not chosen]
    assert {name.split(".")[0] for name, _, _, _ in rows} == {f.name for f in fields(AskSettings)}


def test_settings_are_read_when_a_step_runs_not_copied_at_import():
    changed = DEFAULTS.with_values({"answer.focus_tokens": "99"})
    assert in_effect() is DEFAULTS
    with applied(changed):
        assert in_effect().answer.focus_tokens == 99
    assert in_effect().answer.focus_tokens == DEFAULTS.answer.focus_tokens
    # no step keeps a copy of a default: the context's fill and the retriever read what they are given
    assert refine.select.__defaults__[0] is None  # the fill floor in effect when it runs
    assert HybridRetriever.k is None  # the retrieval section's k unless one is given


def test_the_pipeline_reports_what_it_runs_with(db):
    pipeline = make_pipeline(db, k=7, confidence=0.9)
    effective = pipeline.settings_in_effect()
    assert (effective.retrieval.k, effective.search.confidence) == (7, 0.9)
    assert effective.relevance.cosine_min == pipeline.cosine_min != AskSettings().relevance.cosine_min
    assert "retrieval.k = 7" in effective.lines()
    table = AskSettings().table().splitlines()
    assert table[0].startswith("| setting | default |") and len(table) == len(AskSettings().lines()) + 2


def test_the_settings_document_is_current():
    from pathlib import Path

    from longqa.ask.settings_doc import document

    written = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text(encoding="utf-8")
    assert written == document(), "docs/settings.md is out of date: python -m longqa.ask.settings > docs/settings.md"


def layout_problems(readme: str, root) -> list[str]:
    """What the Layout table (docs/development.md) gets wrong about the package under `root` (the
    repository): a package folder it leaves out, or a path it names that does not exist."""
    table = readme.split("## Layout", 1)[1].split("\n\n", 2)[1]  # the block after the heading
    named = {path for row in table.splitlines()[2:] for path in re.findall(r"`([^`]+)`", row.split("|")[1])}
    packages = {f"{init.parent.relative_to(root).as_posix()}/" for init in (root / "longqa").rglob("__init__.py")}
    packages.discard("longqa/")
    return ([f"{path} is missing from the table" for path in sorted(packages - named)]
            + [f"{path} does not exist" for path in sorted(named) if not (root / path).exists()])


def test_the_readme_layout_names_every_package_folder_and_nothing_else():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    readme = (root / "docs" / "development.md").read_text(encoding="utf-8")
    assert layout_problems(readme, root) == []
    assert {"longqa/ask/analysis/", "longqa/ask/search/", "longqa/ask/answer/"} <= set(re.findall(r"`(longqa/[^`]*)`", readme))
    # the check fails on a row left out and on a path that is gone
    stale = readme.replace("| `longqa/graph/` |", "| `longqa/graphs/` |")
    assert layout_problems(stale, root) == ["longqa/graph/ is missing from the table", "longqa/graphs/ does not exist"]


def test_values_are_converted_to_each_fields_type():
    changed = DEFAULTS.with_values({"answer.quote_sentences": "5", "search.use_loop": "false",
                                    "answer.focus_weights": "0.6,0.3,0.1", "search.confidence": 1})
    assert changed.answer.quote_sentences == 5 and changed.search.use_loop is False
    assert changed.answer.focus_weights == (0.6, 0.3, 0.1) and changed.search.confidence == 1.0
    assert DEFAULTS.answer.quote_sentences != 5  # the defaults themselves are untouched


@pytest.mark.parametrize("key, value, message", [
    ("answer.no_such_field", "1", "unknown setting 'answer.no_such_field'"),
    ("nowhere.quote_sentences", "1", "unknown setting"),
    ("answer.quote_sentences", "many", "takes int"),
    ("search.use_loop", "maybe", "takes bool"),
    ("answer.focus_weights", "1,2", "takes 3 comma-separated numbers"),
])
def test_a_wrong_key_or_value_is_one_clear_error(key, value, message):
    with pytest.raises(SettingsError, match=message):
        DEFAULTS.with_values({key: value})


def test_a_toml_document_flattens_to_section_keys():
    assert flatten({"answer": {"quote_sentences": 5}, "search": {"max_nodes": 4}}) == {
        "answer.quote_sentences": 5, "search.max_nodes": 4}


def test_every_file_a_setting_names_exists():
    """Descriptions name the code and the reports behind a setting (copied into docs/settings.md):
    each path, from the repository, longqa/ or longqa/ask/, is a file there (a `*` matches as a glob)."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    missing = []
    for name, _, what, chosen in described(AskSettings()):
        for path in re.findall(r"[\w.*-]+(?:/[\w.*-]+)+\.(?:py|json|jsonl|md)\b", f"{what} {chosen}"):
            if not any(list(base.glob(path)) for base in (repo, repo / "longqa", repo / "longqa" / "ask")):
                missing.append(f"{name}: {path}")
    assert not missing, "settings name files that do not exist:\n" + "\n".join(missing)
