"""Every `LONGQA_*` environment variable longqa reads, described once: its name, what it does,
its default and how a bad value is reported.

No other module reads a `LONGQA_` variable from the environment: they call the functions here
(or, for the command-line options that default to a variable, name it by `Variable.name`), so
this list is complete and docs/environment.md is written from it:

    python -m longqa.environment > docs/environment.md
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from longqa.errors import ModelError


@dataclass(frozen=True)
class Variable:
    name: str
    does: str
    default: str
    bad_value: str = "no value is refused"

    def value(self) -> str:
        """The value as set ('' when unset)."""
        return os.environ.get(self.name, "")


MODEL_FILE = "a missing or unusable model file, or no such profile: a one-line error naming it, exit 1"
SERVER = "not an http(s) URL, or no server there: a one-line error naming it, exit 1"

DATA_HOME = Variable("LONGQA_HOME", "Folder for longqa's files (the default store, models).",
                     "`$XDG_DATA_HOME/longqa`, else `~/.local/share/longqa`")
MODELS_DIR = Variable("LONGQA_MODELS_DIR", "Folder for the assembled and converted default model files.",
                      "`<data folder>/models`")
DB = Variable("LONGQA_DB", "The store every command but `eval` uses when `-d/--db` is not given.",
              "`<data folder>/longqa.db`")
SETTINGS = Variable("LONGQA_SETTINGS", "TOML file of ask settings used when `--settings` is not given "
                    "(docs/settings.md).", "none: the built-in settings",
                    "a missing or malformed file is a one-line error naming it, exit 2")
MODEL = Variable("LONGQA_MODEL", "Default of `-m/--model`: a generator profile's name (`longqa models` lists "
                 "them) or a GGUF file (with `--llm-url`, the server's model id).", "the default profile",
                 MODEL_FILE)
EMBED_MODEL = Variable("LONGQA_EMBED_MODEL", "Default of `--embed-model`: the embedding GGUF.",
                       "the embedded all-MiniLM-L6-v2", MODEL_FILE)
LLM_URL = Variable("LONGQA_LLM_URL", "Default of `--llm-url`: an OpenAI-compatible server for generation.",
                   "none: the local model", SERVER)
EMBED_URL = Variable("LONGQA_EMBED_URL", "Default of `--embed-url`: an OpenAI-compatible server for "
                     "embeddings.", "none: the local embedder", SERVER)
LLM_API_KEY = Variable("LONGQA_LLM_API_KEY", "Sent as the bearer token to a named server; a user and password in the server's URL are sent as basic auth instead, to that server only, and never shown.", "none: no key sent")
LLM_TIMEOUT = Variable("LONGQA_LLM_TIMEOUT", "Seconds all calls to a named server may take for one question.",
                       "30", "not a positive number of seconds up to 86400 (a day): a one-line error, exit 1")
LLM_PARALLEL = Variable("LONGQA_LLM_PARALLEL", "Requests sent to a named server at once when it scores "
                        "candidate answers (at most the slots llama-server reports).", "1",
                        "not a positive whole number up to 1000000: a one-line error, exit 1")
THREADS = Variable("LONGQA_THREADS", "Threads a local model uses; more than the usable cores are cut to "
                   "them, with a warning.", "the cores free when the model is opened, within the CPU affinity and a container's CPU quota",
                   "not a positive whole number up to 1000000: a one-line error, exit 1")
EXTRA_BUFFERS = Variable("LONGQA_EXTRA_BUFFERS", "`1` lets llama.cpp use its extra CPU buffer types "
                         "(AMX tiles, repacked blocks), `0` forbids them.",
                         "on, except on CPUs that advertise AMX", "any other value: the default")
DEBUG = Variable("LONGQA_DEBUG", "Any non-empty value: an internal error prints its traceback instead of "
                 "one line.", "off")

VARIABLES = (DATA_HOME, MODELS_DIR, DB, SETTINGS, MODEL, EMBED_MODEL, LLM_URL, EMBED_URL, LLM_API_KEY,
             LLM_TIMEOUT, LLM_PARALLEL, THREADS, EXTRA_BUFFERS, DEBUG)


def debug() -> bool:
    return bool(DEBUG.value())


# Upper bounds: a value past them is a typo, not a wish, and a timeout far past a day overflows
# the socket's timeout (OverflowError from Python's clock arithmetic).
MAX_LLM_TIMEOUT_S = 86_400.0
MAX_WORKERS = 1_000_000  # threads or parallel requests: more are cut to the cores or the slots, with a warning


def llm_timeout() -> float | None:
    """$LONGQA_LLM_TIMEOUT in seconds (a positive number up to a day), None when unset."""
    raw = LLM_TIMEOUT.value().strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= MAX_LLM_TIMEOUT_S:
        raise ModelError(f"LONGQA_LLM_TIMEOUT={raw!r}: not a positive number of seconds up to "
                         f"{MAX_LLM_TIMEOUT_S:.0f} (a day)")
    return value


def _whole(variable: Variable) -> int | None:
    """A variable's value as a whole number from 1 to MAX_WORKERS, None when unset."""
    value = variable.value().strip()
    if not value:
        return None
    try:
        number = int(value) if value.isascii() and value.isdigit() else 0
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_WORKERS:
        raise ModelError(f"{variable.name}={value!r}: expected a positive whole number up to {MAX_WORKERS}")
    return number


def llm_parallel() -> int:
    """$LONGQA_LLM_PARALLEL as a whole number from 1 to MAX_WORKERS, 1 when unset."""
    return _whole(LLM_PARALLEL) or 1


def threads() -> int | None:
    """$LONGQA_THREADS as a whole number from 1 to MAX_WORKERS, None when unset (capping it to
    the usable cores is models/threads.py's part)."""
    return _whole(THREADS)


def extra_buffers() -> bool | None:
    """$LONGQA_EXTRA_BUFFERS as a decision (`1` or `0`); None for unset or any other value."""
    value = EXTRA_BUFFERS.value().strip()
    return value == "1" if value in ("0", "1") else None


def document() -> str:
    """docs/environment.md: one row per variable."""
    lines = ["# Environment variables", "",
             "Written from longqa/environment.py (`python -m longqa.environment > docs/environment.md`).", "",
             "| Variable | What it does | Default | A bad value |", "| --- | --- | --- | --- |"]
    lines += [f"| `{v.name}` | {v.does} | {v.default} | {v.bad_value} |" for v in VARIABLES]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(document(), end="")
