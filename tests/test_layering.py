"""The package seams hold: only longqa/store/ speaks SQL, longqa's packages import one another
downward only (no cycle), and ask/'s rooms import in the order the question flows.

Both checks read the source with `ast`, so prose in comments and docstrings never trips them and
an import written inside a function counts like one at the top of a module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import longqa

ROOT = Path(longqa.__file__).parent
# A statement, not a word: "SELECT x FROM", "INSERT INTO", "UPDATE t SET", "DELETE FROM".
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
)
# The floors, lowest first. A unit may import its own floor and any floor below it, never one
# above. The bottom floor is plain text and models (words, sentences, stems; the model backends)
# beside the shared modules every package reads (tokens, the tree types, settings helpers, errors,
# the environment's variables).
FLOORS = [
    {"longqa", "__init__", "text", "models", "tokens", "tree_types", "tunables", "errors", "config", "names", "linear",
     "probabilities", "environment"},
    {"parse"},
    {"store", "embedding"},  # embedding.py writes leaf vectors into the store
    {"structure"},
    {"retrieve"},
    {"ask"},
    {"graph"},
    {"ingest", "reindex"},
    {"eval"},
    {"cli", "__main__"},
]
# Inside ask/: the question is read (analysis), then the trees searched (search), then the answer
# chosen (answer); a room never imports a later one. The top modules (pipeline, result, context,
# settings, prompts, decisions) join the rooms: rooms may use settings, prompts, the judgements
# asked of a model in its own form (decisions.py, which imports only prompts and models) and the
# context's passages.
ROOMS = ["analysis", "search", "answer"]
SHARED_TOP = {"longqa.ask.settings", "longqa.ask.prompts", "longqa.ask.decisions", "longqa.ask.context"}


def _modules() -> dict[str, ast.Module]:
    return {
        ".".join(path.relative_to(ROOT.parent).with_suffix("").parts): ast.parse(path.read_text(), str(path))
        for path in sorted(ROOT.rglob("*.py"))
    }


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings (prose, not code)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _string_parts(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, text) of every string literal that is not a docstring; an f-string's literal parts
    are joined with a placeholder so that `f"SELECT {cols} FROM t"` still reads as SQL."""
    skip = _docstrings(tree)
    parts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else " x " for v in node.values)
            parts.append((node.lineno, text))
            skip.update(id(v) for v in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            parts.append((node.lineno, node.value))
    return parts


def _package(module: str) -> str:
    """`longqa.store.db` -> `store`; a top-level module is its own unit (`longqa.ingest` -> `ingest`)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "longqa"


def _runs_on_import(node: ast.AST) -> bool:
    """False for the blocks an import of the module never runs: `if __name__ == "__main__":` (the
    module run as a script is `__main__`, another module) and `if TYPE_CHECKING:`."""
    if not isinstance(node, ast.If):
        return True
    test = ast.unparse(node.test)
    return test not in ("TYPE_CHECKING", "typing.TYPE_CHECKING") and "__main__" not in test


def _statements(tree: ast.Module):
    """Every node of the module's code that an import of it can run, at any depth (an import
    written inside a function counts like one at the top)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        pending += [child for child in ast.iter_child_nodes(node) if _runs_on_import(child)]


def _imports(module: str, tree: ast.Module, names: set[str] = frozenset()) -> set[str]:
    """Every longqa module `module` imports, at any depth of its code. `from package import
    module` is an import of that module (of the package's `__init__` only for a name it defines)
    when `names` (the package's modules) says it is one."""
    here = module.split(".")[:-1]  # the package a relative import starts from
    found = set()
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("longqa"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("longqa"):
                inside = {f"{target}.{alias.name}" for alias in node.names}
                found.update(inside)
                if not inside <= names:
                    found.add(target)
    return found


def module_edges() -> set[tuple[str, str]]:
    """(importing module, imported module) for every import of one longqa module by another."""
    modules = _modules()
    names = {m.removesuffix(".__init__") for m in modules}
    edges = set()
    for module, tree in modules.items():
        for target in _imports(module, tree, names):
            while target not in names and "." in target:  # `from longqa.x import name`
                target = target.rsplit(".", 1)[0]
            if target in names and target not in ("longqa", module.removesuffix(".__init__")):
                edges.add((module, target))
    return edges


def package_graph(skip: set[tuple[str, str]] = frozenset()) -> dict[str, dict[str, set[str]]]:
    """package -> imported package -> the modules that make that import (for the message);
    `skip` leaves out (package, imported module) pairs."""
    graph: dict[str, dict[str, set[str]]] = {}
    for module, target in module_edges():
        source, imported = _package(module), _package(target)
        if imported != source and (source, target) not in skip:
            graph.setdefault(source, {}).setdefault(imported, set()).add(module)
    return graph


def _cycles(graph: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Each strongly connected group of more than one package (Tarjan), as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_sql_outside_the_store():
    found = []
    for module, tree in _modules().items():
        if module.startswith("longqa.store."):
            continue
        for line, text in _string_parts(tree):
            if SQL.search(text):
                found.append(f"{module}:{line}: {' '.join(text.split())[:70]}")
    assert not found, "SQL outside longqa/store/:\n" + "\n".join(found)


def test_the_sql_check_sees_sql():
    """The check above can fail: it finds a statement in code and ignores one in a docstring."""
    tree = ast.parse('"""SELECT id FROM nodes in prose."""\nq = f"SELECT {c} FROM nodes"\nr = "DELETE FROM t"\n')
    found = [text for _, text in _string_parts(tree) if SQL.search(text)]
    assert len(found) == 2 and all("prose" not in text for text in found)


def test_no_import_cycle_between_packages():
    graph = package_graph()
    cycles = _cycles(graph)
    lines = []
    for group in cycles:
        for source in group:
            for target in group:
                if target in graph.get(source, {}):
                    lines.append(f"{source} -> {target} ({', '.join(sorted(graph[source][target]))})")
    assert not cycles, "import cycles between longqa packages:\n" + "\n".join(lines)


# Circles still open, each named with why: the test below fails on any other, and on one of these
# once it is closed (then take it out of here).
OPEN_CIRCLES: set[tuple[str, str]] = set()


def module_graph() -> dict[str, dict[str, set[str]]]:
    """module -> imported module -> the module that imports it (packages by their `__init__`)."""
    graph: dict[str, dict[str, set[str]]] = {}
    for module, target in module_edges():
        graph.setdefault(module.removesuffix(".__init__"), {}).setdefault(target, set()).add(module)
    return graph


def test_no_import_circle_between_modules():
    """No module imports one that imports it back, through any chain: ask/settings.py, which every
    step reads, included (its documentation reads the answer ranker from settings_doc.py)."""
    circles = {tuple(group) for group in _cycles(module_graph())}
    assert not circles - OPEN_CIRCLES, "import circles between longqa modules:\n" + "\n".join(
        " <-> ".join(group) for group in sorted(circles - OPEN_CIRCLES))
    assert not OPEN_CIRCLES - circles, f"closed now, take them out of OPEN_CIRCLES: {sorted(OPEN_CIRCLES - circles)}"


def test_the_module_walk_sees_lazy_imports_and_skips_the_script_block():
    tree = ast.parse("def f():\n    from longqa.parse import text\n"
                     "if __name__ == '__main__':\n    from longqa.ask import pipeline\n")
    assert _imports("longqa.x", tree, {"longqa.parse.text"}) == {"longqa.parse.text"}


def floor(unit: str) -> int:
    for rank, units in enumerate(FLOORS):
        if unit in units:
            return rank
    raise AssertionError(f"longqa.{unit} is on no floor: add it to FLOORS")


def test_every_package_is_on_a_floor():
    units = {_package(module) for module in _modules()}
    for unit in units:
        floor(unit)


def test_packages_import_downward_only():
    """text/models → parse → store → structure → retrieve → ask → graph → ingest → eval → cli: no
    unit imports a unit on a higher floor, with no exception."""
    wrong = []
    for source, targets in package_graph().items():
        for target, modules in targets.items():
            if floor(target) > floor(source):
                wrong.append(f"{source} -> {target} ({', '.join(sorted(modules))})")
    assert not wrong, "imports against the layering:\n" + "\n".join(sorted(wrong))


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) >= 3 and parts[1] == "ask" and parts[2] in ROOMS else None


def test_ask_rooms_import_in_order():
    """analysis → search → answer: a room imports nothing of a later room nor ask's pipeline or
    result (which sit above all three); rooms may share settings, prompts, decisions and the context."""
    wrong = []
    for module, target in module_edges():
        room = _room(module)
        if room is None or not target.startswith("longqa.ask"):
            continue
        other = _room(target)
        if other is not None and ROOMS.index(other) > ROOMS.index(room):
            wrong.append(f"{module} -> {target}")
        elif other is None and target not in SHARED_TOP and target != "longqa.ask":
            wrong.append(f"{module} -> {target}")
    assert not wrong, "imports against the rooms' order:\n" + "\n".join(sorted(wrong))


# What the rooms after analysis may take from it: the records a question is read into, and the
# table words arithmetic shares with the table reader. Functions that parse the question's wording
# stay inside analysis/, so the question is read once.
READ_RECORDS = {"Asked", "read", "Analysis", "Arithmetic", "NOT_LABEL", "RESPECTIVELY", "YEAR"}


def question_readers() -> list[str]:
    wrong = []
    for module, tree in _modules().items():
        if not module.startswith("longqa.ask") or _room(module) == "analysis":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("longqa.ask.analysis"):
                names = {alias.name for alias in node.names}
                if node.module == "longqa.ask.analysis":
                    names -= {"analyze"}  # the pipeline runs the analysis
                wrong += [f"{module} imports {node.module}.{name}" for name in sorted(names - READ_RECORDS)]
    return wrong


def test_only_analysis_reads_the_question():
    wrong = question_readers()
    assert not wrong, "question parsing outside ask/analysis/:\n" + "\n".join(wrong)


def test_the_cycle_check_sees_a_cycle():
    graph = {"a": {"b": {"a.x"}}, "b": {"c": {"b.y"}}, "c": {"a": {"c.z"}}, "d": {"a": {"d.w"}}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_tree_types_import_nothing_of_longqa():
    """The bottom of the graph: every package may use the tree without importing another."""
    assert not [target for module, target in module_edges() if module == "longqa.tree_types"]
    assert ("longqa.store.nodes", "longqa.tree_types") in module_edges()  # the walk sees imports
