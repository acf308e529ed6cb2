"""Model files: GGUF header reading, remembered checksums, atomic writes, prepared defaults."""

from __future__ import annotations

import os
import sys

import gguf
import numpy as np
import pytest

from longqa import config
from longqa.errors import ModelError
from longqa.models import defaults
from tests.conftest import needs_minilm_package
from longqa.models.files import atomic_path, cached_sha256, read_gguf_header, read_gguf_info, sha256_file


def write_gguf(path, arch="llama", **numbers):
    writer = gguf.GGUFWriter(path, arch)
    writer.add_name("test model")
    writer.add_context_length(numbers.get("ctx", 4096))
    writer.add_embedding_length(64)
    writer.add_token_list(["a", "bb", "ccc"] * 1000)  # an array the reader must step over
    writer.add_token_scores([0.5] * 3000)
    if "pooling" in numbers:
        writer.add_pooling_type(gguf.PoolingType(numbers["pooling"]))
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_header_reader_returns_scalars_and_skips_arrays(tmp_path):
    header = read_gguf_header(write_gguf(tmp_path / "m.gguf"))
    assert header["general.architecture"] == "llama"
    assert header["general.name"] == "test model"
    assert header["llama.context_length"] == 4096
    assert header["tokenizer.ggml.tokens"] is None and header["tokenizer.ggml.scores"] is None


def test_info_tells_generators_from_sentence_encoders(tmp_path):
    generator = read_gguf_info(write_gguf(tmp_path / "g.gguf", "gemma3", ctx=32768))
    assert (generator.architecture, generator.context_length, generator.is_encoder) == ("gemma3", 32768, False)
    pooled = read_gguf_info(write_gguf(tmp_path / "p.gguf", "qwen3", pooling=1))
    assert pooled.is_encoder and pooled.pooling_type == 1


@pytest.mark.parametrize("content, message", [
    (None, "model file not found"),
    (b"PK\x03\x04 a zip file", "not a GGUF model file"),
])
def test_missing_or_foreign_file_is_a_one_line_model_error(tmp_path, content, message):
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ModelError, match=message) as caught:
        read_gguf_info(path)
    assert "\n" not in str(caught.value)


def test_truncated_gguf_is_reported_corrupt(tmp_path):
    whole = write_gguf(tmp_path / "whole.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole[:2000])  # inside the token list
    with pytest.raises(ModelError, match="corrupt GGUF"):
        read_gguf_info(cut)


def test_cached_sha256_is_recomputed_when_the_file_changes(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"one")
    assert cached_sha256(path) == sha256_file(path)
    assert (config.models_dir() / "hashes.json").is_file()
    path.write_bytes(b"two, longer")
    assert cached_sha256(path) == sha256_file(path)


def test_atomic_path_publishes_only_complete_files(tmp_path):
    target = tmp_path / "out.bin"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []
    with atomic_path(target) as tmp:
        tmp.write_bytes(b"whole")
    assert target.read_bytes() == b"whole"
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_default_embedder_is_converted_once_and_rebuilt_when_tampered(tmp_path, monkeypatch):
    needs_minilm_package()
    monkeypatch.setenv("LONGQA_MODELS_DIR", str(tmp_path))
    path = defaults.default_embedder_path()
    assert path == tmp_path / defaults.EMBEDDER_FILE
    stamp = (tmp_path / (defaults.EMBEDDER_FILE + ".json")).read_text()
    assert sha256_file(path) in stamp
    mtime = path.stat().st_mtime_ns
    assert defaults.default_embedder_path() == path and path.stat().st_mtime_ns == mtime  # reused
    with path.open("r+b") as handle:  # damage it: same size, different bytes
        handle.seek(1_000_000)
        handle.write(b"\0" * 64)
    assert not defaults.is_verified(path)
    defaults.default_embedder_path()
    assert defaults.is_verified(path, full=True)
    assert defaults.same_as_default(sha256_file(path)) == defaults.GGUF_EMBEDDER_NAME
    assert defaults.same_as_default("0" * 64) is None


def test_f16_conversion_without_its_extra_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setenv("LONGQA_MODELS_DIR", str(tmp_path))
    monkeypatch.setitem(sys.modules, "safetensors", None)  # as where `longqa[f16]` is not installed
    with pytest.raises(ModelError, match=r"gguf and safetensors: run `pip install 'longqa\[f16\]'`"):
        defaults.default_embedder_path()
    assert list(tmp_path.iterdir()) == []
