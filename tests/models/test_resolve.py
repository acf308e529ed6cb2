"""Choosing and loading models: errors for bad choices, identities, thread settings."""

from __future__ import annotations

import shutil

import pytest

from longqa.errors import ModelError
from longqa.models.resolve import file_identity, load_embedder, load_generator


def test_missing_model_files_name_the_option(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelError, match=r"nope.gguf: model file not found \(--model\)"):
        load_generator(str(missing))
    with pytest.raises(ModelError, match=r"nope.gguf: model file not found \(--embed-model\)"):
        load_embedder(str(missing))


def test_a_non_gguf_model_is_refused_in_one_line(tmp_path):
    fake = tmp_path / "weights.gguf"
    fake.write_bytes(b"\x89PNG not a model at all")
    with pytest.raises(ModelError) as caught:
        load_generator(str(fake))
    assert str(caught.value) == f"{fake}: not a GGUF model file"


def test_file_identity_follows_content_not_name(tmp_path):
    first = tmp_path / "model.gguf"
    first.write_bytes(b"GGUF same bytes")
    copy = tmp_path / "model-copy.gguf"
    shutil.copyfile(first, copy)
    assert file_identity(first).split("@")[1] == file_identity(copy).split("@")[1]
    copy.write_bytes(b"GGUF other bytes")
    assert file_identity(first).split("@")[1] != file_identity(copy).split("@")[1]
    assert file_identity(first).startswith("model@")


