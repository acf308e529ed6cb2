"""The store's leaf count, remembered per open store, follows every change: this connection's
writes and another connection's commits."""

from __future__ import annotations

from longqa.store import open_db
from longqa.store.documents import delete_document
from longqa.store.nodes import leaf_count
from tests.ask_support import build_store, reactor_handbook

MANUAL = "# Boiler Manual\n\n## Start-up\n\nOpen the feed valve before lighting the burner.\n\n" \
         "## Shutdown\n\nClose the fuel valve and let the fan purge the furnace.\n"


def test_the_count_follows_this_connections_writes_and_another_ones(tmp_path, db_path):
    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    handbook = leaf_count(db)
    assert handbook > 0 and leaf_count(db) == handbook
    build_store(db_path, {"boiler.md": MANUAL}, tmp_path)  # another connection commits a document
    both = leaf_count(db)
    assert both > handbook
    assert both == db.execute("SELECT count(*) FROM nodes WHERE kind = 'paragraph'").fetchone()[0]
    first = db.execute("SELECT id FROM documents ORDER BY id").fetchone()[0]
    delete_document(db, first)  # this connection's own write
    assert leaf_count(db) == both - handbook
    assert leaf_count(open_db(db_path)) == both - handbook
