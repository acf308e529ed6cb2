"""The install stays torch-free: longqa's dependency closure holds no deep-learning framework."""

from __future__ import annotations

import re
from importlib import metadata

import pytest

BANNED = {"torch", "transformers", "sentence-transformers", "triton", "tensorflow", "jax"}


def _name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _closure(root: str) -> dict[str, str]:
    """Every distribution reachable from `root` through installed metadata (extras excluded),
    mapped to the distribution that required it first."""
    seen: dict[str, str] = {root: ""}
    todo = [root]
    while todo:
        name = todo.pop()
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra ==" in requirement.replace('"', " ").replace("'", " ") or "extra==" in requirement:
                continue
            dep = _name(requirement)
            if dep and dep not in seen:
                seen[dep] = name
                todo.append(dep)
    return seen


def test_dependency_closure_has_no_deep_learning_framework():
    try:
        metadata.version("longqa")
    except metadata.PackageNotFoundError:
        pytest.skip("longqa is not installed (pip install -e .)")
    closure = _closure("longqa")
    found = {name: closure[name] for name in BANNED if name in closure}
    assert not found, f"banned dependencies (name: required by): {found}"
    assert "pymupdf" in closure and "llama-cpp-python" in closure  # the walk itself works


def test_pymupdf_pinned_below_2():
    """PyMuPDF 2.0 pulls its layout engine, pymupdf4llm and onnxruntime, none of which is used."""
    requires = metadata.requires("longqa") or []
    pymupdf = [r for r in requires if _name(r) == "pymupdf"]
    assert pymupdf and "<2" in pymupdf[0].replace(" ", "")
    assert int(metadata.version("pymupdf").split(".")[0]) < 2
