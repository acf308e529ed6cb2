"""Open the store (creating it and applying migrations) and run explicit transactions."""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
from pathlib import Path
from typing import Iterator

import sqlite_utils

from longqa.errors import LongqaError
from longqa.store.migrations import MIGRATIONS


def open_db(path: Path | str) -> sqlite_utils.Database:
    """Open (or create) the store at `path`: WAL mode, foreign keys on, schema migrated.

    Reads go through sqlite-utils (`db.query`, `db[table]`). The connection is in autocommit mode;
    writes that must be atomic use raw SQL inside `transaction(db)`, because sqlite-utils' write
    helpers commit on their own and would split a document across transactions.
    """
    path = Path(path)
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        migrate(conn)
    except sqlite3.DatabaseError as exc:
        raise LongqaError(f"{path}: not a usable longqa store ({exc})") from None
    return sqlite_utils.Database(conn)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations this store has not seen yet, each in its own transaction."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied = []
    for name, script in MIGRATIONS:
        if name in done:
            continue
        record = f"INSERT INTO _migrations (name, applied) VALUES ('{name}', '{now()}');"
        try:
            conn.executescript(f"BEGIN IMMEDIATE;\n{script}\n{record}\nCOMMIT;")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


@contextlib.contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any exception (Ctrl-C included)."""
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
