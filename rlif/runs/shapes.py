"""Model architectures the planner sizes runs by: a local ``config.json`` when the model is downloaded, else a
built-in table of the models rlif trains (no download, no torch)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIB = 2**30


@dataclass(frozen=True)
class ModelShape:
    """The architecture numbers the memory and time formulas need (a decoder-only transformer, SwiGLU MLP).

    Attributes:
        name: model id or path.
        hidden: hidden size h.
        layers: decoder layers L.
        heads: attention heads.
        kv_heads: key/value heads (grouped-query attention).
        head_dim: size of one head.
        intermediate: MLP inner size.
        vocab: vocabulary size V.
        tied: input embedding and lm_head share one matrix.
        qkv_bias: q/k/v projections carry biases (Qwen2).
        qk_norm: per-head RMSNorm on q and k (Qwen3).
        max_position: the context the model was trained for (``max_position_embeddings``; 0 when the config does
            not say), what caps a probe's longer response cap.
    """

    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool
    qkv_bias: bool = False
    qk_norm: bool = False
    max_position: int = 0

    @property
    def layer_params(self) -> int:
        """Parameters of one decoder layer (attention, MLP, two norms, q/k norms and biases where present)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        attention = self.hidden * (q + 2 * kv) + q * self.hidden
        bias = (q + 2 * kv) if self.qkv_bias else 0
        norms = 2 * self.hidden + (2 * self.head_dim if self.qk_norm else 0)
        return attention + bias + 3 * self.hidden * self.intermediate + norms

    @property
    def embedding_params(self) -> int:
        """Input embedding plus lm_head (one matrix when tied)."""
        return self.vocab * self.hidden * (1 if self.tied else 2)

    @property
    def params(self) -> int:
        """All parameters."""
        return self.layers * self.layer_params + self.embedding_params + self.hidden

    def activation_bytes_per_token_layer(self) -> float:
        """Bytes one decoder layer keeps for backward per token, its input excluded (bf16 compute, SDPA/flash).

        A least-squares fit to saved-tensor counts of real configs (docs/run-planning.md): 16 B per hidden unit
        (norm upcasts, residuals), 3 B per q/k/v unit, 8 B per MLP unit (gate, up, activation, product), and 6 B
        per q/k unit for Qwen3's q/k norms.
        """
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        return 16 * self.hidden + 3 * (q + 2 * kv) + 8 * self.intermediate + (6 * (q + kv) if self.qk_norm else 0)

    def kv_bytes_per_token(self, tp: int) -> float:
        """vLLM KV cache per token on one GPU (bf16 K and V of every layer; KV heads split over TP when they can)."""
        heads_per_gpu = max(1.0, self.kv_heads / tp)
        return 2 * self.layers * heads_per_gpu * self.head_dim * 2

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any]) -> ModelShape:
        """Read a Hugging Face ``config.json`` mapping.

        Raises:
            ValueError: a field the planner needs is missing (names the model and the field).
        """
        try:
            hidden = int(config["hidden_size"])
            heads = int(config["num_attention_heads"])
            model_type = str(config.get("model_type", ""))
            return cls(
                name=name,
                hidden=hidden,
                layers=int(config["num_hidden_layers"]),
                heads=heads,
                kv_heads=int(config.get("num_key_value_heads") or heads),
                head_dim=int(config.get("head_dim") or hidden // heads),
                intermediate=int(config["intermediate_size"]),
                vocab=int(config["vocab_size"]),
                tied=bool(config.get("tie_word_embeddings", False)),
                qkv_bias=bool(config.get("attention_bias", model_type == "qwen2")),
                qk_norm=model_type.startswith("qwen3"),
                max_position=int(config.get("max_position_embeddings") or 0),
            )
        except KeyError as err:
            raise ValueError(f"model {name}: config.json lacks {err.args[0]!r}, which the run planner needs") from None


def _config(model_type: str, dims: tuple[int, int, int, int, int], **rest: Any) -> dict[str, Any]:
    """The ``config.json`` fields the planner reads, for the built-in table: ``dims`` is (hidden size, layers,
    attention heads, KV heads, MLP size)."""
    h, layers, heads, kv, inter = dims
    return {
        "model_type": model_type,
        "hidden_size": h,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": 128,
        "intermediate_size": inter,
        **rest,
    }


_QWEN3 = {"vocab_size": 151936, "max_position_embeddings": 40960}
_QWEN25 = {"vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": False}
_QWEN25_3B = {"vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}

BUILTIN_CONFIGS: dict[str, dict[str, Any]] = {
    "Qwen/Qwen3-0.6B": _config("qwen3", (1024, 28, 16, 8, 3072), tie_word_embeddings=True, **_QWEN3),
    "Qwen/Qwen3-1.7B": _config("qwen3", (2048, 28, 16, 8, 6144), tie_word_embeddings=True, **_QWEN3),
    "Qwen/Qwen3-4B": _config("qwen3", (2560, 36, 32, 8, 9728), tie_word_embeddings=True, **_QWEN3),
    "Qwen/Qwen3-8B": _config("qwen3", (4096, 36, 32, 8, 12288), tie_word_embeddings=False, **_QWEN3),
    "Qwen/Qwen2.5-7B-Instruct": _config("qwen2", (3584, 28, 28, 4, 18944), **_QWEN25),
    "Qwen/Qwen2.5-7B-Instruct-1M": _config(
        "qwen2", (3584, 28, 28, 4, 18944), **{**_QWEN25, "max_position_embeddings": 1010000}
    ),
    "Qwen/Qwen2.5-3B-Instruct": _config("qwen2", (2048, 36, 16, 2, 11008), **_QWEN25_3B),
    "PKU-ML/G1-7B": _config("qwen2", (3584, 28, 28, 4, 18944), **_QWEN25),
    "PKU-ML/G1-3B": _config("qwen2", (2048, 36, 16, 2, 11008), **_QWEN25_3B),
    "meta-llama/Llama-3.1-8B-Instruct": _config(
        "llama",
        (4096, 32, 32, 8, 14336),
        vocab_size=128256,
        max_position_embeddings=131072,
        tie_word_embeddings=False,
    ),
}
"""The ``config.json`` values of the matrix's models (docs/run-planning.md); G1 models are Qwen2.5-Instruct
fine-tunes with their base's shape."""

BUILTIN_SHAPES = {name: ModelShape.from_config(name, config) for name, config in BUILTIN_CONFIGS.items()}


def find_config(model: str, hub_cache: Path | None = None) -> Path | None:
    """A local ``config.json`` for ``model``: a model directory, or the newest snapshot in the Hugging Face cache.

    Args:
        model: a local path or a hub repo id.
        hub_cache: the hub cache (default: ``HF_HUB_CACHE``, ``HF_CACHE_DIR``, ``HF_HOME/hub``, ``~/.cache``).
    """
    local = Path(model).expanduser()
    if (local / "config.json").is_file():
        return local / "config.json"
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", model):
        return None
    if hub_cache is None:
        root = os.environ.get("HF_HUB_CACHE") or os.environ.get("HF_CACHE_DIR")
        hf_home = os.environ.get("HF_HOME")
        hub_cache = Path(root) if root else Path(hf_home) / "hub" if hf_home else Path.home() / ".cache/huggingface/hub"
    snapshots = hub_cache / ("models--" + model.replace("/", "--")) / "snapshots"
    configs = sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime) if snapshots.is_dir() else []
    return configs[-1] if configs else None


def model_shape(model: str, hub_cache: Path | None = None) -> ModelShape:
    """The architecture of ``model``: its local ``config.json`` when there is one, else the built-in table.

    Raises:
        ValueError: neither a local config nor a built-in entry (the message names the model and the fixes).
    """
    config = find_config(model, hub_cache)
    if config is not None:
        try:
            data = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as err:
            raise ValueError(f"model {model}: cannot read {config}: {err}") from None
        return ModelShape.from_config(model, data.get("text_config", data))
    if model in BUILTIN_SHAPES:
        return BUILTIN_SHAPES[model]
    raise ValueError(
        f"model {model}: no local config.json and not in the planner's table ({', '.join(sorted(BUILTIN_SHAPES))}); "
        "download it first (python hf_model_download.py) or add its shape to rlif/runs/shapes.py"
    )
