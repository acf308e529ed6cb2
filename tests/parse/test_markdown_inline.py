"""A markdown API page is stored as a reader sees it: link text kept, reference-link brackets,
emphasis marks, code-span backticks and link definitions gone, code spans' own characters kept."""

from __future__ import annotations

from longqa.ingest import Ingestor
from longqa.store import open_db
from longqa.store.nodes import leaf_texts, load_tree
from longqa.structure.tree import sections

API_PAGE = """# Child process

<!-- YAML
added: v0.1.90
-->

The `child_process` module spawns subprocesses. Each one is a [`ChildProcess`][] with
its own **standard streams**; see [the event loop guide](https://example.org/loop_(guide)) and
[`subprocess.kill()`] for how a process ends. Pass the `*args` you need, as in `run(*args)`.

## `subprocess.kill([signal])`

* `signal` {number|string}
* Returns: {boolean}

The `subprocess.kill()` method sends a signal to the child process. _The default signal is
`'SIGTERM'`._ A name such as file_name_here keeps its underscores, 2*3*4 its stars, and a
bracket that defines nothing, [pending], stays as written. An escaped \\*star\\* is a star.

```js
const { spawn } = require('node:child_process');
const grep = spawn('grep', ['ssh']);  // *not* emphasis inside code
```

[`ChildProcess`]: #class-childprocess
[`subprocess.kill()`]: #subprocesskillsignal "Sending signals"
"""


def _stored(tmp_path, db_path, text: str):
    path = tmp_path / "child_process.md"
    path.write_text(text, encoding="utf-8")
    result = Ingestor(db=open_db(db_path)).ingest(path)
    assert result.status == "added", result.error
    db = open_db(db_path)
    doc_id = result.id
    return load_tree(db, doc_id), [leaf.text for leaf in leaf_texts(db, doc_id)]


def test_markdown_inline_syntax_is_stored_as_the_reader_sees_it(tmp_path, db_path):
    tree, texts = _stored(tmp_path, db_path, API_PAGE)
    body = "\n".join(texts)
    assert "The child_process module spawns subprocesses." in body
    assert "Each one is a ChildProcess with its own standard streams;" in body
    assert "see the event loop guide and subprocess.kill() for how a process ends." in body
    assert "Pass the *args you need, as in run(*args)." in body
    assert "The default signal is 'SIGTERM'." in body
    assert "file_name_here keeps its underscores, 2*3*4 its stars" in body
    assert "[pending], stays as written. An escaped *star* is a star." in body
    assert "• signal {number|string}" in body
    # No markup a reader never sees: brackets of links, backticks, emphasis, definitions, comments.
    prose = body.split("```")[0]
    for mark in ("[`", "`]", "][]", "**", "](", "#class-childprocess", "YAML", "<!--"):
        assert mark not in prose, mark
    # Fenced code is kept as written.
    assert "// *not* emphasis inside code" in body and "```js" in body
    # Headings are rendered too: the section is titled by the identifier, without backticks.
    assert [s.title for s in sections(tree)] == ["subprocess.kill([signal])"]


def test_text_that_only_looks_like_markup_stays_as_written(tmp_path, db_path):
    # An encyclopedia export in markdown: TeX quotes and cleanup tags, no links, no code.
    text = ("# The Glory of Love\n\n"
            "``The Glory of Love'' is a song written by Billy Hill, first recorded by Benny Goodman in 1936. "
            "There is a widespread view[vague][who?] that the song was a hit, and the band called it "
            "``a standard''.\n")
    _, texts = _stored(tmp_path, db_path, text)
    body = " ".join(texts)
    assert "``The Glory of Love'' is a song" in body
    assert "widespread view[vague][who?] that" in body and "``a standard''" in body
