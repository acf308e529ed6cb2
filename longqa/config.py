"""Where longqa keeps its files, the settings file named by the environment (longqa/environment.py
reads every variable), and the limits on what one question or one document may cost."""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from pathlib import Path

from longqa import environment


def home() -> Path:
    """The user's home: $HOME, or where it is empty or unset, the account's home directory (an
    empty HOME would otherwise put models and stores under `/`)."""
    if os.environ.get("HOME"):
        return Path(os.environ["HOME"])
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:  # no account entry (a bare container): the working directory, not `/`
        return Path.cwd()


def expand(path: str | os.PathLike) -> Path:
    """`~` at the start of `path` replaced by home() (os.path.expanduser gives `/` for HOME='')."""
    text = os.fspath(path)
    if text == "~" or text.startswith("~/"):
        return home() / text[2:]
    return Path(text).expanduser()


def data_dir() -> Path:
    """`$LONGQA_HOME`, else `$XDG_DATA_HOME/longqa`, else `~/.local/share/longqa`."""
    if environment.DATA_HOME.value():
        return expand(environment.DATA_HOME.value())
    xdg = os.environ.get("XDG_DATA_HOME") or str(home() / ".local" / "share")
    return expand(xdg) / "longqa"


def models_dir() -> Path:
    """Assembled and converted model files (the embedded defaults) live here:
    `$LONGQA_MODELS_DIR`, else `<data dir>/models`."""
    if environment.MODELS_DIR.value():
        return expand(environment.MODELS_DIR.value())
    return data_dir() / "models"


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """`-d/--db`, else `$LONGQA_DB`, else `<data dir>/longqa.db`."""
    if explicit:
        return expand(explicit)
    if environment.DB.value():
        return expand(environment.DB.value())
    return data_dir() / "longqa.db"


def settings_file() -> Path | None:
    """`$LONGQA_SETTINGS`: a TOML file of ask settings used when `--settings` is not given."""
    value = environment.SETTINGS.value().strip()
    return Path(value).expanduser() if value else None


def make_private_dir(path: Path) -> None:
    """Create `path` and any missing parents with mode 0700 (only the user can list or enter
    them); directories that already exist are left as they are."""
    missing = []
    current = Path(path)
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass


# A question longer than this many (cl100k) tokens is cut, with a warning. The embedder reads
# 256 tokens of it and every generator prompt holds it next to the 2,000-token context within
# an 8,192-token window; the longest question in the evaluation data is 176 tokens.
QUESTION_MAX_TOKENS = 512
# At most this many bytes of a question are read from stdin.
QUESTION_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Limits:
    """How much work `longqa ingest` takes on for one document (each has an ingest flag; 0 lifts
    it). A document over a limit fails with its own line on stderr; the batch goes on."""

    max_mb: float = 100  # file size in MB: the whole file is read or mapped at once
    max_pages: int = 5_000  # PDF pages: parsing costs about 5 ms of CPU per page
    # Characters in one line of a text or markdown file: a longer line is machine data (minified,
    # base64, logs) that would cost minutes to embed. Real text exports can run a whole chapter
    # into one line (L-Eval's documents hold lines of 140,000 characters), so the limit sits well
    # above that.
    max_line_chars: int = 1_000_000
    max_headings: int = 10_000  # headings found in one document: one section and leaf each
    # A document without headings of its own longer than this (cl100k tokens) is stored without
    # sections instead of being divided by the local model, which costs about 1.1-1.3 s per 1,000
    # tokens on the shared 2-core CPU (bench/RESULTS.md, "LLM structuring"): about 4 minutes at
    # this limit, plus at most 50 section summaries (~1.5 s each). Every text document of the
    # evaluation data is within it.
    llm_max_tokens: int = 200_000
    # A PDF that MuPDF had to repair (corrupt streams, broken objects) fails unless this is set,
    # in which case what could be read is stored, with a warning.
    allow_damaged: bool = False
    # Which PDF pages are read by OCR (longqa/parse/ocr.py): auto, those without a text layer that
    # show an image; always, every page (a text layer is ignored); never, none.
    ocr: str = "auto"
