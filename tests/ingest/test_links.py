"""Directory ingest judges a link by its target and stays inside the tree it was given; a pipe is
reported; a file rewritten while it is read is not stored with another version's hash; limits on
what the environment may ask for (threads, an empty HOME)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from longqa.ingest import Ingestor, expand_inputs
from longqa.store import open_db
from tests.command import run
from tests.fakes import FakeEmbedder

DOC = "# Boiler Manual\n\n## Lighting\n\nOpen the gas valve, then press the igniter twice.\n"


def reasons(failed) -> dict[str, str]:
    return {os.path.basename(r.path): r.error for r in failed}


def test_links_out_of_the_directory_are_reported_not_followed(tmp_path):
    outside, tree = tmp_path / "outside", tmp_path / "manuals"
    outside.mkdir()
    (tree / "boilers").mkdir(parents=True)
    (outside / "secret").write_text("The safe code is 4512.")
    (outside / "contract.md").write_text(DOC)
    (tree / "boilers" / "boiler.md").write_text(DOC)
    (tree / "notes.txt").symlink_to(outside / "secret")  # a document's suffix on the link only
    (tree / "x.md").symlink_to(outside / "contract.md")  # a document, but outside the tree
    (tree / "same.md").symlink_to(tree / "boilers" / "boiler.md")  # inside: the one file, once
    (tree / "shortcut.txt").symlink_to("boilers/boiler.md")  # judged by its target's suffix: markdown
    files, failed = expand_inputs([str(tree)])
    assert files == [(tree / "boilers" / "boiler.md").resolve()]
    assert reasons(failed) == {"x.md": "symbolic link to a file outside the directory; not followed "
                                       "(name the file itself, or pass --follow-links)"}

    files, failed = expand_inputs([str(tree)], follow_links=True)
    assert sorted(files) == sorted([(tree / "boilers" / "boiler.md").resolve(), (outside / "contract.md").resolve()])
    assert failed == []  # `secret` has no document suffix: passed over like any other such file


def test_a_pipe_in_a_directory_is_reported(tmp_path, db_path):
    tree = tmp_path / "inbox"
    tree.mkdir()
    os.mkfifo(tree / "incoming.md")
    files, failed = expand_inputs([str(tree)])
    assert files == [] and reasons(failed) == {"incoming.md": "not a regular file (a device, pipe or socket)"}
    result = run("ingest", tree, db=db_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "incoming.md: not a regular file (a device, pipe or socket)" in result.stderr


def test_the_follow_links_flag_reaches_the_directory_walk(tmp_path, db_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "plan.md").write_text(DOC)
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "plan.md").symlink_to(tmp_path / "outside" / "plan.md")
    refused = run("ingest", tmp_path / "tree", db=db_path)
    assert refused.returncode == 1 and "outside the directory" in refused.stderr
    assert run("ingest", "--help").stdout.count("--follow-links") == 1


def test_a_file_rewritten_while_it_is_read_is_not_stored_with_a_stale_hash(tmp_path, db_path, monkeypatch):
    import longqa.ingest as ingest_module

    path = tmp_path / "manual.md"
    path.write_text(DOC)
    real_parse = ingest_module.parse_file

    def rewritten_meanwhile(file, limits, *rest):  # a writer replaces the file between hash and parse
        path.write_text(DOC + "\n## Venting\n\nBleed the radiators each autumn.\n")
        return real_parse(file, limits, *rest)

    monkeypatch.setattr(ingest_module, "parse_file", rewritten_meanwhile)
    db = open_db(db_path)
    result = Ingestor(db=db, embedder=FakeEmbedder()).ingest(path)
    assert result.status == "failed" and "changed while it was read" in result.error
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 0
    monkeypatch.setattr(ingest_module, "parse_file", real_parse)
    stored = Ingestor(db=db, embedder=FakeEmbedder()).ingest(path)
    assert stored.status == "added"


def test_threads_above_the_cores_are_cut_to_them_with_one_warning(monkeypatch, capsys):
    from longqa.models import threads

    cores = threads.usable_cores()
    monkeypatch.setenv("LONGQA_THREADS", str(cores + 254))
    monkeypatch.setattr(threads, "_warned", set())
    assert threads.cpu_threads() == cores and threads.cpu_threads() == cores
    warning = capsys.readouterr().err
    assert warning.count("\n") == 1 and f"more than the {cores} cores" in warning
    monkeypatch.setenv("LONGQA_THREADS", "99999")
    assert threads.cpu_threads() == cores


def test_an_empty_home_is_treated_as_unset():
    code = ("from longqa import config; import pwd, os; "
            "assert config.data_dir() == __import__('pathlib').Path(pwd.getpwuid(os.getuid()).pw_dir) "
            "/ '.local/share/longqa', config.data_dir(); print(config.db_path('~/s.db'))")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LONGQA_", "XDG_"))}
    env.update(HOME="", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert not done.stdout.startswith("/s.db") and done.stdout.strip().endswith("/s.db")


def test_a_link_to_a_device_is_reported_whatever_its_name(tmp_path, db_path):
    # Once passed over without a word (its target has no document suffix) while other links were reported.
    tree = tmp_path / "manuals"
    tree.mkdir()
    (tree / "boiler.md").write_text(DOC)
    (tree / "zero.txt").symlink_to("/dev/zero")
    (tree / "zero").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "queue")
    (tree / "queue.md").symlink_to(tmp_path / "queue")
    files, failed = expand_inputs([str(tree)])
    assert files == [(tree / "boiler.md").resolve()]
    assert reasons(failed) == {
        "zero.txt": "symbolic link to /dev/zero, not a regular file (a device, pipe or socket)",
        "zero": "symbolic link to /dev/zero, not a regular file (a device, pipe or socket)",
        "queue.md": f"symbolic link to {tmp_path / 'queue'}, not a regular file (a device, pipe or socket)"}
    result = run("ingest", tree, db=db_path)
    assert result.returncode == 3 and "Traceback" not in result.stderr, result.stderr
    assert "zero.txt: symbolic link to /dev/zero, not a regular file" in result.stderr
