"""Extraction quality on real documents that nobody here chose: licences as Debian ships them, and
any PDF or HTML manuals fetched with bench/fetch_extraction_docs.sh.

    python bench/extraction.py [DOC ...]      (default: /usr/share/common-licenses/{GPL-3,Apache-2.0,MPL-2.0,GFDL-1.3,
                                               GPL-2,LGPL-2.1,Artistic},
                                               two PDF manuals under /usr/share/doc where present, and
                                               whatever bench/fetch_extraction_docs.sh left in .bench-docs/)

Also, where this system has them, documents as a new user has them: manual pages printed as
text by `man` (a shell's, a version control tool's, an archiver's), a JavaScript runtime's
markdown API pages, and plain-text FAQs with numbered sections (gzipped ones are unpacked to a
temporary folder first).

Per document, with no model: parse and structure time; the share of the leaves' sentences (as the
answer stage splits them) that are whole, i.e. open with a capital, digit, quote or list mark and
end with sentence punctuation (a list item such as "(a) a copy of this License; and" counts as
whole: it is a whole piece of its list); numbered sections found against the numbered section lines in the
source text (plain text only); contents lines (dot leaders, or a section's title with or without a
page number) and index lines left in the leaves;
markdown markup left in the leaves outside fenced code (link brackets, backticks, emphasis marks,
link definitions, comments: what a quote would carry); numbered headings at every depth found
against the distinct numbered heading lines of the source ("6.6.1. Maximum line length": plain
text only); the document's title; running heads left in the leaves (PDF only: the top and bottom lines of PyMuPDF's own page text
that recur, digits aside, atop or at the foot of three pages or more, found in the leaves more
than once each); and the load average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

from longqa.text import sentences
from longqa.parse import parse_file
from longqa.structure.tree import leaves, sections
from longqa.structure.tree_source import structure_document

# Licences that title their numbered sections, and three that number their clauses without titles.
DEFAULTS = [Path("/usr/share/common-licenses") / name for name in (
    "GPL-3", "Apache-2.0", "MPL-2.0", "GFDL-1.3", "GPL-2", "LGPL-2.1", "Artistic")] + [
    # PDF manuals some Debian systems carry: a texinfo manual with running heads that change with
    # the chapter and two indexes at the back, and a specification.
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"), Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")]
FETCHED = Path(__file__).resolve().parents[1] / ".bench-docs"
# Documents as a new user has them, where present: gzipped FAQs, markdown API pages, manual pages.
SYSTEM_FAQS = [Path("/usr/share/doc/sed/sedfaq.txt.gz"), Path("/usr/share/doc/lsof/00FAQ.gz"),
               Path("/usr/share/doc/valgrind/FAQ.txt.gz")]
API_PAGES = [Path("/usr/share/doc/nodejs/api") / name for name in ("child_process.md", "fs.md", "net.md")]
MAN_PAGES = ["bash", "git-log", "tar"]
# Markup a reader never sees: reference and inline link brackets, backticks, emphasis, comments.
_MARKUP = re.compile(r"\]\[(?!,)|\]\(|`|\*\*|__|(?<![\w*])\*(?=[^\s*])[^*\n]+(?<=[^\s*])\*(?![\w*])|"
                     r"(?<![\w_])_(?=[^\s_])[^_\n]+(?<=[^\s_])_(?![\w_])|<!--|^\[[^\]\n]+\]:", re.M)
_FENCED = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
# A numbered heading line of a plain text at any depth: "6.6.1. Maximum line length", "2.3 Scope".
_HEADING_NUMBER = re.compile(r"^[ \t]{0,3}(\d{1,2}(?:\.\d{1,2})+)\.?[ \t]+[A-Z][^\n]{0,80}$", re.M)
_NUMBERED_LINE = re.compile(r"^[ \t*]{0,8}(\d{1,2})\.\s+[A-Z]", re.M)  # "*  6. Disclaimer": a boxed section
_LEADER = re.compile(r"(?:\.\s?){4,}\s*\d{1,4}\s*$", re.M)
_INDEX = re.compile(r"^\\?[^\W\d_][^\n]{0,80}?[, ]\s*\d{1,4}(?:,\s*\d{1,4})+\s*$", re.M)
_CELL_BREAK = re.compile(r"[ \t]*\|[ \t]*")  # a PDF line's wide gaps, read as cell breaks
# A list item is a whole piece of its list: it may open with a lower-case mark ("(a) ", "b) ",
# "iv. ") and end with the "; and", ", or" or "; or," that leads to the next item.
_OPENS = re.compile(r"^(?:\(?(?:[a-z]|[ivx]{1,4})[.)]\s|[\"'“‘(\[]?[A-Z0-9•\-–*])")
_CLOSES = re.compile(r"(?:[.!?:;]|[;,] (?:and|or),?)[\"'”’)\]]*$")


def numbered_in_source(path: Path) -> int:
    """Top-level section numbers the text itself runs through (1, 2, 3 ... as line starts)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    expected, found = None, 0
    for match in _NUMBERED_LINE.finditer(text):
        number = int(match.group(1))
        if expected is None and number in (0, 1) or number == expected:
            found += 1
            expected = number + 1
    return found


def markup_left(body: str) -> int:
    """Characters of markdown markup in the leaves outside fenced code."""
    return sum(len(match.group()) for match in _MARKUP.finditer(_FENCED.sub("", body)))


def numbered_headings(path: Path, root) -> tuple[int, int]:
    """(distinct heading numbers of two or more parts found as sections, distinct such numbers
    the source text opens lines with): every depth, a contents list's copies counted once."""
    text = path.read_text(encoding="utf-8", errors="replace")
    written = {match.group(1) for match in _HEADING_NUMBER.finditer(text)}
    found = {match.group(1) for node in sections(root) if (match := re.match(r"(\d{1,2}(?:\.\d{1,2})+)", node.title))}
    return len(written & found), len(written)


def system_documents(folder: Path) -> list[Path]:
    """The FAQs unpacked, the API pages, and the manual pages printed as text into `folder`."""
    import gzip
    import shutil
    import subprocess

    found = []
    for faq in SYSTEM_FAQS:
        if faq.is_file():
            target = folder / f"{faq.parent.name}-{faq.name.removesuffix('.gz')}"
            target.write_bytes(gzip.decompress(faq.read_bytes()))
            found.append(target)
    found += [page for page in API_PAGES if page.is_file()]
    if shutil.which("man") and shutil.which("col"):
        for name in MAN_PAGES:
            shown = subprocess.run(f"man {name} 2>/dev/null | col -b", shell=True, capture_output=True,
                                   env={**os.environ, "MANWIDTH": "80"})
            if shown.stdout.strip():
                target = folder / f"man-{name}.txt"
                target.write_bytes(shown.stdout)
                found.append(target)
    return found


def running_heads(path: Path, body: str) -> int | None:
    """How many of a PDF's running heads and footers (its pages' first and last lines, read with
    PyMuPDF alone, whose text less digits recurs on three pages or more) the leaves still hold,
    each counted beyond its first occurrence (a chapter's title may be its head too)."""
    if path.suffix.lower() != ".pdf":
        return None
    import pymupdf

    edges: list[str] = []
    with pymupdf.open(path) as pdf:
        for page in pdf:
            lines = [line.strip() for line in page.get_text("text", sort=True).split("\n") if line.strip()]
            edges += lines[:1] + lines[-1:]
    keys = Counter(re.sub(r"\d+", "#", line) for line in set(edges))
    heads = {line for line in edges if keys[re.sub(r"\d+", "#", line)] >= 3 and len(re.findall(r"[^\W\d_]", line)) >= 3}
    return sum(max(0, body.count(head) - 1) if not re.search(r"\d", head) else body.count(head) for head in heads)


def named_sections(root, body: str) -> int:
    """Lines of the leaves that are a section's title, a page number aside: a contents list that
    names the sections without leaders (a web page's links to its sections)."""
    titles = {" ".join(node.title.split()).lower() for node in sections(root) if len(node.title) > 3}
    return sum(1 for line in body.split("\n")
               if re.sub(r"[\s|]+\d{1,4}$", "", " ".join(line.split())).lower() in titles)


def measure(path: Path) -> dict:
    started = time.perf_counter()
    doc = parse_file(path)
    root, source = structure_document(doc, "auto")
    seconds = time.perf_counter() - started
    spans = [(leaf.text, a, b) for leaf in leaves(root) for a, b in sentences.split(leaf.text)]
    whole = sum(1 for text, a, b in spans if _OPENS.match(text[a:b]) and _CLOSES.search(text[a:b]))
    body = "\n".join(leaf.text for leaf in leaves(root))
    numbered = [node for node in sections(root) if re.match(r"\d{1,2}\.", node.title) and node.depth == 1]
    return {
        "document": path.name, "format": doc.format, "structure": source, "seconds": seconds,
        "sentences": len(spans), "whole": whole / len(spans) if spans else 0.0,
        "numbered": len(numbered), "numbered_in_text": numbered_in_source(path) if doc.format == "text" else None,
        "contents_lines": len(_LEADER.findall(_CELL_BREAK.sub(" ", body))) + named_sections(root, body),
        "index_lines": len(_INDEX.findall(_CELL_BREAK.sub(" ", body))),
        "heads": running_heads(path, body),
        "markup": markup_left(body) if doc.format == "markdown" else None,
        "headings": numbered_headings(path, root) if doc.format == "text" else None,
        "title": doc.title,
    }


# A reader's questions about the licences, asked of each one's own store: the sentences the
# answer stage focuses on (what the model reads, and what quotes are cut from) should be whole.
QUESTIONS = {
    "GPL-3": ["What must you do when you convey a modified version?", "Can I charge a fee for conveying copies?",
              "What happens to my licence if I violate the terms?", "What is the Corresponding Source?"],
    "Apache-2.0": ["What must a redistribution of a derivative work carry?", "Does contributing grant a patent licence?",
                   "What is excluded from the warranty?", "What is a Contribution?"],
    "MPL-2.0": ["What happens to the licence if a contributor is sued over patents?",
                "Can Covered Software be combined with code under another licence?",
                "What must be made available when distributing Executable Form?", "What is a Larger Work?"],
    "GFDL-1.3": ["What are Invariant Sections?", "What must I do when copying in quantity?",
                 "How can the document be translated?", "When does the licence terminate?"],
    "GPL-2": ["What must accompany the object code when it is distributed?", "Can I charge for a copy?",
              "What happens if a court imposes conditions that contradict this License?", "Is there any warranty?"],
    "LGPL-2.1": ["Can a program that uses the library be distributed under other terms?",
                 "What must be provided with a work that uses the Library?", "What is a library?",
                 "May I convert the library to the ordinary GPL?"],
    "Artistic": ["May I charge a fee for distributing this Package?", "What is the Standard Version?",
                 "What must I do when I modify the package?", "Can the Package be aggregated with a commercial distribution?"],
}


def focused_whole(path: Path, questions: list[str]) -> tuple[int, float]:
    """(focused sentences, share of them whole) over `questions` asked of a store holding `path`
    alone, with the default embedder and no generator (the sentences are chosen before any model
    call)."""
    import subprocess
    import sys
    import tempfile

    from longqa.ask.analysis.asked import read as read_asked
    from longqa.ask.answer.stage import plan_answer
    from longqa.ask.pipeline import Pipeline
    from longqa.models.resolve import load_embedder
    from longqa.store.db import open_db

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "store.db"
        subprocess.run([sys.executable, "-m", "longqa", "ingest", "-q", "-d", str(db), str(path)], check=True)
        embedder = load_embedder()
        pipeline = Pipeline(open_db(db, readonly=True), None, embedder)
        texts = []
        for question in questions:
            refined = pipeline.retrieve_context(question)
            asked = refined.analysis.asked or read_asked(question)
            plan = plan_answer(asked, refined.passages, refined.analysis.type, refined.analysis.scope, embedder,
                               pipeline.retriever.embed(question))
            texts += [" ".join(sentence.text.split()) for sentence in plan.focused]
    whole = sum(1 for text in texts if _OPENS.match(text) and _CLOSES.search(text))
    return len(texts), whole / len(texts) if texts else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--focused", action="store_true",
                        help="also ask each licence its QUESTIONS and measure the focused sentences (embedder)")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory()
    paths = args.paths or [p for p in DEFAULTS if p.is_file()] + sorted(
        p for p in FETCHED.glob("*") if p.is_file() and p.name not in {d.name for d in DEFAULTS}) + system_documents(
        Path(scratch.name))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'document':28} {'format':8} {'structure':9} {'s':>6} {'sent':>5} {'whole':>6} {'sections':>9} "
          f"{'contents':>8} {'index':>5} {'heads':>5} {'markup':>6} {'numbered':>9}  title")
    for path in paths:
        row = measure(path)
        found = f"{row['numbered']}/{row['numbered_in_text']}" if row["numbered_in_text"] is not None else str(row["numbered"])
        headings = "-" if row["headings"] is None else "{}/{}".format(*row["headings"])
        print(f"{row['document'][:28]:28} {row['format']:8} {row['structure']:9} {row['seconds']:6.2f} "
              f"{row['sentences']:5} {row['whole']:6.3f} {found:>9} {row['contents_lines']:8} {row['index_lines']:5} "
              f"{'-' if row['heads'] is None else row['heads']:>5} {'-' if row['markup'] is None else row['markup']:>6} "
              f"{headings:>9}  {row['title'][:40]}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.focused:
        print("\nfocused sentences over each licence's questions (QUESTIONS), whole share:")
        for path in paths:
            if path.name in QUESTIONS:
                count, share = focused_whole(path, QUESTIONS[path.name])
                print(f"{path.name[:28]:28} {count:5} focused  {share:6.3f} whole")


if __name__ == "__main__":
    main()
