"""Which generator and embedder to use, loaded once per process.

Precedence (the CLI fills the arguments from its options, whose defaults are the environment
variables $LONGQA_MODEL, $LONGQA_EMBED_MODEL, $LONGQA_LLM_URL and $LONGQA_EMBED_URL):

- generator: `llm_url` → the OpenAI-compatible server (`model`, if given, is the server's model
  id); else `model` → the profile of that name (models/profiles.py, assembled from its extra's
  packages) or that GGUF file (a profile's when its bytes are); else the default profile.
- embedder: `embed_model` → that GGUF file (must be a sentence encoder with pooling); else
  `embed_url` → that server's /embeddings; else the embedded all-MiniLM-L6-v2 (int8 through
  onnxruntime, models/defaults.py). A generation server (`llm_url`) never picks the embedder:
  a store's vectors only compare with vectors of the embedder that made them, and most servers
  that generate offer no embeddings at all.

A generator GGUF is never used as embedder: decoder models pool poorly (recall@2 0.36 vs 0.61
measured) and llama.cpp would silently give meaningless vectors, so it is refused.
"""

from __future__ import annotations

from pathlib import Path

from longqa import environment
from longqa.errors import ModelError
from longqa.models import profiles
from longqa.models.base import KEEPS_PREFIX, READS_ATTENTION, SCORES_OPTIONS, Embedder, Generator
from longqa.models.defaults import GENERATOR_NAME, default_embedder, default_generator_path, same_as_default
from longqa.models.files import read_gguf_info, cached_sha256

_LOADED: dict[tuple, object] = {}

# What models/llama.py's LlamaGenerator offers, stated here too so that a local generator's
# capabilities are known without importing llama.cpp (a test keeps the two equal).
LOCAL_GENERATOR_CAPABILITIES = frozenset({KEEPS_PREFIX, SCORES_OPTIONS, READS_ATTENTION})

SOURCE_DEFAULT = "embedded default"
SOURCE_FILE = "file"
SOURCE_SERVER = "server"
SOURCE_PROFILE = "profile"


def file_identity(path: Path) -> str:
    """`stem@sha12`, or the default's identity for a copy of a default model file, or a profile's
    file stem for a copy of a profile's file."""
    digest = cached_sha256(path)
    known = profiles.by_digest(digest)
    return same_as_default(digest) or (known.stem if known else f"{path.stem}@{digest[:12]}")


def names_file(model: str | None) -> bool:
    """Whether `-m`'s value is an existing file (else a profile's name, or the default)."""
    return bool(model) and Path(model).expanduser().is_file()


def generator_profile(model: str | None) -> profiles.Profile | None:
    """The profile `-m` names (None: a file that is no profile's). A value that is an existing file
    is a file, even if it were spelled like a profile's name."""
    if not model:
        return profiles.DEFAULT
    if not names_file(model):
        found = profiles.named(model)
        if found is not None:
            return found
        if not model.endswith(".gguf") and "/" not in model:
            raise ModelError(f"{model}: no such model profile or file (-m takes one of "
                             f"{', '.join(profiles.PROFILES)} or a GGUF path; `longqa models` lists them)")
    return profiles.by_identity(file_identity(_local_path(model, "--model")))


def profile_path(profile: profiles.Profile, *, verify: bool = False) -> Path:
    """A profile's GGUF: gemma's own package assembles it; the others' chunk packages (packaged.py)."""
    if profile is profiles.GEMMA_270M:
        return default_generator_path(verify=verify)
    from longqa.models.packaged import assembled_path

    return assembled_path(profile, verify=verify)


def profile_name(profile: profiles.Profile) -> str:
    """The identity a profile's generator carries (cache keys, reports, measured decisions)."""
    return GENERATOR_NAME if profile is profiles.GEMMA_270M else profile.stem


def _local_path(value: str, option: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_file():
        raise ModelError(f"{value}: model file not found ({option})")
    return path.resolve()


def chosen_model(model: str | None) -> str | None:
    """`model`, else $LONGQA_MODEL (the user's default for the Python API as for the CLI), else None."""
    return model or environment.MODEL.value().strip() or None


def load_generator(model: str | None = None, llm_url: str | None = None, *, n_ctx: int | None = None) -> Generator:
    """The generator to use; loaded once per process for the same arguments."""
    model = chosen_model(model)
    key = ("generator", model, llm_url, n_ctx)
    if key not in _LOADED:
        _LOADED[key] = _make_generator(model, llm_url, n_ctx)
    return _LOADED[key]  # type: ignore[return-value]


def lazy_generator(model: str | None = None, llm_url: str | None = None, *, n_ctx: int | None = None):
    """The generator as a LazyModel that knows, before loading, what a local one is called and
    offers: asking only that loads nothing. A server's model id comes from the server, so a
    server generator is loaded at the first attribute read, as any LazyModel is."""
    from longqa.models.lazy import LazyModel

    model = chosen_model(model)
    return LazyModel(lambda: load_generator(model, llm_url, n_ctx=n_ctx), known=generator_identity(model, llm_url))


def generator_identity(model: str | None = None, llm_url: str | None = None) -> dict:
    """The `name` and `capabilities` the generator `load_generator` gives will have, where they
    are known without loading it (a local GGUF); else empty. A local model has no `model_file`
    (the served file a server's model is measured as, skill.py): its name already says which."""
    if llm_url:
        return {}
    profile = generator_profile(model)
    if profile is not None and not names_file(model):
        name = profile_name(profile)
    else:
        name = file_identity(_local_path(model, "--model"))
    known = {"name": name, "capabilities": LOCAL_GENERATOR_CAPABILITIES, "model_file": None, "profile": profile}
    if profile is None:  # whether it reads as a reader: its metadata holds a chat template (models/llama.py)
        known["chats"] = bool(read_gguf_info(_local_path(model, "--model")).chat_template)
    return known


def load_embedder(embed_model: str | None = None, embed_url: str | None = None) -> Embedder:
    """The embedder to use; loaded once per process for the same arguments."""
    key = ("embedder", embed_model, embed_url)
    if key not in _LOADED:
        _LOADED[key] = _make_embedder(embed_model, embed_url)
    return _LOADED[key]  # type: ignore[return-value]


def _make_generator(model: str | None, llm_url: str | None, n_ctx: int | None):
    if llm_url:
        from longqa.models.openai import OpenAIGenerator

        generator = OpenAIGenerator(llm_url, model=model, n_ctx=n_ctx)
        generator.source = SOURCE_SERVER
        return generator
    from longqa.models.llama import LlamaGenerator

    profile = generator_profile(model)
    if names_file(model):
        path = _local_path(model, "--model")
        generator = LlamaGenerator(path, name=file_identity(path), n_ctx=n_ctx, profile=profile)
        generator.source = SOURCE_FILE
    else:
        name = profile_name(profile)
        generator = LlamaGenerator(profile_path(profile), name=name, n_ctx=n_ctx, profile=profile)
        generator.source = SOURCE_DEFAULT if profile is profiles.DEFAULT else SOURCE_PROFILE
    return generator


def _make_embedder(embed_model: str | None, embed_url: str | None):
    if embed_model:
        from longqa.models.llama import LlamaEmbedder

        path = _local_path(embed_model, "--embed-model")
        embedder = LlamaEmbedder(path, name=file_identity(path))
        embedder.source = SOURCE_FILE
    elif embed_url:
        from longqa.models.http import JsonClient
        from longqa.models.openai import OpenAIEmbedder

        embedder = OpenAIEmbedder(embed_url, client=JsonClient(embed_url, option="--embed-url"))
        embedder.source = SOURCE_SERVER
    else:
        embedder = default_embedder()
        embedder.source = SOURCE_DEFAULT
    return embedder
