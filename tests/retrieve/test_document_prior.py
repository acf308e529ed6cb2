"""The question's own document: a question that names the program, function or title one document
is about ranks that document's passages first, and other documents need a much better score to
enter the context; a question that names no document is retrieved as before.

The store holds six manuals that share words ("exec", "options", "history", "command", "file"): a
shell's, a version control tool's and a stream editor's manual pages, saved as text, two of a
runtime's markdown API pages, and the stream editor's plain-text FAQ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.ask.settings import DEFAULTS
from longqa.ingest import Ingestor
from longqa.retrieve.docnames import identity, name_scores
from longqa.store import open_db
from tests.ask_support import build_store, make_pipeline

SHELL = """BASH(1)                     General Commands Manual                    BASH(1)

NAME
       bash - GNU Bourne-Again SHell

SYNOPSIS
       bash [options] [command_string | file]

DESCRIPTION
       Bash is a command language interpreter that executes commands read from
       the standard input or from a file.

INVOCATION
       When bash is invoked as an interactive login shell, it first reads and
       executes commands from the file /etc/profile, if that file exists. An
       interactive shell that is not a login shell reads the file ~/.bashrc.

OPTIONS
       -c     If the -c option is present, then commands are read from the first
              non-option argument command_string.

       -i     If the -i option is present, the shell is interactive.

HISTORY
       When the -o history option to the set builtin is enabled, the shell
       provides access to the command history, the list of commands previously
       typed. On exit, the shell saves the last commands of the history list to
       the file named by HISTFILE.

SHELL BUILTIN COMMANDS
       exec [-cl] [-a name] [command [arguments]]
              If command is specified, it replaces the shell. No new process is
              created. The arguments become the arguments to command. If command
              is not specified, any redirections take effect in the current
              shell, and the return status is 0.
"""

VERSION_CONTROL = """GIT-LOG(1)                        Git Manual                        GIT-LOG(1)

NAME
       git-log - Show commit logs

SYNOPSIS
       git log [<options>] [<revision-range>] [[--] <path>...]

DESCRIPTION
       Shows the commit logs. The command takes options applicable to the git
       rev-list command to control what is shown and how.

OPTIONS
       --follow
           Continue listing the history of a file beyond renames. It works only
           for a single file.

       -n <number>, --max-count=<number>
           Limit the number of commits to output.

HISTORY SIMPLIFICATION
       Sometimes you are only interested in parts of the history, for example
       the commits modifying a particular path. The history shown can be cut
       down with options, and an exec of the command per commit is not needed.
"""

RUNTIME = """# Child process

The `node:child_process` module provides the ability to spawn subprocesses. Each
command runs in a new process, and the parent keeps no history of its output.

## `child_process.exec(command[, options][, callback])`

Spawns a shell and then executes the command within that shell, buffering any
generated output. The command string passed to exec is processed directly by the
shell, and special characters need to be dealt with accordingly. When a callback is
given, it is called with the error, stdout and stderr of the command.

## Options

The options object may set the working directory (`cwd`), the environment (`env`),
a `timeout` in milliseconds and the `shell` that runs the command. Options that are
not set take their defaults: the command runs in the current working directory.

## `child_process.execFile(file[, args][, options][, callback])`

The execFile function is similar to exec except that it does not spawn a shell by
default. The specified executable file is spawned directly as a new process, which
makes it slightly more efficient than exec.
"""

FILES = """# File system

The `node:fs` module enables interacting with the file system. A file is read with
`fs.readFile()`, which reads the entire contents of the file; the options name its
encoding. When the file does not exist, the callback is given an error.

## `fs.readFile(path[, options], callback)`

Asynchronously reads the entire contents of a file. When no encoding is given in the
options, the raw buffer is returned. A file that a shell or another process writes
meanwhile is read as it stands when the read starts.
"""

EDITOR = """SED(1)                           User Commands                          SED(1)

NAME
       sed - stream editor for filtering and transforming text

SYNOPSIS
       sed [OPTION]... {script-only-if-no-other-script} [input-file]...

DESCRIPTION
       Sed is a stream editor. A stream editor is used to perform basic text
       transformations on an input stream (a file or input from a pipeline).

OPTIONS
       -n, --quiet, --silent
              suppress automatic printing of pattern space

       -l N, --line-length=N
              specify the desired line-wrap length for the l command
"""

# A plain-text FAQ titles itself only in its first heading; its file name is all the title it gets.
EDITOR_FAQ = """Archive-Name: editor-faq/sed
Posting-Frequency: irregular

                            THE SED FAQ

                  Frequently Asked Questions about
                       sed, the stream editor

1. GENERAL INFORMATION

1.1. Introduction

This FAQ answers the questions asked most often about sed. Each version of sed
has its own limits, and the answers below say which version they are about.

1.2. Limits

The maximum line length of GNU sed is limited only by the memory available. Older
versions of sed had a maximum line length of 4000 characters, and a command that
read a longer line stopped with an error. The history of each version is given in
section 7.
"""

MANUALS = {"man-bash.txt": SHELL, "man-git-log.txt": VERSION_CONTROL, "man-sed.txt": EDITOR,
           "child_process.md": RUNTIME, "fs.md": FILES, "sedfaq.txt": EDITOR_FAQ}


@pytest.fixture
def manuals(tmp_path):
    return build_store(tmp_path / "manuals.db", MANUALS, tmp_path)


def _files(pipeline, question: str) -> list[str]:
    return [Path(passage.doc_path).name for passage in pipeline.retrieve_context(question).passages]


def test_a_manual_page_is_named_by_its_programs_and_a_text_by_its_opening_heading():
    gzip = identity("gzip, gunzip, zcat - compress or expand files", "/usr/share/man/gzip.txt")
    assert {frozenset({"gzip"}), frozenset({"gunzip"}), frozenset({"zcat"})} <= set(gzip.names)
    faq = identity("sedfaq", "/doc/sedfaq.txt", ["Contents", "THE SED FAQ", "1. GENERAL INFORMATION"])
    assert frozenset({"sed", "faq"}) in faq.headings  # titled only by its file name: its first heading
    titled = identity("Child process", "/doc/child_process.md", ["Asynchronous process creation"])
    assert not titled.headings and frozenset({"asynchronous", "process", "creation"}) not in titled.names


def test_a_whole_name_outranks_a_name_only_touched(manuals):
    by_file = {Path(path).name: doc for path, doc in manuals.execute("SELECT path, id FROM documents")}
    scores = name_scores(manuals, "What does the exec builtin of bash do when a command is given?")
    assert scores == {by_file["man-bash.txt"]: 1.0}
    scores = name_scores(manuals, "What does child_process.exec() pass to its callback?")
    assert scores == {by_file["child_process.md"]: 1.0}
    # "log" only touches the name "git-log"; "bash" is a whole name: half as much (the share said)
    scores = name_scores(manuals, "Does bash keep a log of the commands it ran?")
    assert scores == {by_file["man-bash.txt"]: 1.0, by_file["man-git-log.txt"]: pytest.approx(0.5)}
    assert name_scores(manuals, "What does the exec function do with the options it is given?") == {}


def test_a_year_that_several_file_names_share_names_them_alike(tmp_path):
    """No name is said whole: the shared word counts alike for each, however long the names."""
    filings = {"inpixon_2019.md": "# Annual report\n\nNet sales grew in 2019.\n",
               "lifeway-foods-inc_2019.md": "# Annual report\n\nNet sales grew in 2019.\n",
               "lifeway-foods-inc_2018.md": "# Annual report\n\nNet sales grew in 2018.\n"}
    db = build_store(tmp_path / "filings.db", filings, tmp_path)
    by_file = {Path(path).name: doc for path, doc in db.execute("SELECT path, id FROM documents")}
    scores = name_scores(db, "What is the average total net sales for 2019?")
    assert scores == {by_file["inpixon_2019.md"]: 1.0, by_file["lifeway-foods-inc_2019.md"]: 1.0}


@pytest.mark.parametrize("question, named", [
    ("What does the exec builtin of bash do when a command is given?", "man-bash.txt"),
    ("Which git log option continues the history of a file beyond renames?", "man-git-log.txt"),
    ("What does child_process.exec() pass to its callback?", "child_process.md"),
    # "file" is only a word of the runtime's "File system" page: the shell's page is the one named
    ("Which file does bash read when an interactive login shell starts?", "man-bash.txt"),
    # the FAQ says it is the sed FAQ in its first heading only; the question says that whole name
    ("According to the sed FAQ, what is the maximum line length of GNU sed?", "sedfaq.txt"),
])
def test_the_named_manual_leads_the_context(manuals, question, named):
    files = _files(make_pipeline(manuals), question)
    assert files and files[0] == named, files
    assert set(files) == {named}, files  # the others share its words, but not its name


def test_without_the_prior_another_manual_enters(manuals):
    """The same question with the name prior off (name_boost 0): the other manuals' passages on
    exec and commands enter the context, so it is the prior that keeps them out."""
    question = "What does the exec builtin of bash do when a command is given?"
    off = make_pipeline(manuals, settings=DEFAULTS.with_values({"retrieval.name_boost": 0.0}))
    assert set(_files(off, question)) - {"man-bash.txt"}


def test_a_question_naming_no_manual_is_retrieved_as_without_the_prior(manuals):
    question = "Which option sets the working directory of a command?"
    assert name_scores(manuals, question) == {}
    on = make_pipeline(manuals).retrieve_context(question)
    unboosted = DEFAULTS.with_values({"retrieval.name_boost": 0.0})
    off = make_pipeline(manuals, settings=unboosted).retrieve_context(question)
    assert [(p.node_id, p.score) for p in on.passages] == [(p.node_id, p.score) for p in off.passages]


def test_a_partly_named_document_keeps_the_share_of_its_match_that_is_set(manuals):
    """A document named under named_doc_min x the best-named one keeps `partly_named` of its match
    in the prior: all of it by default (a filing named beside another quarter's is still named)."""
    matches = {1: 1.0, 2: 0.5, 3: 0.8}
    assert make_pipeline(manuals).retriever.name_prior(matches) == matches
    none = make_pipeline(manuals, settings=DEFAULTS.with_values({"retrieval.partly_named": 0.0}))
    assert none.retriever.name_prior(matches) == {1: 1.0, 3: 0.8}
    half = make_pipeline(manuals, settings=DEFAULTS.with_values({"retrieval.partly_named": 0.5}))
    assert half.retriever.name_prior(matches) == {1: 1.0, 2: 0.25, 3: 0.8}


def test_an_opening_heading_names_its_document_only_when_said_whole(tmp_path):
    """An untitled text's heading is its name only when the question says all of it: a heading's
    one word ("insurance") is the topic of many documents, the name of none."""
    folder = tmp_path / "shelf"
    folder.mkdir()
    (folder / "notes_18.txt").write_text("MEDICAL INSURANCE FOR RETIREES\n\nPart B covers doctors' services.\n")
    for n in (3, 4):
        (folder / f"contract_{n:02}.txt").write_text(
            f"SERVICES AGREEMENT {n}\n\nThe supplier shall keep insurance of one million pounds.\n")
    db = open_db(tmp_path / "shelf.db")
    for path in sorted(folder.iterdir()):
        assert Ingestor(db=db).ingest(path).status == "added"
    by_file = {Path(path).name: doc for path, doc in db.execute("SELECT path, id FROM documents")}
    touched = name_scores(db, "What insurance must the supplier keep under this contract?")
    assert max(touched, key=touched.get) != by_file["notes_18.txt"]  # "insurance" alone names nothing
    whole = name_scores(db, "What does the medical insurance for retirees cover?")
    assert max(whole, key=whole.get) == by_file["notes_18.txt"]
