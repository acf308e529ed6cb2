"""The counts the store keeps by trigger (store_counts, migration m005) agree with counting, through
ingest, a forced re-ingest and removal, and a store from before them is still read and migrated."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.ingest import Ingestor
from longqa.store import open_db
from longqa.store.documents import delete_document, documents_version
from longqa.store.nodes import leaf_count, store_count

HANDBOOK = """# Kestrel Valley Water Treatment Works

## Emergency procedures

The fuel store holds 60,000 litres of diesel, enough to run both generators for about 52 hours.

A second paragraph says the pumps are tested every month.

## Performance

The standby generators ran for 31 hours in total during two grid failures.
"""

MANUAL = """# Heron Lake pumping station

The station lifts raw water from the lake into the works.

Its three pumps run in turn; one is always held in reserve.
"""


def counted(db) -> int:
    return db.execute("SELECT count(*) FROM nodes WHERE kind = 'paragraph'").fetchone()[0]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_the_leaf_count_follows_ingest_reingest_and_removal(tmp_path, db_path):
    db = open_db(db_path)
    assert leaf_count(db) == counted(db) == 0
    first = Ingestor(db=db).ingest(write(tmp_path, "handbook.md", HANDBOOK)).id
    Ingestor(db=db).ingest(write(tmp_path, "station.md", MANUAL))
    assert leaf_count(db) == counted(db) > 0
    stored = counted(db)
    Ingestor(db=db, force=True).ingest(write(tmp_path, "handbook.md", HANDBOOK + "\n## Staff\n\nTwo operators are on duty at night.\n"))
    assert leaf_count(db) == counted(db) == stored + 1
    delete_document(db, first)
    assert leaf_count(db) == counted(db) == store_count(db, "leaves")
    db.execute("UPDATE nodes SET kind = 'section' WHERE kind = 'paragraph'")
    assert leaf_count(db) == counted(db) == 0


def test_a_document_stored_again_changes_the_documents_version(tmp_path, db_path):
    """A forced re-ingest keeps the document's id and count, so only the change count tells."""
    db = open_db(db_path)
    path = write(tmp_path, "handbook.md", HANDBOOK)
    Ingestor(db=db).ingest(path)
    before = documents_version(db)
    Ingestor(db=db, force=True).ingest(write(tmp_path, "handbook.md", HANDBOOK.replace("Kestrel", "Osprey")))
    after = documents_version(db)
    assert after[:2] == before[:2] and after != before


def test_a_store_from_before_the_counts_is_read_as_it_is_then_migrated(tmp_path, db_path, monkeypatch):
    from longqa.store import db as store_db
    from longqa.store.migrations import MIGRATIONS

    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:4])  # the version before
    db = open_db(db_path)
    Ingestor(db=db).ingest(write(tmp_path, "handbook.md", HANDBOOK))
    stored = counted(db)
    db.conn.close()
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS)

    readonly = open_db(db_path, readonly=True)  # `ask` does not ask for a write first
    assert store_count(readonly, "leaves") is None
    assert leaf_count(readonly) == stored and documents_version(readonly)[2] is None
    readonly.conn.close()
    db = open_db(db_path)  # migrated: the count starts from the leaves already there
    assert store_count(db, "leaves") == leaf_count(db) == stored


def test_a_store_missing_a_migration_readers_need_is_still_refused_read_only(db_path, monkeypatch):
    from longqa.errors import StoreError
    from longqa.store import db as store_db
    from longqa.store.migrations import MIGRATIONS

    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:3])
    open_db(db_path).conn.close()
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS)
    with pytest.raises(StoreError, match="needs upgrading \\(m004_graph_leaves\\)"):
        open_db(db_path, readonly=True)
