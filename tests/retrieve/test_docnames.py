"""A document's names as the name signal reads them from its title and stored file name."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.retrieve.docnames import identity

PATHS = [
    "/docs/sed-faq.txt",
    "/docs/archive.tar.gz",  # only the last suffix goes
    "/docs/.profile",  # a leading dot is no suffix
    "/docs/notes..txt",
    "/docs/draft.",  # nor is a trailing one
    "/docs/README",
    "relative/KESTREL_VALLEY_handbook.pdf",
    "/docs/a/./b/..",
    "/docs/folder/",
]


@pytest.mark.parametrize("path", PATHS)
def test_a_document_titled_by_its_file_name_is_named_by_its_opening_heading(path):
    """The parsers title a document without a title of its own by its file name's stem; such a
    document, and only such a one, is also named by its first non-generic top-level heading."""
    stem = Path(path).stem
    untitled = identity(stem, path, ["Contents", "Stream Editor Questions"])
    assert untitled.headings == (frozenset({"stream", "editor", "questions"}),)
    assert identity(f"{stem} manual", path, ["Contents", "Stream Editor Questions"]).headings == ()


def test_names_hold_only_their_own_documents_words():
    """Titles that share words: each document's names keep its own words and their runs only."""
    first = identity("Annual report 2022", "/filings/ACME_2022_10K.pdf")
    second = identity("Annual report", "/filings/BETA.pdf")
    assert first.words == {"annual", "report", "2022", "acme", "10k", "10"}
    assert second.words == {"annual", "report", "beta"}
    assert second.names == (frozenset({"annual", "report", "beta"}), frozenset({"beta"}),
                            frozenset({"annual", "report"}))



def test_a_document_stored_again_with_a_new_title_is_named_by_it(tmp_path, db_path):
    """Storing a changed file again keeps its id: the names a process remembers must follow it."""
    from longqa.retrieve.docnames import document_identities
    from tests.ask_support import build_store

    db = build_store(db_path, {"plant.md": "# Boiler Manual\n\nOpen the feed valve before lighting the burner.\n"},
                     tmp_path)
    (doc_id, before), = document_identities(db).items()
    assert "boiler" in before.words
    build_store(db_path, {"plant.md": "# Chiller Manual\n\nOpen the feed valve before starting the pump.\n"},
                tmp_path)
    after = document_identities(db)[doc_id]
    assert "chiller" in after.words and "boiler" not in after.words
