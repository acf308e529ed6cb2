"""Every LONGQA_ variable is read in longqa/environment.py and listed in docs/environment.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from longqa import environment
from longqa.errors import ModelError
from tests.test_layering import _docstrings, _modules

REPO = Path(__file__).resolve().parents[1]
NAME = re.compile(r"LONGQA_[A-Z_]+")


def _named_variables(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of each string in code (not a docstring) that is a whole LONGQA_ name: the
    key of an environment read or of a CLI option's envvar. Messages that mention one are longer."""
    skip = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and NAME.fullmatch(node.value)]


def test_no_module_but_environment_names_a_variable_to_read():
    found = [f"{module}:{line}: {name}" for module, tree in _modules().items() if module != "longqa.environment"
             for line, name in _named_variables(tree)]
    assert not found, "LONGQA_ variables read outside longqa/environment.py:\n" + "\n".join(found)


def test_the_check_sees_a_read():
    tree = ast.parse('"""Reads LONGQA_DB."""\nimport os\nos.environ.get("LONGQA_DB")\n'
                     'print("set LONGQA_DEBUG=1 for details")\n')
    assert _named_variables(tree) == [(3, "LONGQA_DB")]


def test_every_variable_is_described_once():
    names = [v.name for v in environment.VARIABLES]
    assert len(names) == len(set(names)) and all(NAME.fullmatch(n) for n in names)
    assert all(v.does and v.default and v.bad_value for v in environment.VARIABLES)


def test_docs_list_every_variable():
    written = (REPO / "docs" / "environment.md").read_text(encoding="utf-8")
    assert written == environment.document(), \
        "docs/environment.md is out of date: python -m longqa.environment > docs/environment.md"


def test_the_readme_names_only_known_variables_and_links_the_list():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    known = {v.name for v in environment.VARIABLES}
    assert set(NAME.findall(readme)) <= known
    assert "docs/environment.md" in readme


def test_bad_values_are_the_documented_errors(monkeypatch):
    monkeypatch.setenv("LONGQA_LLM_TIMEOUT", "0")
    with pytest.raises(ModelError, match=r"LONGQA_LLM_TIMEOUT='0': not a positive number of seconds"):
        environment.llm_timeout()
    monkeypatch.setenv("LONGQA_THREADS", " 2 ")
    assert environment.threads() == 2
    monkeypatch.setenv("LONGQA_THREADS", "-1")
    with pytest.raises(ModelError, match=r"LONGQA_THREADS='-1': expected a positive whole number"):
        environment.threads()
    monkeypatch.setenv("LONGQA_LLM_PARALLEL", "")
    assert environment.llm_parallel() == 1
    monkeypatch.setenv("LONGQA_LLM_PARALLEL", "0")
    with pytest.raises(ModelError, match=r"LONGQA_LLM_PARALLEL='0': expected a positive whole number"):
        environment.llm_parallel()
    for value, decided in (("1", True), ("0", False), ("yes", None), ("", None)):
        monkeypatch.setenv("LONGQA_EXTRA_BUFFERS", value)
        assert environment.extra_buffers() is decided
    monkeypatch.delenv("LONGQA_DEBUG", raising=False)
    assert not environment.debug()


@pytest.mark.parametrize("name, value", [("LONGQA_THREADS", "\u00b2"), ("LONGQA_THREADS", "1000001"),
                                         ("LONGQA_THREADS", "9" * 40), ("LONGQA_LLM_PARALLEL", "\u0663"),
                                         ("LONGQA_LLM_PARALLEL", "0x10")])
def test_whole_numbers_out_of_range_or_not_ascii_digits_are_refused(monkeypatch, name, value):
    # "²".isdigit() holds but int("²") raises: a superscript once ended in an internal error.
    monkeypatch.setenv(name, value)
    read = environment.threads if name == "LONGQA_THREADS" else environment.llm_parallel
    with pytest.raises(ModelError, match=rf"^{name}=.*: expected a positive whole number up to 1000000$"):
        read()
