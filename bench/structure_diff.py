"""What a parser or structure change does to the trees of real documents: run it once with the
code before the change and once after, then compare the two outputs.

    PYTHONPATH=/path/to/old/checkout python bench/structure_diff.py --out before.json DOC_OR_DIR ...
    python bench/structure_diff.py --out after.json DOC_OR_DIR ...
    python bench/structure_diff.py --compare before.json after.json

Per document, with no model: its title, its section titles (as the tree holds them) and a digest
of its leaves' text. The comparison lists, per document, the sections lost and gained, a changed
title, and whether the leaves' text changed; its first line says how many documents lost a
section. The load average is printed beside each run, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path

SUFFIXES = {".pdf", ".txt", ".md", ".markdown", ".html", ".htm", ""}


def documents(inputs: list[str]) -> list[Path]:
    found: list[Path] = []
    for name in inputs:
        path = Path(name)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        elif path.is_file():
            found.append(path)
    return found


def tree_of(path: Path) -> dict:
    from longqa.parse import parse_file
    from longqa.structure.tree import leaves, sections
    from longqa.structure.tree_source import structure_document

    try:
        doc = parse_file(path)
        root, source = structure_document(doc, "auto")
    except Exception as exc:  # a document the reader refuses is reported, not fatal
        return {"error": f"{type(exc).__name__}: {exc}"}
    body = "\n".join(leaf.text for leaf in leaves(root))
    return {"title": root.title, "source": source, "sections": [" ".join(s.title.split()) for s in sections(root)],
            "leaves": hashlib.sha256(body.encode()).hexdigest()[:16], "leaf_count": len(leaves(root))}


def compare(before: dict, after: dict) -> None:
    lost_docs = 0
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, {}), after.get(name, {})
        lost = sorted(set(old.get("sections", [])) - set(new.get("sections", [])))
        gained = sorted(set(new.get("sections", [])) - set(old.get("sections", [])))
        lost_docs += bool(lost)
        notes = []
        if old.get("title") != new.get("title"):
            notes.append(f"title {old.get('title')!r} -> {new.get('title')!r}")
        if lost or gained:
            notes.append(f"sections {len(old.get('sections', []))} -> {len(new.get('sections', []))}"
                         f" (lost {len(lost)}, gained {len(gained)})")
        if old.get("leaves") != new.get("leaves"):
            notes.append(f"leaves' text changed ({old.get('leaf_count')} -> {new.get('leaf_count')} leaves)")
        if old.get("error") != new.get("error"):
            notes.append(f"error {old.get('error')!r} -> {new.get('error')!r}")
        if notes:
            print(f"{name}: " + "; ".join(notes))
            for title in lost[:8]:
                print(f"    lost: {title[:90]}")
            for title in gained[:8]:
                print(f"    gained: {title[:90]}")
    print(f"{lost_docs} of {len(set(before) | set(after))} documents lost a section")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="*")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.compare:
        compare(*(json.loads(path.read_text()) for path in args.compare))
        return
    trees = {str(path): tree_of(path) for path in documents(args.inputs)}
    text = json.dumps(trees, indent=1, sort_keys=True)
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    print(f"{len(trees)} documents; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
