"""Open the store (creating it and applying migrations) and run explicit transactions.

A new store is private to its user: the file is created 0600 before SQLite opens it (SQLite gives
its `-wal` and `-shm` files the same mode) and missing directories on the way 0700. Read-only
opens (`inspect`, `ask`, `models`) never create, convert or migrate anything, work on a store the
user may not write, and refuse a database that is not a longqa store.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import sqlite3
import stat
import tempfile
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

import sqlite_utils

from longqa.config import make_private_dir
from longqa.errors import StoreError
from longqa.names import shown
from longqa.store.migrations import MIGRATIONS

STORE_MODE = 0o600
SIDE_FILES = ("-wal", "-shm")  # SQLite's write-ahead log and its shared-memory index
_NO_STORE = "{path}: no store here yet (it is empty until you add documents with `longqa ingest PATH`)"


def open_db(path: Path | str, *, readonly: bool = False, create: bool = True) -> sqlite_utils.Database:
    """Open (or, when `create` and not `readonly`, create) the store at `path`: WAL mode, foreign
    keys on, schema migrated. Raises StoreError, untouched, for a file that is not a longqa store.

    Reads go through sqlite-utils (`db.query`, `db[table]`). The connection is in autocommit mode;
    writes that must be atomic use raw SQL inside `transaction(db)`, because sqlite-utils' write
    helpers commit on their own and would split a document across transactions.
    """
    if str(path) == ":memory:":
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute("PRAGMA foreign_keys=ON")
        migrate(conn)
        return _database(conn)
    path = Path(path)
    if readonly:
        return _database(_connect_readonly(path))
    if path.is_dir():
        raise StoreError(f"{shown(path)}: is a directory, not a store file")
    if not path.exists():
        if not create:
            raise StoreError(_NO_STORE.format(path=shown(path)))
        _create_private(path)
    try:
        conn = sqlite3.connect(os.fsencode(path), isolation_level=None, timeout=30)
        _check_is_store(conn, path, allow_new=True)
        _refuse_newer(conn, path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        migrate(conn)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{shown(path)}: cannot open the store ({exc})") from None
    return _database(conn)


def _database(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """The store's connection in sqlite-utils, with no sqlite-utils plugin run on it: a plugin
    installed beside longqa for other work never changes the store's connection (and finding
    plugins reads every installed package's entry points, about 40 ms of each start)."""
    return sqlite_utils.Database(conn, execute_plugins=False)


def _create_private(path: Path) -> None:
    try:
        make_private_dir(path.parent)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, STORE_MODE))
    except FileExistsError:
        pass  # another process created it first: it is theirs to have made private
    except OSError as exc:
        raise StoreError(f"{shown(path)}: cannot create the store ({exc.strerror or exc})") from None


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """A connection that cannot write. Where SQLite cannot even create the `-shm` index (a
    read-only directory), the file is read as it is on disk ("immutable")."""
    if not path.exists():
        raise StoreError(_NO_STORE.format(path=shown(path)))
    if path.is_dir():
        raise StoreError(f"{shown(path)}: is a directory, not a store file")
    if not os.access(path, os.R_OK):
        raise StoreError(f"{shown(path)}: cannot read the store (permission denied)")
    uri = file_uri(path) + "?mode=ro"
    last: Exception | None = None
    for suffix in ("", "&immutable=1"):
        if suffix and _unmerged_log(path):
            return _connect_copy(path)
        conn = sqlite3.connect(uri + suffix, uri=True, isolation_level=None, timeout=30)
        try:
            _check_is_store(conn, path, allow_new=False)
        except sqlite3.OperationalError as exc:
            conn.close()
            name = getattr(exc, "sqlite_errorname", "")
            if not name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")):
                raise StoreError(f"{shown(path)}: cannot read the store ({exc})") from None
            last = exc  # no -shm index and no right to create one: nobody can be writing it
            continue
        except BaseException:
            conn.close()
            raise
        conn.execute("PRAGMA query_only=ON")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn
    raise StoreError(f"{shown(path)}: cannot open the store read-only ({last})")


def file_uri(path: Path) -> str:
    """The `file:` URI of `path`, for read-only and immutable opens (percent-encoded bytes)."""
    return "file:" + quote(os.fsencode(path.absolute()))


# A log left by a crash is merged from a private copy up to this size; above it the user is told
# how to merge it instead of waiting minutes for a copy.
COPY_LIMIT = 1 << 30


def _unmerged_log(path: Path) -> bool:
    """True when a write-ahead log with changes lies beside the store. Read "immutable", SQLite
    would ignore it and show the store as it was before them (after a crash, often empty)."""
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


def _connect_copy(path: Path) -> sqlite3.Connection:
    """Read a store whose log cannot be merged in place (its folder is read-only to this user):
    merge store and log in a private copy, then read that copy (removed at once; the open
    connection keeps it alive until it closes)."""
    wal = path.with_name(path.name + "-wal")
    try:
        size = path.stat().st_size + wal.stat().st_size
    except OSError as exc:
        raise StoreError(f"{shown(path)}: cannot read the store ({exc.strerror or exc})") from None
    if size > COPY_LIMIT:
        raise StoreError(
            f"{shown(path)}: changes of an interrupted run are still in {shown(wal.name)} and this folder "
            f"cannot be written to merge them; as a user who can write {shown(path.parent)}, run a command "
            "that writes to the store once (e.g. `longqa ingest` of a stored file), or copy the store with "
            "its -wal file to a writable folder")
    folder = Path(tempfile.mkdtemp(prefix="longqa-store-"))
    copy = folder / "store.db"
    try:
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, folder / "store.db-wal")
        merger = sqlite3.connect(os.fsencode(copy), isolation_level=None)
        try:
            merger.execute("PRAGMA journal_mode=DELETE")  # replays the log into the copy, removes it
        finally:
            merger.close()
        conn = sqlite3.connect(file_uri(copy) + "?mode=ro&immutable=1", uri=True, isolation_level=None)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file before it goes
        _check_is_store(conn, path, allow_new=False)
    except (OSError, sqlite3.DatabaseError) as exc:
        raise StoreError(f"{shown(path)}: cannot read the store and its log ({exc})") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    conn.execute("PRAGMA query_only=ON")
    return conn


def _check_is_store(conn: sqlite3.Connection, path: Path, allow_new: bool) -> None:
    """Refuse, before changing anything, a file that is not a longqa store (or, read-only, one
    that would need migrating)."""
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError:
        raise StoreError(f"{shown(path)}: not a longqa store (not an SQLite database); left untouched") from None
    if not tables:
        if allow_new:
            return
        raise StoreError(
            f"{shown(path)}: the store is empty (add documents with `longqa ingest PATH`)"
        )
    if "_migrations" not in tables:
        raise StoreError(
            f"{shown(path)}: not a longqa store (an SQLite database with other tables); left untouched"
        )
    if not allow_new:
        done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
        pending = [name for name, _ in MIGRATIONS if name not in done]
        if pending:
            raise StoreError(
                f"{shown(path)}: the store needs upgrading ({', '.join(pending)}); "
                "run a command that writes to it first, e.g. `longqa ingest PATH`"
            )


def schema_version(conn: sqlite3.Connection) -> int:
    """The store's schema version (the number of migrations applied to it): its user_version, or
    for a store from before that was recorded, the number of migrations it has seen."""
    recorded = conn.execute("PRAGMA user_version").fetchone()[0]
    try:
        seen = conn.execute("SELECT count(*) FROM _migrations").fetchone()[0]
    except sqlite3.OperationalError:  # a new, empty file
        seen = 0
    return max(recorded, seen)


def _refuse_newer(conn: sqlite3.Connection, path: Path) -> None:
    """A newer longqa may have changed tables in ways this one would break by writing."""
    version = schema_version(conn)
    known = {name for name, _ in MIGRATIONS}
    try:
        unknown = [row[0] for row in conn.execute("SELECT name FROM _migrations ORDER BY name") if row[0] not in known]
    except sqlite3.OperationalError:
        unknown = []
    if version > len(MIGRATIONS) or unknown:
        raise StoreError(
            f"{shown(path)}: written by a newer longqa (store schema version {version}, this longqa knows "
            f"up to {len(MIGRATIONS)}); left untouched: upgrade longqa to change it")


def exposed_files(path: Path | str) -> list[tuple[Path, int]]:
    """The store's files (and `-wal`/`-shm`) that other users can read or write, with their mode."""
    path = Path(path)
    found = []
    for candidate in (path, *(path.with_name(path.name + s) for s in SIDE_FILES)):
        try:
            mode = stat.S_IMODE(candidate.stat().st_mode)
        except OSError:
            continue
        if mode & 0o066:
            found.append((candidate, mode))
    return found


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
            # Another process opening the same new store applied it between our read and our write.
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue
            raise
        applied.append(name)
    # The schema version, for a later longqa to see; _migrations stays the record that counts,
    # so a store this user may not write is still opened.
    if conn.execute("PRAGMA user_version").fetchone()[0] < len(MIGRATIONS):
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
    return applied


@contextlib.contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any exception (Ctrl-C included).

    SQLite rolls back by itself after some errors (a full disk); the original error is the one
    worth reporting, so a rollback is only issued while a transaction is still open. SQLite's
    operational errors (a read-only or full store, a lock held too long) become StoreError."""
    conn = db.conn
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:  # read-only, full, locked too long: one line, not a trace
        where = f"; {shown(database_name(db))}" if database_name(db) else ""
        raise StoreError(f"the store cannot be written ({exc}{where})") from None


@contextlib.contextmanager
def snapshot(db: sqlite_utils.Database) -> Iterator[None]:
    """Every read inside the block sees the store as it was when the block began: one read
    transaction, so a document removed or replaced by another process meanwhile is still read
    whole (as before the change), never half. Inside an open transaction it adds nothing."""
    conn = db.conn
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        # A deferred BEGIN takes its snapshot at the first read, so read now.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def database_name(db: sqlite_utils.Database) -> str:
    """The store's file name as SQLite has it ('' for an in-memory store)."""
    row = db.execute("PRAGMA database_list").fetchone()
    return row[2] if row and row[2] else ""


def database_file(db: sqlite_utils.Database) -> Path | None:
    """The file the store lives in (resolved), or None for an in-memory store."""
    name = database_name(db)
    return Path(name).resolve() if name else None


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
