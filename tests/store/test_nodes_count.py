"""The store's leaf count, read from the documents' node counts less the inner nodes, equals
counting the leaves after every change: this connection's writes, another connection's commits,
a document rewritten with a different tree, a document removed."""

from __future__ import annotations

from longqa.store import open_db
from longqa.store.documents import delete_document
from longqa.store.nodes import leaf_count
from tests.ask_support import build_store, reactor_handbook

MANUAL = "# Boiler Manual\n\n## Start-up\n\nOpen the feed valve before lighting the burner.\n\n" \
         "## Shutdown\n\nClose the fuel valve and let the fan purge the furnace.\n"
LONGER = MANUAL + "\n## Servicing\n\nClean the burner nozzle every spring.\n\nReplace the ignition electrode yearly.\n"


def counted(db) -> int:
    return db.execute("SELECT count(*) FROM nodes WHERE kind = 'paragraph'").fetchone()[0]


def test_the_count_follows_this_connections_writes_and_another_ones(tmp_path, db_path):
    db = open_db(db_path)
    assert leaf_count(db) == 0
    build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    handbook = leaf_count(db)
    assert handbook > 0 and handbook == counted(db)
    build_store(db_path, {"boiler.md": MANUAL}, tmp_path)  # another connection commits a document
    both = leaf_count(db)
    assert both > handbook and both == counted(db)
    build_store(db_path, {"boiler.md": LONGER}, tmp_path)  # the same path, a tree with more sections
    rewritten = leaf_count(db)
    assert rewritten > both and rewritten == counted(db)
    first = db.execute("SELECT id FROM documents ORDER BY id").fetchone()[0]
    delete_document(db, first)  # this connection's own write
    assert leaf_count(db) == rewritten - handbook == counted(db)
    assert leaf_count(open_db(db_path)) == rewritten - handbook
