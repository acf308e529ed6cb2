"""Model files: GGUF header reading, remembered checksums, atomic writes, prepared defaults."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import gguf
import numpy as np
import pytest

from longqa import config
from longqa.errors import ModelError
from longqa.models import defaults, files
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
    if "template" in numbers:
        writer.add_chat_template(numbers["template"])
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


def test_models_says_whether_a_gguf_answers_as_a_reader_or_a_chooser(tmp_path):
    from longqa.models import profiles
    from longqa.models.describe import answers_as

    template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    chat = write_gguf(tmp_path / "chat.gguf", "qwen2", template=template)
    plain = write_gguf(tmp_path / "plain.gguf", "gemma3")
    assert answers_as(None, chat).startswith("reader (the GGUF's chat template")
    assert answers_as(None, plain) == "chooser (no chat template in the GGUF)"
    assert answers_as(profiles.QWEN_15B, plain) == "reader (its chat prompt)"
    assert answers_as(profiles.GEMMA_270M, chat) == "chooser (a completion prompt)"


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


@pytest.fixture
def own_models_dir(tmp_path, monkeypatch):
    """A models folder of this test's own (the shared one holds the real models)."""
    folder = tmp_path / "models"
    monkeypatch.setenv("LONGQA_MODELS_DIR", str(folder))
    return folder


@pytest.mark.parametrize("cache", ["[1, 2, 3]", '"text"', "7", "{\"x\": []}"])
def test_a_hash_cache_of_the_wrong_shape_is_no_cache(tmp_path, cache, own_models_dir):
    # Once a list here ended every ask in an AttributeError.
    (config.models_dir()).mkdir(parents=True, exist_ok=True)
    (config.models_dir() / "hashes.json").write_text(cache)
    path = tmp_path / "f.bin"
    path.write_bytes(b"one")
    assert cached_sha256(path) == sha256_file(path)
    assert isinstance(json.loads((config.models_dir() / "hashes.json").read_text()), dict)  # rewritten whole


@pytest.mark.parametrize("digest", [123, ["a"], {"b": 1}, "", "xyz", "A" * 64])
def test_a_hash_cache_entry_whose_sha256_is_not_one_is_hashed_again(tmp_path, digest, own_models_dir):
    path = tmp_path / "f.bin"
    path.write_bytes(b"one")
    stat = path.stat()
    config.models_dir().mkdir(parents=True, exist_ok=True)
    (config.models_dir() / "hashes.json").write_text(json.dumps(
        {str(path.resolve()): {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}}))
    assert cached_sha256(path) == sha256_file(path)


def test_the_embedding_model_is_not_called_damaged_for_a_damaged_hash_cache(own_models_dir):
    from longqa.models.onnx_embed import package_model

    path = package_model()  # the installed package, hashed and remembered
    cache_file = config.models_dir() / "hashes.json"
    entry = json.loads(cache_file.read_text())
    entry[str(path.resolve())]["sha256"] = 123
    cache_file.write_text(json.dumps(entry))
    assert package_model() == path
    cache_file.write_text("[1, 2, 3]")
    assert package_model() == path


@pytest.mark.parametrize("digest", [5, "xyz", ["a"], True])
def test_a_stamp_without_a_real_sha256_does_not_vouch_for_its_file(tmp_path, digest):
    # Size and mtime match: before, any truthy "sha256" let the quick check pass the file.
    target = tmp_path / "model.gguf"
    target.write_bytes(b"weights")
    stat = target.stat()
    (tmp_path / "model.gguf.json").write_text(json.dumps(
        {"sha256": digest, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}))
    assert not defaults.is_verified(target)
    (tmp_path / "model.gguf.json").write_text("[1]")
    assert not defaults.is_verified(target)


# -- temporary files left by a killed write, and writes that the disk refuses -------------------------
HOLD = """
import sys, time
from pathlib import Path
from longqa.models.files import atomic_path
with atomic_path(Path(sys.argv[1])) as tmp:
    tmp.write_bytes(b"x" * 100_000)
    print(tmp, flush=True)
    time.sleep(60)
"""


def _writing(target):
    """A real process inside atomic_path(target), its temporary file written: (process, its temp)."""
    import subprocess

    process = subprocess.Popen([sys.executable, "-c", HOLD, str(target)], stdout=subprocess.PIPE, text=True)
    return process, Path(process.stdout.readline().strip())


def test_a_write_killed_with_sigkill_leaves_a_temporary_file_the_next_write_removes(tmp_path):
    target = tmp_path / "model.gguf"
    process, stale = _writing(target)
    process.kill()
    process.wait()
    assert stale.is_file()  # what kill -9 leaves (as `models --prepare` did, up to 1.1 GB)
    writing, live = _writing(tmp_path / "other.gguf")  # one being written now: kept
    try:
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"whole")
        assert not stale.exists() and live.is_file()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model.gguf", live.name])
    finally:
        writing.kill()
        writing.wait()
    files.sweep_stale(tmp_path)
    assert not live.exists()


def test_the_sweep_leaves_what_is_not_a_leftover_of_ours(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / ".tmp-elsewhere").symlink_to(tmp_path / "notes.txt")
    os.mkfifo(tmp_path / ".tmp-pipe")
    assert files.sweep_stale(tmp_path) == []
    assert (tmp_path / "notes.txt").read_text() == "mine"


def _tiny_profile(tmp_path, monkeypatch):
    """A profile of one part package made here (a small GGUF), installed on sys.path."""
    import hashlib
    import importlib

    from longqa.models.profiles import CHOOSER, COMPLETION, Profile

    package = tmp_path / "packages" / "tiny_weights_part1"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    data = write_gguf(package / "data" / "part01.bin").read_bytes()
    monkeypatch.syspath_prepend(str(tmp_path / "packages"))
    importlib.invalidate_caches()
    return Profile(name="tiny", title="Tiny", file="tiny.gguf", size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                   gguf_name="test model", prompt_format=COMPLETION, role=CHOOSER, licence="-", extra="tiny",
                   packages=("tiny_weights_part1",))


def test_a_profile_is_assembled_from_its_parts(tmp_path, monkeypatch, own_models_dir):
    from longqa.models.packaged import assembled_path

    profile = _tiny_profile(tmp_path, monkeypatch)
    path = assembled_path(profile)
    assert path == config.models_dir() / "tiny.gguf" and sha256_file(path) == profile.sha256


def test_assembly_on_a_full_disk_is_one_line_naming_the_folder_and_the_space(tmp_path, monkeypatch, own_models_dir):
    import errno
    import pathlib

    from longqa.models.packaged import assembled_path

    profile = _tiny_profile(tmp_path, monkeypatch)
    real_open = pathlib.Path.open

    class Full:  # the temporary file as on a full disk: ENOSPC at the write
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    def opening(self, mode="r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        return Full(handle) if "w" in mode and self.name.startswith(".tmp-") else handle

    monkeypatch.setattr(pathlib.Path, "open", opening)
    with pytest.raises(ModelError) as caught:
        assembled_path(profile)
    folder = config.models_dir()
    assert str(caught.value) == (f"tiny: cannot assemble its weights in {folder} (No space left on device): it needs "
                                 f"{profile.size:,} bytes free there, or LONGQA_MODELS_DIR naming a folder on a disk with room")
    assert list(folder.iterdir()) == []  # nothing half-written left


def test_assembly_into_a_read_only_folder_is_one_line_asking_for_a_writable_one(tmp_path, monkeypatch, own_models_dir):
    import errno

    from longqa.models.packaged import assembled_path

    profile = _tiny_profile(tmp_path, monkeypatch)

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(files.tempfile, "mkstemp", read_only)
    with pytest.raises(ModelError, match=r"^tiny: cannot assemble its weights in .*models \(Read-only file system\): "
                                         r"it needs a writable folder: set LONGQA_MODELS_DIR to one$"):
        assembled_path(profile)
