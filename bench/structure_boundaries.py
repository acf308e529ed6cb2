"""Model structuring against known answers: documents whose structure is known, headings removed.

    python bench/structure_boundaries.py [--set tune|report|all] [--max-tokens 6000] [--no-titles]
        [--sweep] [--only NAME ...]

Each document is parsed and given its normal tree (PDF bookmarks or layout headings, markdown
`#` headings: what `longqa ingest` stores); that tree is the truth. Its heading blocks are then
removed and the plain paragraphs handed to the model structurer (`--structure llm`, the default
models). A predicted start counts when it lies within 300 characters of a true one (one to one).
Printed per document and per set: boundary precision / recall / F1 for top-level sections, for
subsections (true subsection starts that do not coincide with a section start) and for starts at
any level; title quality (token F1 of the predicted title against the true heading, over matched
starts); wall and CPU seconds per 1,000 input tokens with the load average.

The documents are split into a tune and a report half by a hash of their names (fixed). Tune on
`--set tune` (with `--sweep` and `--no-titles`, which reuse each document's vectors across settings),
then read the figures of `--set report`. Needs ../shared/evaldata (the handbook alone without it).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from longqa.parse import parse_file
from longqa.structure.boundaries import BoundarySettings, gap_scores, section_plan
from longqa.structure.known_boundaries import (
    KnownDocument, Score, predicted_starts, score_starts, strip_headings,
)
from longqa.structure.llm import LlmStructurer, StructureOptions
from longqa.structure.tree import walk
from longqa.structure.paragraph_units import paragraph_units, unit_pages
from longqa.structure.unit_cues import unit_indents
from longqa.structure.unit_shape import unit_layout, unit_shapes

REPO = Path(__file__).resolve().parent.parent
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata")) / "docs"
# Documents with a reliable known structure: the sample handbook (bookmarks), arXiv papers and
# Wikipedia pages from UDA (bookmarks or layout headings), and multi-article files (one `#`
# heading per article). FinanceBench filings are left out: their layout "headings" are mostly
# table captions and cover-page lines, not a structure to recover.
UDA = ["1705.07830.pdf", "1801.05147.pdf", "1809.01202.pdf", "1810.08699.pdf", "1909.00754.pdf",
       "1912.01214.pdf", "2001.03131.pdf", "Ben Platt (actor).pdf", "Hannah John-Kamen.pdf",
       "Jennifer Jones.pdf", "Oklahoma.pdf", "Smallville.pdf", "Supreme Court of the United States.pdf"]
MULTI_ARTICLE = 6  # files taken from each of hotpotqa/ and musique/ (sorted by name)


@dataclass
class Result:
    top: Score = field(default_factory=Score)
    sub: Score = field(default_factory=Score)
    any: Score = field(default_factory=Score)
    title_f1: list[float] = field(default_factory=list)
    tokens: int = 0
    wall: float = 0.0
    cpu: float = 0.0

    def add(self, other) -> None:
        """Adds another Result, or a document's BoundaryScores."""
        for name in ("top", "sub", "any"):
            getattr(self, name).add(getattr(other, name))
        self.title_f1 += other.title_f1
        self.tokens += getattr(other, "tokens", 0)
        self.wall += getattr(other, "wall", 0.0)
        self.cpu += getattr(other, "cpu", 0.0)


def split_of(name: str) -> str:
    return "tune" if int(hashlib.sha1(name.encode()).hexdigest(), 16) % 2 == 0 else "report"


def sources() -> list[Path]:
    paths = [REPO / "examples" / "kestrel_valley_handbook.pdf"]
    if EVALDATA.is_dir():
        paths += [EVALDATA / "uda" / name for name in UDA if (EVALDATA / "uda" / name).exists()]
        for folder in ("hotpotqa", "musique"):
            paths += sorted((EVALDATA / folder).glob("*.md"))[:MULTI_ARTICLE]
    return paths


def plan_starts(units, plan) -> list[tuple[int, int, str]]:
    return [(units[u].start, level, "") for u, level in plan]


def cues(case: KnownDocument, options: StructureOptions) -> str:
    """The wording, layout and shape cues boundaries.py reads in a document (unit_cues.py,
    unit_shape.py), for the log."""
    body, units, _ = paragraph_units(case.doc, options.unit_min_tokens, options.unit_max_tokens)
    texts = [body[u.start : u.end] for u in units]
    shapes = shapes_of(case, units, texts)
    indents = unit_indents(case.doc, [u.start for u in units])
    settings = options.boundaries
    if not settings.indent_bonus:  # still count the flush starts the cue would see
        settings = dataclasses.replace(settings, indent_bonus=1.0)
    gaps = gap_scores(None, texts, settings, unit_pages(units), shapes, indents)
    kind = "collection of articles" if gaps.collection else "running text"
    other = ", ".join(f"{shape} {shapes.count(shape)}" for shape in sorted(set(shapes) - {"prose"}))
    known = [v for v in indents if v is not None]
    indented = sum(1 for v in known if v >= settings.indent_points)
    return (f"   {kind}: {len(units)} units, article openers {int(gaps.opener.sum())}, "
            f"mid-sentence starts {int(gaps.continuation.sum())}, page breaks {int(gaps.page_break.sum())}, "
            f"first-line indent known {len(known)} (indented {indented}), flush starts counted "
            f"{int(gaps.flush.sum())}; non-prose units: {other or 'none'}")


def shapes_of(case: KnownDocument, units, texts: list[str]) -> list[str]:
    return unit_shapes(texts, unit_layout(case.doc, [(u.start, u.end) for u in units]))


def summary(label: str, result: Result) -> str:
    titles = sum(result.title_f1) / len(result.title_f1) if result.title_f1 else float("nan")
    per_k = 1000 / max(result.tokens, 1)
    return (f"{label}: top {result.top.text()} | sub {result.sub.text()} | any {result.any.text()} | "
            f"title F1 {titles:.2f} | {result.wall * per_k:.2f} s wall, {result.cpu * per_k:.2f} s CPU "
            f"per 1k tokens ({result.tokens:,} tokens) | load {os.getloadavg()[0]:.1f}")


def sweep(cases: list[KnownDocument], embedder) -> None:
    """Boundary settings against the cases, each document embedded once."""
    prepared = []
    for case in cases:
        options = StructureOptions()
        body, units, _ = paragraph_units(case.doc, options.unit_min_tokens, options.unit_max_tokens)
        texts = [body[u.start : u.end] for u in units]
        vectors = embedder.embed([" ".join(t.split()) for t in texts])
        prepared.append((case, units, texts, vectors, unit_pages(units), shapes_of(case, units, texts),
                         unit_indents(case.doc, [u.start for u in units])))
    grid = {
        "indent_bonus": (0.0, 1.5, 2.5, 4.0),
        "indent_penalty": (0.0, 1.0),
        "lead_in_subsections": (False, True),
        "indented_share": (0.4, 0.7),
    }
    rows = []
    for values in itertools.product(*grid.values()):
        settings = dataclasses.replace(BoundarySettings(), **dict(zip(grid, values)))
        total = Result()
        for case, units, texts, vectors, pages, shapes, indents in prepared:
            plan = section_plan(gap_scores(vectors, texts, settings, pages, shapes, indents),
                                [u.tokens for u in units], settings)
            total.add(score_starts(case, plan_starts(units, plan)))
        rows.append((total.top.prf()[2], total.any.prf()[2], values, total))
    for top, anyf, values, total in sorted(rows, key=lambda r: -(r[0] + r[1]))[:24]:
        print(f"top {total.top.text()} any F1 {anyf:.2f} sub {total.sub.text()}  {dict(zip(grid, values))}")
    default = tuple(getattr(BoundarySettings(), name) for name in grid)
    for top, anyf, values, total in rows:
        if values == default:
            print(f"defaults: top {total.top.text()} any F1 {anyf:.2f} sub {total.sub.text()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", default="report", choices=("tune", "report", "all"))
    parser.add_argument("--max-tokens", type=int, default=6000, help="cut each document at about N tokens")
    parser.add_argument("--no-titles", action="store_true", help="boundaries only (no generator calls)")
    parser.add_argument("--sweep", action="store_true", help="try a grid of boundary settings")
    parser.add_argument("--only", nargs="*", help="documents whose name contains one of these")
    args = parser.parse_args()
    from longqa.models.resolve import load_embedder, load_generator

    cases = []
    for path in sources():
        if args.set != "all" and split_of(path.name) != args.set:
            continue
        if args.only and not any(part in path.name for part in args.only):
            continue
        case = strip_headings(parse_file(path), args.max_tokens)
        if case is not None:
            cases.append(case)
    embedder = load_embedder()
    print(f"{len(cases)} documents ({args.set} set), {sum(c.tokens for c in cases):,} tokens; "
          f"embedder {embedder.name}; LONGQA_THREADS={os.environ.get('LONGQA_THREADS', '')}; "
          f"load {os.getloadavg()[0]:.1f} (shared 2-core machine)")
    if args.sweep:
        sweep(cases, embedder)
        return
    generator = load_generator()
    generator.complete("Title:", max_tokens=1)  # warm the model outside the timed runs
    options = StructureOptions(titles=not args.no_titles)
    total, groups = Result(), {}
    for case in cases:
        structurer = LlmStructurer(generator, None, embedder, options)
        wall, cpu = time.perf_counter(), time.process_time()
        root = structurer(case.doc)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        result = Result(tokens=case.tokens, wall=wall, cpu=cpu)
        result.add(score_starts(case, predicted_starts(root)))
        total.add(result)
        group = "multi-article" if case.name.endswith(".md") else "pdf"
        groups.setdefault(group, Result()).add(result)
        note = "" if root is not None else f"  flat: {structurer.report.reason}"
        print(summary(case.name[:40], result) + note)
        print(cues(case, options))
        if root is not None and not args.no_titles:
            print("   titles: " + " | ".join(n.title for n in walk(root) if n.kind == "section")[:300])
    for group, result in sorted(groups.items()):
        print(summary(f"\n{group} ({args.set})", result))
    print(summary(f"\nALL ({args.set}, {len(cases)} documents)", total))


if __name__ == "__main__":
    main()
