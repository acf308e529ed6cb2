"""`longqa inspect docs|tree|node` and `longqa rm`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from longqa import config
from longqa.cli.app import DbOption, JsonOption, app, console_err, console_out, db_from, inspect_app, print_json
from longqa.names import shown
from longqa.store.db import exposed_files
from longqa.store.documents import (delete_document, get_document, list_documents, ocr_label, parse_page_ranges,
                                    resolve)
from longqa.store.nodes import get_node, load_tree
from longqa.store.vectors import leaves_without_vectors_by_document
from longqa.tree_types import Node


def pages(node: Node | dict, ocr: set[int] | None = None) -> str:
    """"p. 5", "pp. 5–7"; with ", OCR" where those pages were read by OCR (`ocr`: the document's)."""
    start, end = (node.page_start, node.page_end) if isinstance(node, Node) else (node["page_start"], node["page_end"])
    span = f"p. {start}" if start == end else f"pp. {start}–{end}"
    return span + ocr_label(start, end, ocr or set()).replace("-", "–")


@inspect_app.command("docs")
def inspect_docs(db: Optional[Path] = DbOption, as_json: bool = JsonOption) -> None:
    """One row per document: id, title, path, pages, nodes, structure source, and a note where
    some of its leaves have no vectors (dense search misses them until `longqa reindex`)."""
    store = db_from(db, readonly=True)
    docs = list_documents(store)
    missing = leaves_without_vectors_by_document(store)
    _warn_exposed(config.db_path(db))
    keys = ("id", "title", "path", "pages", "nodes", "tokens", "structure", "added")
    if as_json:
        print_json([{**{k: d[k] for k in keys}, "ocr_pages": sorted(parse_page_ranges(d.get("ocr_pages"))),
                     "leaves_without_vectors": missing.get(d["id"], (0, 0))[0],
                     "note": _vectors_note(missing.get(d["id"]))} for d in docs])
        return
    if not docs:
        console_err().print("The store is empty: add documents with `longqa ingest PATH`.")
        return
    table = Table(box=None, header_style="bold")
    columns = ("id", "title", "pages", "nodes", "tokens", "structure", "path") + (("note",) if missing else ())
    for column in columns:
        table.add_column(column, justify="right" if column in ("id", "pages", "nodes", "tokens") else "left")
    for d in docs:
        row = [str(d["id"]), shown(d["title"]), _pages_cell(d), str(d["nodes"]), f"{d['tokens']:,}",
               d["structure"], shown(d["path"])]
        table.add_row(*row, *((_vectors_note(missing.get(d["id"])) or "",) if missing else ()))
    console_out().print(table)


def _pages_cell(document: dict) -> str:
    """The page count, and how many of them were read by OCR: "7 (7 OCR)"."""
    read = len(parse_page_ranges(document.get("ocr_pages")))
    return f"{document['pages']} ({read} OCR)" if read else str(document["pages"])


def _vectors_note(missing: tuple[int, int] | None) -> str | None:
    """What a document whose embedding did not finish lacks, and what completes it."""
    if not missing:
        return None
    count, leaves = missing
    which = "no vectors" if count == leaves else f"no vectors for {count:,} of {leaves:,} leaves"
    return f"stored, {which}: run `longqa reindex`"


def _warn_exposed(path: Path) -> None:
    """Stores made before they were created private (or copied with a loose umask) stay readable
    by every local user; say so on stderr, with the command that fixes it."""
    exposed = exposed_files(path)
    if exposed:
        modes = ", ".join(f"{shown(p.name)} {mode:04o}" for p, mode in exposed)
        names = " ".join(shown(p) for p, _ in exposed)
        console_err().print(
            f"longqa: warning: other users can read this store ({modes}); make it private with: chmod 600 {names}",
            markup=False, highlight=False,
        )


def tree_json(node: Node, depth: int | None, ocr: set[int] | None = None) -> dict:
    data = {"id": node.id, "kind": node.kind, "title": node.title, "page_start": node.page_start,
            "page_end": node.page_end, "tokens": node.tokens}
    if ocr:
        data["ocr_pages"] = sorted(n for n in ocr if node.page_start <= n <= node.page_end)
    if node.is_leaf:
        data["text"] = node.text
    if depth is None or node.depth < depth:
        data["children"] = [tree_json(child, depth, ocr) for child in node.children]
    else:
        data["children"] = []
    return data


def _label(node: Node, show_ids: bool, ocr: set[int]) -> Text:
    label = Text()
    if node.kind == "paragraph":
        preview = " ".join(node.text.split())
        label.append("¶ ", style="dim")
        label.append(preview[:70] + ("…" if len(preview) > 70 else ""), style="dim")
    else:
        label.append(node.title or "(untitled)", style="bold" if node.depth <= 1 else "")
    label.append(f"  {pages(node, ocr)}", style="cyan")
    label.append(f"  {node.tokens:,} tok", style="green")
    paragraphs = sum(1 for c in node.children if c.is_leaf)
    if paragraphs and node.kind != "paragraph":
        label.append(f"  {paragraphs} ¶", style="dim")
    if show_ids:
        label.append(f"  #{node.id}", style="magenta")
    return label


@inspect_app.command("tree")
def inspect_tree(
    doc: str = typer.Argument(..., help="Document id, path, file name or title (matched exactly)."),
    depth: Optional[int] = typer.Option(None, "--depth", help="Show nodes down to this depth."),
    paragraphs: bool = typer.Option(False, "--paragraphs", "-p", help="List paragraph leaves too."),
    ids: bool = typer.Option(False, "--ids", help="Show node ids (for `inspect node`)."),
    db: Optional[Path] = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Show a document's tree: titles, page ranges, token counts."""
    store = db_from(db, readonly=True)
    record = resolve(store, doc)
    root = load_tree(store, record["id"])
    ocr = parse_page_ranges(record.get("ocr_pages"))
    if as_json:
        print_json(tree_json(root, depth, ocr))
        return
    header = Text(record["title"], style="bold")
    header.append(f"  {pages(root, ocr)}  {root.tokens:,} tok  structure: {record['structure']}", style="dim")
    if ids:
        header.append(f"  #{root.id}", style="magenta")
    view = Tree(header, guide_style="dim")

    def add(branch: Tree, node: Node) -> None:
        for child in node.children:
            if child.is_leaf and not paragraphs:
                continue
            if depth is not None and child.depth > depth:
                continue
            add(branch.add(_label(child, ids, ocr)), child)

    add(view, root)
    console_out().print(view)


@inspect_app.command("node")
def inspect_node(node_id: int = typer.Argument(...), db: Optional[Path] = DbOption, as_json: bool = JsonOption) -> None:
    """One node with its text, path of titles and page span."""
    store = db_from(db, readonly=True)
    node = get_node(store, node_id)
    doc = get_document(store, node.doc_id)
    ocr = parse_page_ranges(doc.get("ocr_pages"))
    data = {"id": node.id, "doc": doc["title"], "doc_id": node.doc_id, "path": node.path, "kind": node.kind,
            "title": node.title, "page_start": node.page_start, "page_end": node.page_end,
            "ocr_pages": sorted(n for n in ocr if node.page_start <= n <= node.page_end),
            "tokens": node.tokens, "parent_id": node.parent_id, "summary": node.summary, "text": node.text}
    if as_json:
        print_json(data)
        return
    out = console_out()
    out.print(Text(f"{node.kind} #{node.id}  {pages(node, ocr)}  {node.tokens:,} tok", style="bold"))
    out.print(Text(" > ".join(p for p in [node.path, node.title] if p), style="cyan"))
    if node.summary:
        out.print(Text(node.summary, style="italic"))
    if node.text:
        out.print()
        out.print(node.text, markup=False, highlight=False)


@app.command("rm")
def rm(
    docs: List[str] = typer.Argument(
        ..., help="Document ids, paths, file names or titles, matched exactly; a name that fits several documents is refused."
    ),
    db: Optional[Path] = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Remove documents and everything derived from them."""
    store = db_from(db, create=False)
    records = [resolve(store, ref) for ref in docs]  # all must exist before anything is removed
    records = list({record["id"]: record for record in records}.values())
    for record in records:
        delete_document(store, record["id"])
    if as_json:
        print_json({"removed": [{"id": r["id"], "path": r["path"]} for r in records]})
    else:
        for record in records:
            console_err().print(f"removed {shown(record['title'])} ({shown(record['path'])})", markup=False,
                                highlight=False)
