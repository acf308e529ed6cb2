"""Several manuals in one store, and questions that each name the program, function or FAQ they
are about: how often does the context hold passages of a document the question does not name?

    python bench/named_documents.py [--store PATH]

The store holds, where this system has them, manual pages printed by `man` (a shell's, a version
control tool's, an archiver's, a compressor's, a searcher's and a stream editor's), a JavaScript
runtime's markdown API pages and the stream editor's FAQ: documents that share words such as
"exec", "options", "history", "file" and "signal". Each question below names its document's
program, function or title (written for this bench from the documents' own subjects). Per
question, with the default embedder and no generator: the documents of the context's passages
at the default budget. Printed: the share of questions whose context holds a passage of a
document the question does not name, the share whose first passage is from the named document,
and the load average beside them. Run it under two versions of the code (PYTHONPATH) to compare.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

MAN_PAGES = ["bash", "git-log", "tar", "gzip", "grep", "sed"]
API_PAGES = [Path("/usr/share/doc/nodejs/api") / name for name in ("child_process.md", "fs.md", "net.md")]
SED_FAQ = Path("/usr/share/doc/sed/sedfaq.txt.gz")

# (question, the file the question names)
QUESTIONS = [
    ("Which file does bash read to initialize readline?", "man-bash.txt"),
    ("What does the exec builtin of bash do when no command is given?", "man-bash.txt"),
    ("Where does bash save the command history when an interactive shell exits?", "man-bash.txt"),
    ("What does git log --follow do?", "man-git-log.txt"),
    ("Which git log option limits the number of commits that are shown?", "man-git-log.txt"),
    ("How do I list the contents of an archive with tar?", "man-tar.txt"),
    ("What does gzip do with the original file after compressing it?", "man-gzip.txt"),
    ("Which grep option prints only a count of the matching lines?", "man-grep.txt"),
    ("What does the sed option -n suppress?", "man-sed.txt"),
    ("What signal does subprocess.kill() send when none is given?", "child_process.md"),
    ("What does child_process.exec() pass to its callback?", "child_process.md"),
    ("What does fs.readFile() return when no encoding is specified?", "fs.md"),
    ("What does net.createServer() return?", "net.md"),
    ("According to the sed FAQ, what is the maximum line length of GNU sed?", "sed-sedfaq.txt"),
]


def documents(folder: Path) -> list[Path]:
    found: list[Path] = []
    if shutil.which("man") and shutil.which("col"):
        for name in MAN_PAGES:
            shown = subprocess.run(f"man {name} 2>/dev/null | col -b", shell=True, capture_output=True,
                                   env={**os.environ, "MANWIDTH": "80"})
            if shown.stdout.strip():
                (folder / f"man-{name}.txt").write_bytes(shown.stdout)
                found.append(folder / f"man-{name}.txt")
    for page in API_PAGES:
        if page.is_file():
            shutil.copy(page, folder / page.name)
            found.append(folder / page.name)
    if SED_FAQ.is_file():
        (folder / "sed-sedfaq.txt").write_bytes(gzip.decompress(SED_FAQ.read_bytes()))
        found.append(folder / "sed-sedfaq.txt")
    return found


def main() -> None:
    from longqa.ask.pipeline import Pipeline
    from longqa.ingest import Ingestor
    from longqa.models.resolve import load_embedder
    from longqa.store.db import open_db

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, help="keep the store here (default: a temporary folder)")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = documents(folder)
        names = {path.name for path in paths}
        asked = [(question, name) for question, name in QUESTIONS if name in names]
        store = args.store or folder / "store.db"
        embedder = load_embedder()
        ingestor = Ingestor(db=open_db(store), embedder=embedder)
        for path in paths:
            result = ingestor.ingest(path)
            print(f"  {path.name:22} {result.status:8} {result.nodes:6} nodes")
        pipeline = Pipeline(open_db(store, readonly=True), None, embedder)
        strays = leads = 0
        for question, name in asked:
            refined = pipeline.retrieve_context(question)
            files = [Path(passage.doc_path).name for passage in refined.passages]
            stray = sorted({file for file in files if file != name})
            strays += bool(stray)
            leads += bool(files) and files[0] == name
            print(f"  {'stray' if stray else 'named':5} {question[:70]:70} {', '.join(stray)[:60]}")
    print(f"{len(asked)} questions: context holds an unnamed document's passage for {strays / len(asked):.2f}; "
          f"named document first for {leads / len(asked):.2f}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
