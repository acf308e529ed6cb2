"""Numbered schema migrations. Append new ones; never edit one that has shipped."""

M001_INITIAL = """
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT NOT NULL UNIQUE,
            sha256 TEXT NOT NULL,
            title TEXT NOT NULL,
            format TEXT NOT NULL,
            pages INTEGER NOT NULL,
            tokens INTEGER NOT NULL,
            nodes INTEGER NOT NULL,
            structure TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            added TEXT NOT NULL
        );
        CREATE TABLE nodes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            doc_id INTEGER NOT NULL REFERENCES documents(id),
            parent_id INTEGER REFERENCES nodes(id),
            kind TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL DEFAULT '',
            summary TEXT NOT NULL DEFAULT '',
            path TEXT NOT NULL DEFAULT '',
            ord INTEGER NOT NULL,
            depth INTEGER NOT NULL,
            page_start INTEGER NOT NULL,
            page_end INTEGER NOT NULL,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL,
            tokens INTEGER NOT NULL
        );
        CREATE INDEX nodes_doc_ord ON nodes(doc_id, ord);
        CREATE INDEX nodes_parent ON nodes(parent_id);
        CREATE VIRTUAL TABLE nodes_fts USING fts5(
            title, path, text, content='nodes', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE TRIGGER nodes_ai AFTER INSERT ON nodes BEGIN
            INSERT INTO nodes_fts(rowid, title, path, text) VALUES (new.id, new.title, new.path, new.text);
        END;
        CREATE TRIGGER nodes_ad AFTER DELETE ON nodes BEGIN
            INSERT INTO nodes_fts(nodes_fts, rowid, title, path, text)
            VALUES ('delete', old.id, old.title, old.path, old.text);
        END;
        CREATE TRIGGER nodes_au AFTER UPDATE ON nodes BEGIN
            INSERT INTO nodes_fts(nodes_fts, rowid, title, path, text)
            VALUES ('delete', old.id, old.title, old.path, old.text);
            INSERT INTO nodes_fts(rowid, title, path, text) VALUES (new.id, new.title, new.path, new.text);
        END;
        CREATE TABLE embeddings (
            node_id INTEGER PRIMARY KEY REFERENCES nodes(id),
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE INDEX embeddings_model ON embeddings(model);
        CREATE TABLE llm_cache (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            value TEXT NOT NULL,
            created TEXT NOT NULL
        );
"""

# The vector state: a random id for this store and a counter that every change to `embeddings`
# bumps in the same transaction. A matrix file beside the store (store/vector_file.py) records
# both, so it is used only while it still mirrors the store, whatever crashed in between.
# The kind index makes "how many leaves are there" an index count rather than a table scan.
M002_VECTOR_STATE = """
        CREATE TABLE vector_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            store_uuid TEXT NOT NULL,
            version INTEGER NOT NULL
        );
        INSERT INTO vector_state (id, store_uuid, version) VALUES (1, lower(hex(randomblob(16))), 0);
        CREATE TRIGGER embeddings_version_ai AFTER INSERT ON embeddings BEGIN
            UPDATE vector_state SET version = version + 1 WHERE id = 1;
        END;
        CREATE TRIGGER embeddings_version_ad AFTER DELETE ON embeddings BEGIN
            UPDATE vector_state SET version = version + 1 WHERE id = 1;
        END;
        CREATE TRIGGER embeddings_version_au AFTER UPDATE ON embeddings BEGIN
            UPDATE vector_state SET version = version + 1 WHERE id = 1;
        END;
        CREATE INDEX nodes_kind ON nodes(kind);
"""

# GARLIC/PECAN's graph of a document (`ingest --graph`, store/graph.py): level 0 holds the
# leaves (text in `nodes`), higher levels the information points; an edge runs from a point to a
# node one level down, and a point's edges sum to 1. Removing the document removes its graph.
M003_GRAPH = """
        CREATE TABLE graph_docs (
            doc_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
            sha256 TEXT NOT NULL,
            points TEXT NOT NULL,
            edges TEXT NOT NULL,
            model TEXT NOT NULL,
            embed_model TEXT NOT NULL,
            levels INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL,
            generated_tokens INTEGER NOT NULL,
            seconds REAL NOT NULL,
            created TEXT NOT NULL
        );
        CREATE TABLE graph_nodes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            doc_id INTEGER NOT NULL REFERENCES graph_docs(doc_id) ON DELETE CASCADE,
            level INTEGER NOT NULL,
            ord INTEGER NOT NULL,
            leaf_id INTEGER NOT NULL,
            text TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            vector BLOB,
            UNIQUE (doc_id, level, ord)
        );
        CREATE TABLE graph_edges (
            parent INTEGER NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
            child INTEGER NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
            weight REAL NOT NULL,
            PRIMARY KEY (parent, child)
        );
        CREATE INDEX graph_edges_child ON graph_edges(child);
"""

# A graph is current only for the leaves it was built from: re-ingesting a file with the same
# content (`--force`) gives its leaves new ids, and a graph over the old ones points at nothing.
# `leaves` holds the document's leaf key when the graph was stored (store/graph.py LEAF_KEY: leaf
# count and lowest and highest leaf id; node ids are never reused). Graphs whose first-level
# nodes are all still leaves of their document get the key now; the others stay stale.
M004_GRAPH_LEAVES = """
        ALTER TABLE graph_docs ADD COLUMN leaves TEXT NOT NULL DEFAULT '';
        UPDATE graph_docs SET leaves = (
            SELECT count(*) || ':' || coalesce(min(id), 0) || ':' || coalesce(max(id), 0)
            FROM nodes WHERE nodes.doc_id = graph_docs.doc_id AND nodes.kind = 'paragraph'
        ) WHERE NOT EXISTS (
            SELECT 1 FROM graph_nodes g WHERE g.doc_id = graph_docs.doc_id AND g.level = 0
            AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = g.leaf_id AND n.doc_id = g.doc_id)
        );
"""

# The PDF pages whose text was read by OCR (longqa/parse/ocr.py), as "3,7-9" ('' for none), so
# that `inspect` and citations can say "p. 12, OCR".
M005_OCR_PAGES = """
        ALTER TABLE documents ADD COLUMN ocr_pages TEXT NOT NULL DEFAULT '';
"""

# (name, SQL script). Each runs in one transaction together with its record in _migrations.
MIGRATIONS = [("m001_initial", M001_INITIAL), ("m002_vector_state", M002_VECTOR_STATE),
              ("m003_graph", M003_GRAPH), ("m004_graph_leaves", M004_GRAPH_LEAVES),
              ("m005_ocr_pages", M005_OCR_PAGES)]
