"""Documents named on the command line (`rm`, `inspect tree`, `ask --doc`) are matched exactly:
no SQL patterns, and a name that fits several documents is refused with the candidates listed."""

import pytest

from longqa.errors import AmbiguousError, NotFoundError
from longqa.store.documents import DocumentRecord, resolve, save_document
from longqa.structure.tree import Node
from tests.command import run, run_json

DOC = "# {title}\n\n## Part\n\nSome words about {title} and its purpose.\n"


def add(db, path: str, title: str) -> int:
    root = Node(kind="document", title=title, children=[Node(kind="paragraph", text=f"About {title}.", tokens=3)])
    record = DocumentRecord(path=path, sha256=path, title=title, format="markdown", pages=1, structure="flat", bytes=1)
    return save_document(db, record, root)


def test_patterns_are_plain_text(db):
    add(db, "/a/Umbrella.md", "Umbrella")
    add(db, "/a/U_boat.md", "U_boat")
    for ref in ("U%", "%", "U_boat.m_", "%Umbrella.md", "*.md", "Umbrella.*"):
        with pytest.raises(NotFoundError):
            resolve(db, ref)
    assert resolve(db, "U_boat.md")["title"] == "U_boat"


def test_order_id_path_name_title(db, tmp_path):
    first = add(db, "/x/report.md", "Annual report")
    second = add(db, "/y/report.md", "Annual report")
    numbered = add(db, "/z/7", str(first))  # a file called "7" whose title is the first id
    assert resolve(db, str(first))["id"] == first  # an id wins over a title
    assert resolve(db, "/y/report.md")["id"] == second
    assert resolve(db, "7")["id"] == numbered
    with pytest.raises(AmbiguousError) as refused:
        resolve(db, "report.md")
    message = str(refused.value)
    assert message.startswith("report.md: fits 2 documents: ")
    assert f"#{first} /x/report.md" in message and f"#{second} /y/report.md" in message
    with pytest.raises(AmbiguousError):
        resolve(db, "Annual report")


def test_rm_refuses_ambiguous_and_pattern_names(tmp_path, db_path):
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.md").write_text(DOC.format(title=f"Notes {folder}"))
    (tmp_path / "Ukulele.md").write_text(DOC.format(title="Ukulele"))
    run("ingest", tmp_path, "--structure", "layout", db=db_path)

    pattern = run("rm", "U%", db=db_path)
    assert pattern.returncode == 1 and "U%: no such document" in pattern.stderr

    ambiguous = run("rm", "notes.md", db=db_path)
    assert ambiguous.returncode == 1
    lines = ambiguous.stderr.splitlines()
    assert len(lines) == 1 and "notes.md: fits 2 documents:" in lines[0]
    assert "/one/notes.md" in lines[0] and "/two/notes.md" in lines[0]

    # One bad name among good ones: nothing is removed.
    mixed = run("rm", "Ukulele.md", "notes.md", db=db_path)
    assert mixed.returncode == 1
    _, listing = run_json("inspect", "docs", db=db_path)
    assert sorted(d["title"] for d in listing) == ["Notes one", "Notes two", "Ukulele"]

    result, out = run_json("rm", str(tmp_path / "one" / "notes.md"), "Ukulele", db=db_path)
    assert result.returncode == 0
    assert sorted(r["path"].rsplit("/", 1)[-1] for r in out["removed"]) == ["Ukulele.md", "notes.md"]
    _, listing = run_json("inspect", "docs", db=db_path)
    assert [d["title"] for d in listing] == ["Notes two"]
