"""What `longqa models` reports: each model's source, file, size, context, GPU offload, dim.

Without `prepare`, local models are described from their GGUF header only (fast, nothing is
loaded or written); with it, the embedded defaults are assembled/converted, fully re-hashed,
and both models are loaded and tried once.
"""

from __future__ import annotations

from longqa import config
from longqa.models import defaults, profiles
from longqa.models.files import read_gguf_info
from longqa.models.resolve import (
    SOURCE_DEFAULT, SOURCE_FILE, SOURCE_PROFILE, SOURCE_SERVER, _local_path, file_identity, generator_profile,
    load_embedder, load_generator, names_file, profile_name, profile_path,
)


def _file_fields(path, *, generator: bool) -> dict:
    from longqa.models.llama import DEFAULT_GENERATOR_CTX, gpu_offload

    info = read_gguf_info(path)
    fields = {
        "path": str(info.path),
        "size": info.size,
        "architecture": info.architecture,
        "trained_context_length": info.context_length,
        "gpu_offload": gpu_offload(),
    }
    if generator:
        fields["context_length"] = min(DEFAULT_GENERATOR_CTX, info.context_length or DEFAULT_GENERATOR_CTX)
    else:
        fields["context_length"] = info.context_length
        fields["dim"] = info.embedding_length
    return fields


def describe_generator(model: str | None, llm_url: str | None, *, prepare: bool = False) -> dict:
    if llm_url:
        generator = load_generator(model, llm_url)
        report = {"source": SOURCE_SERVER, "url": generator.url, "name": generator.name,
                  "context_length": generator.n_ctx, "gpu_offload": None}
        if prepare:
            report["checked"] = _try_generator(generator)
        return report
    profile = generator_profile(model)
    if names_file(model):
        path = _local_path(model, "--model")
        report = {"source": SOURCE_FILE, "name": file_identity(path), **_file_fields(path, generator=True)}
        if profile is not None:
            report["profile"] = profile.name
    else:  # a profile, by name or as the default
        path = config.models_dir() / profile.file
        if prepare or path.is_file():
            path = profile_path(profile, verify=prepare)
        report = {"source": SOURCE_DEFAULT if profile is profiles.DEFAULT else SOURCE_PROFILE,
                  "name": profile_name(profile), "profile": profile.name}
        report.update(_file_fields(path, generator=True) if path.is_file() else _unprepared(path))
    if path.is_file():
        report["answers_as"] = answers_as(profile, path)
    if prepare:
        report["checked"] = _try_generator(load_generator(model, None))
    return report


def answers_as(profile, path) -> str:
    """A local generator's way of answering, in words: a reader (its profile's chat prompt, or the
    chat template in a GGUF no profile declares) or a chooser (a completion prompt)."""
    if profile is not None:
        return "reader (its chat prompt)" if profile.reads else "chooser (a completion prompt)"
    if read_gguf_info(path).chat_template:
        return "reader (the GGUF's chat template; its decisions unmeasured, so it never declines on confidence)"
    return "chooser (no chat template in the GGUF)"


def describe_embedder(embed_model: str | None, embed_url: str | None, *, prepare: bool = False) -> dict:
    if embed_model:
        path = _local_path(embed_model, "--embed-model")
        report = {"source": SOURCE_FILE, "name": file_identity(path), **_file_fields(path, generator=False)}
    elif embed_url:
        embedder = load_embedder(None, embed_url)
        return {"source": SOURCE_SERVER, "url": embedder.url, "name": embedder.name, "dim": embedder.dim,
                "gpu_offload": None, **({"checked": _try_embedder(embedder)} if prepare else {})}
    else:
        report = {"source": SOURCE_DEFAULT, "name": defaults.EMBEDDER_NAME,
                  **_default_embedder_fields(defaults.VOCABULARY_PATH)}
    if prepare:
        report["checked"] = _try_embedder(load_embedder(embed_model, embed_url))
    return report


def _default_embedder_fields(vocabulary) -> dict:
    """The int8 ONNX file that computes the vectors, and the vocabulary its word pieces come from."""
    from longqa.models.onnx_embed import package_model

    model = package_model()
    return {"path": str(model), "size": model.stat().st_size, "runtime": "onnxruntime (int8)",
            "vocabulary": str(vocabulary), "max_tokens": defaults.EMBED_MAX_TOKENS, "dim": 384,
            "gpu_offload": False}


def _unprepared(path) -> dict:
    return {"path": str(path), "size": None, "prepared": False,
            "note": "prepared on first use, or now with `longqa models --prepare`"}


def _try_generator(generator) -> bool:
    return isinstance(generator.complete("One, two, three,", max_tokens=2), str)


def _try_embedder(embedder) -> bool:
    vectors = embedder.embed(["a short test sentence"])
    return vectors.shape == (1, embedder.dim)
