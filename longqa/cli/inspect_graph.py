"""`longqa inspect graph DOC`: a document's information-point graph (built by `ingest --graph`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from longqa.cli.app import DbOption, JsonOption, console_out, db_from, inspect_app, print_json
from longqa.errors import NotFoundError
from longqa.names import shown
from longqa.store.documents import resolve
from longqa.store.graph import load_graph
from longqa.store.nodes import get_nodes


@inspect_app.command("graph")
def inspect_graph(
    doc: str = typer.Argument(..., help="Document id, path, file name or title (matched exactly)."),
    edges: int = typer.Option(3, "--edges", min=0, help="Strongest edges shown per point."),
    db: Optional[Path] = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Levels, information points and their strongest edges."""
    store = db_from(db, readonly=True)
    record = resolve(store, doc)
    graph = load_graph(store, record["id"])
    if graph is None:
        raise NotFoundError(f"{shown(record['path'])}: no graph for its current content "
                            "(build one with `longqa ingest --graph PATH`)")
    leaves = get_nodes(store, sorted({n.leaf_id for n in graph.nodes}))
    by_id = {n.id: n for n in graph.nodes}
    children: dict[int, list[tuple[int, float]]] = {}
    for parent, child, weight in graph.edge_list:
        children.setdefault(parent, []).append((child, weight))

    def text_of(node) -> str:
        return node.text if node.level else (leaves[node.leaf_id].text if node.leaf_id in leaves else "")

    def page_of(node) -> int | None:
        leaf = leaves.get(node.leaf_id)
        return leaf.page_start if leaf else None

    header = {"doc_id": graph.doc_id, "title": record["title"], "points": graph.points, "edges": graph.edges,
              "model": graph.model, "embed_model": graph.embed_model, "levels": graph.levels,
              "input_tokens": graph.input_tokens, "generated_tokens": graph.generated_tokens,
              "seconds": graph.seconds}
    if as_json:
        nodes = [{"id": n.id, "level": n.level, "ord": n.ord, "leaf_id": n.leaf_id, "page": page_of(n),
                  "tokens": n.tokens, "text": text_of(n),
                  "edges": [{"child": c, "weight": round(w, 4)} for c, w in children.get(n.id, [])]}
                 for n in graph.nodes]
        print_json({**header, "nodes": nodes})
        return
    out = console_out()
    out.print(Text(f"{record['title']}  graph: {graph.levels} levels, {graph.points} points, "
                   f"{graph.edges} edges ({graph.model or graph.embed_model})", style="bold"))
    for level in range(graph.levels, 0, -1):
        points = [n for n in graph.nodes if n.level == level]
        out.print(Text(f"\nlevel {level}: {len(points)} points, {sum(n.tokens for n in points):,} tok", style="bold"))
        for node in points:
            line = Text(f"#{node.id} ", style="magenta")
            line.append(" ".join(node.text.split())[:110])
            line.append(f"  p. {page_of(node)}", style="cyan")
            out.print(line)
            for child, weight in children.get(node.id, [])[:edges]:
                target = by_id[child]
                preview = " ".join(text_of(target).split())[:70]
                out.print(Text(f"    {weight:.2f} → #{child} (level {target.level}) {preview}", style="dim"),
                          markup=False, highlight=False)
    leaf_count = sum(1 for n in graph.nodes if n.level == 0)
    out.print(Text(f"\nlevel 0: {leaf_count} leaves", style="bold"))
