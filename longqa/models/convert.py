"""Convert the packaged all-MiniLM-L6-v2 (safetensors + WordPiece vocabulary) to a GGUF file
that llama.cpp loads as a BERT sentence encoder, using numpy, `gguf` and `safetensors` only.
`write_vocabulary` writes the same file without tensors: enough for llama.cpp's WordPiece
tokenizer (`vocab_only`), the reference that models/wordpiece.py is tested against.

The output is deterministic for a given input and `gguf` version; callers record its sha256.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from longqa.errors import ModelError
from longqa.models.files import atomic_path, sha256_file

CONVERTER_VERSION = 1  # bump when the produced file changes; cached conversions are then redone
CONTROL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
DROPPED_TENSORS = ("embeddings.position_ids", "pooler.")  # not used for sentence embeddings
POOLING_MODES = {"pooling_mode_mean_tokens": 1, "pooling_mode_cls_token": 2}


def llama_wordpiece_tokens(vocab: list[str], control: tuple[str, ...] = CONTROL_TOKENS) -> list[str]:
    """Rewrite a WordPiece vocabulary the way llama.cpp's WPM tokenizer reads it: a word start
    carries a leading U+2581, a continuation piece loses its `##`, control tokens stay as they are."""
    out = []
    for token in vocab:
        if token in control:
            out.append(token)
        elif token.startswith("##") and len(token) > 2:
            out.append(token[2:])
        else:
            out.append("\u2581" + token)
    return out


def tensor_name_map(hf_names: list[str], n_layers: int) -> dict[str, str]:
    """HF BERT tensor name → GGUF name, for every tensor the encoder needs."""
    from gguf import MODEL_ARCH, get_tensor_name_map

    mapping = get_tensor_name_map(MODEL_ARCH.BERT, n_layers)
    names = {}
    for hf in hf_names:
        if any(hf == d or hf.startswith(d) for d in DROPPED_TENSORS):
            continue
        gguf_name = mapping.get_name(hf, try_suffixes=(".weight", ".bias"))
        if gguf_name is None:
            raise ModelError(f"cannot map tensor {hf!r} to a llama.cpp BERT tensor")
        names[hf] = gguf_name
    return names


# llama.cpp adds these rows to the hidden states directly; its CPU add needs them in F32.
F32_TENSORS = ("token_types.weight", "position_embd.weight")


WEIGHT_TYPES = ("f16", "q8_0", "bf16")


def tensor_for_gguf(gguf_name: str, array: np.ndarray) -> np.ndarray:
    """2-D weight matrices as F16 (half the size, no measurable loss); vectors and the small
    position/type tables stay F32."""
    if array.ndim == 2 and gguf_name not in F32_TENSORS:
        return array.astype(np.float16)
    return array.astype(np.float32)


def quantize_matrix(gguf_name: str, array: np.ndarray, weights: str):
    """(data, raw dtype) for a Q8_0 or BF16 file: 2-D matrices in that type (Q8_0: 8 bits per
    weight in blocks of 32, so rows must divide by 32: MiniLM's 384 and 1536 do), everything else
    as tensor_for_gguf."""
    from gguf import GGMLQuantizationType, quants

    kind = {"q8_0": GGMLQuantizationType.Q8_0, "bf16": GGMLQuantizationType.BF16}[weights]
    if array.ndim == 2 and gguf_name not in F32_TENSORS and array.shape[1] % 32 == 0:
        return quants.quantize(array.astype(np.float32), kind), kind
    return tensor_for_gguf(gguf_name, array), None


def pooling_type(model_dir: Path) -> int:
    config_path = model_dir / "1_Pooling" / "config.json"
    if not config_path.is_file():
        return 1  # sentence-transformers' default is mean pooling
    settings = json.loads(config_path.read_text())
    for key, value in POOLING_MODES.items():
        if settings.get(key):
            return value
    raise ModelError(f"{config_path}: unsupported pooling mode")


def read_bert(model_dir: Path) -> tuple[dict, list[str]]:
    """A BERT model folder's config.json and vocab.txt lines, checked against each other."""
    model_dir = Path(model_dir)
    try:
        cfg = json.loads((model_dir / "config.json").read_text())
        vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError) as exc:
        raise ModelError(f"{model_dir}: cannot read the embedding model to convert ({exc})") from None
    if len(vocab) != int(cfg["vocab_size"]):
        raise ModelError(f"{model_dir}: vocab.txt has {len(vocab)} tokens, config says {cfg['vocab_size']}")
    return cfg, vocab


def _bert_metadata(writer, cfg: dict, vocab: list[str], name: str, pooling: int, file_type=None) -> None:
    """Every key llama.cpp reads for a BERT encoder and its WordPiece tokenizer (in the order
    earlier conversions wrote them, so a converted file's bytes and sha256 stay the same)."""
    import gguf

    writer.add_name(name)
    writer.add_context_length(int(cfg["max_position_embeddings"]))
    writer.add_embedding_length(int(cfg["hidden_size"]))
    writer.add_feed_forward_length(int(cfg["intermediate_size"]))
    writer.add_block_count(int(cfg["num_hidden_layers"]))
    writer.add_head_count(int(cfg["num_attention_heads"]))
    writer.add_layer_norm_eps(float(cfg["layer_norm_eps"]))
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType(pooling))
    if file_type is not None:
        writer.add_file_type(file_type)
    writer.add_tokenizer_model("bert")
    writer.add_token_list(llama_wordpiece_tokens(vocab))
    writer.add_token_types([gguf.TokenType.CONTROL if t in CONTROL_TOKENS else gguf.TokenType.NORMAL for t in vocab])
    writer.add_token_type_count(int(cfg.get("type_vocab_size", 2)))
    ids = {t: i for i, t in enumerate(vocab)}
    writer.add_bos_token_id(ids["[CLS]"])
    writer.add_eos_token_id(ids["[SEP]"])
    writer.add_unk_token_id(ids["[UNK]"])
    writer.add_sep_token_id(ids["[SEP]"])
    writer.add_pad_token_id(ids["[PAD]"])
    writer.add_mask_token_id(ids["[MASK]"])


def write_vocabulary(model_dir: Path, out_path: Path, name: str = "all-MiniLM-L6-v2") -> str:
    """A GGUF with the model's metadata and vocabulary and no tensors (a few hundred KB), for
    llama.cpp's tokenizer; returns its sha256. The token ids are those of convert_bert's file.
    (The default embedder reads vocab.txt itself; this file is llama.cpp's reading of it.)"""
    import gguf

    cfg, vocab = read_bert(model_dir)
    with atomic_path(out_path) as tmp:
        writer = gguf.GGUFWriter(tmp, "bert")
        _bert_metadata(writer, cfg, vocab, name, pooling_type(Path(model_dir)))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.close()
        digest = sha256_file(tmp)
    return digest


def convert_bert(model_dir: Path, out_path: Path, name: str = "all-MiniLM-L6-v2", weights: str = "f16") -> str:
    """Write `out_path` (via a temporary file, renamed when complete); return its sha256.
    `weights`: "f16" or "q8_0" for the 2-D weight matrices (WEIGHT_TYPES)."""
    if weights not in WEIGHT_TYPES:
        raise ValueError(f"weights must be one of {WEIGHT_TYPES}")
    import gguf
    from safetensors import safe_open

    model_dir = Path(model_dir)
    cfg, vocab = read_bert(model_dir)
    n_layers = int(cfg["num_hidden_layers"])
    with atomic_path(out_path) as tmp:
        writer = gguf.GGUFWriter(tmp, "bert")
        file_type = {"f16": gguf.LlamaFileType.MOSTLY_F16, "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
                     "bf16": gguf.LlamaFileType.MOSTLY_BF16}[weights]
        _bert_metadata(writer, cfg, vocab, name, pooling_type(model_dir), file_type)
        with safe_open(str(model_dir / "model.safetensors"), "numpy") as tensors:
            names = tensor_name_map(sorted(tensors.keys()), n_layers)
            for hf_name, gguf_name in names.items():
                array = tensors.get_tensor(hf_name)
                if weights != "f16":
                    data, raw_dtype = quantize_matrix(gguf_name, array, weights)
                    writer.add_tensor(gguf_name, data, raw_dtype=raw_dtype)
                else:
                    writer.add_tensor(gguf_name, tensor_for_gguf(gguf_name, array))
            writer.write_header_to_file()
            writer.write_kv_data_to_file()
            writer.write_tensors_to_file()
        writer.close()
        digest = sha256_file(tmp)
    return digest
