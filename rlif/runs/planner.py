"""Run planner: GPU memory of every pass, tokens per step, step time and GPU-hours of a run, with no GPU.

verl 0.9.1 GRPO steps go through four memory phases on each GPU (docs/run-planning.md gives every formula and
its source): vLLM rollout, the actor's old-log-prob pass, the reference log-prob pass and the actor update. The
planner estimates the peak of each from the model's architecture and the run's lengths, batch, parallelism,
offload and dynamic-batch budgets, sizes the token budgets the matrix leaves at 0, and estimates the step time
from a memory-bound decode model and a FLOPs model of training. Everything here is arithmetic: no torch, no verl.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlif.runs.spec import RunSpec

if TYPE_CHECKING:
    from rlif.runs.probe import Probe

GIB = 2**30
RESERVE_GIB = 6.0
"""Per-GPU memory no formula counts: CUDA contexts, NCCL buffers, allocator fragmentation, vLLM's CUDA graphs."""

VLLM_ACTIVATION_GIB = 2.0
"""vLLM's activation peak inside its ``gpu_memory_utilization`` share, before the KV pool gets the rest."""

FUSED_CHUNK_TOKENS = 512
"""Token chunk of verl's fused lm_head + log-prob + entropy kernel (``use_fused_kernels``)."""

ENTROPY_CHUNK_TOKENS = 2048
"""Token chunk of ``entropy_from_logits_with_chunking`` (``entropy_from_logits_chunk_size``)."""

MAX_NUM_SEQS = 256
"""vLLM's concurrent sequences per replica in verl's rollout config (``rollout.max_num_seqs``)."""

UPDATE_BUDGET_CAP = 2
LOG_PROB_BUDGET_CAP = 3
"""Auto-sized token budgets stop at these multiples of prompt + response (verl's DAPO scripts use 2x and 3x)."""

BUDGET_STEP = 1024


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
        "download it first (python hf_model_download.py) or add its shape to rlif/runs/planner.py"
    )


@dataclass(frozen=True)
class PassPlan:
    """Estimated peak memory of one pass on one GPU.

    Attributes:
        name: the pass.
        components_gib: what occupies the GPU at the pass's peak, in GiB.
        tokens: tokens per micro-batch on one GPU (0 for the rollout).
        fix: the knob that lowers this pass's peak.
    """

    name: str
    components_gib: dict[str, float]
    tokens: int
    fix: str

    @property
    def total_gib(self) -> float:
        """The pass's peak."""
        return sum(self.components_gib.values())


@dataclass(frozen=True)
class RunPlan:
    """The planner's view of one run.

    Attributes:
        run: the run's name.
        shape: the model architecture used.
        world: GPUs of the run.
        actor_budget: update tokens per GPU per micro-batch.
        log_prob_budget: old-log-prob tokens per GPU per micro-batch.
        ref_budget: reference tokens per GPU per micro-batch.
        passes: memory of every pass.
        kv_pool_tokens: vLLM KV-cache capacity of one replica, in tokens.
        rows: training rows (None when the data file is not at hand and its name gives no count).
        steps: steps the run will train (None when unknown).
        epochs: passes over the data those steps make (None when unknown).
        max_tokens_per_step: prompt + response tokens of a step at the length limits.
        expected_tokens_per_step: the same at the mean lengths the time estimate uses.
        lengths: the mean lengths (and decode rate) the time estimate uses: the matrix's or a probe's.
        assumed: the matrix's assumed lengths, shown beside measured ones.
        fast: the step time at the fast end of the assumptions.
        slow: the step time at the slow end.
        problems: (key, message) pairs: what does not fit or cannot run, with the knob that fixes it.
    """

    run: str
    shape: ModelShape
    world: int
    actor_budget: int
    log_prob_budget: int
    ref_budget: int
    passes: tuple[PassPlan, ...]
    kv_pool_tokens: int
    rows: int | None
    steps: int | None
    epochs: float | None
    max_tokens_per_step: int
    expected_tokens_per_step: int
    lengths: Lengths
    assumed: Lengths
    fast: StepTime
    slow: StepTime
    problems: tuple[tuple[str, str], ...] = field(default=())

    @property
    def peak(self) -> PassPlan:
        """The pass with the highest peak."""
        return max(self.passes, key=lambda p: p.total_gib)

    @property
    def step_seconds(self) -> float:
        """Wall time of one step at the slow end: what budgets and time limits are planned on."""
        return self.slow.seconds

    @property
    def step_seconds_range(self) -> tuple[float, float]:
        """Wall time of one step, fast end and slow end."""
        return self.fast.seconds, self.slow.seconds

    def gpu_hours(self) -> float | None:
        """GPU-hours of the whole run at the slow end (None when the step count is unknown)."""
        return None if self.steps is None else self.step_seconds * self.steps * self.world / 3600

    def gpu_hours_range(self) -> tuple[float, float] | None:
        """GPU-hours of the whole run, fast end and slow end (None when the step count is unknown)."""
        if self.steps is None:
            return None
        return tuple(seconds * self.steps * self.world / 3600 for seconds in self.step_seconds_range)  # type: ignore[return-value]

    def wall_hours(self) -> float | None:
        """Wall-clock hours of the whole run at the slow end."""
        return None if self.steps is None else self.step_seconds * self.steps / 3600


# ---------------------------------------------------------------------------------------------------- memory


def _gib(n_bytes: float) -> float:
    return n_bytes / GIB


def actor_states_bytes(shape: ModelShape, world: int, lora_rank: int) -> float:
    """fp32 master weights, fp32 gradients and AdamW's two fp32 moments, sharded over ``world`` (16 B/param).

    With LoRA only the frozen fp32 weights count (adapters are a rounding error at these ranks).
    """
    per_param = 4 if lora_rank > 0 else 16
    return shape.params * per_param / world


def gathered_bytes(shape: ModelShape, backward: bool) -> float:
    """Unsharded bf16 copies FSDP2 holds at once: two decoder layers (the prefetched next one) and the
    embedding / lm_head of the root unit, plus their bf16 gradients before reduce-scatter in backward."""
    layers = 2 * shape.layer_params * 2 + (shape.layer_params * 2 if backward else 0)
    embedding = shape.embedding_params * (4 if backward else 2)
    return layers + embedding


def update_activation_bytes(shape: ModelShape, tokens: int, checkpointing: bool) -> float:
    """Activations the update keeps: each layer's bf16 input with checkpointing plus one layer recomputed at
    about twice its saved bytes; every layer's saved tensors without."""
    per_layer = shape.activation_bytes_per_token_layer()
    if checkpointing:
        return tokens * (shape.layers * 2 * shape.hidden + 2 * per_layer)
    return tokens * shape.layers * (2 * shape.hidden + per_layer)


def forward_activation_bytes(shape: ModelShape, tokens: int) -> float:
    """A forward-only pass keeps one layer's working set and the bf16 residual stream."""
    return tokens * (shape.activation_bytes_per_token_layer() + 4 * shape.hidden)


def logits_bytes(shape: ModelShape, tokens: int, *, fused: bool, backward: bool, entropy: bool, chunked: bool) -> float:
    """Logits-side memory: bf16 tokens x V logits (and their in-place gradient in the update), or the temporaries
    of verl's fused kernel; the old-log-prob pass also computes entropy, whole (7 B per logit) or in chunks.

    The fused kernel (``verl/utils/experimental/torch_functional.py``) works on 512-token chunks. Forward holds a
    chunk's bf16 logits, their fp32 copy, the softmax and the entropy's product (14 B per logit). Backward holds
    the bf16 and fp32 logits, softmax, one-hot, their difference, its scaled copy, the fp32 and bf16 gradient (26 B
    per logit), plus the whole lm_head gradient and one chunk's contribution to it (2 x V x h bf16) and the hidden
    states' gradient (tokens x h bf16).
    """
    if fused:
        chunk = FUSED_CHUNK_TOKENS * shape.vocab
        if backward:
            return 26 * chunk + 2 * 2 * shape.vocab * shape.hidden + 2 * tokens * shape.hidden
        return 14 * chunk
    total = tokens * shape.vocab * (4 if backward else 2)
    if entropy:
        total += 2 * ENTROPY_CHUNK_TOKENS * shape.vocab * 4 if chunked else tokens * shape.vocab * 7
    return total


def plan_update(run: RunSpec, shape: ModelShape, world: int, tokens: int) -> PassPlan:
    """The actor update: everything the optimizer needs plus one micro-batch's activations and logits."""
    t = run.train
    return PassPlan(
        "actor update",
        {
            "fp32 weights, grads, Adam": _gib(actor_states_bytes(shape, world, t.lora_rank)),
            "gathered layers/embeddings": _gib(gathered_bytes(shape, backward=True)),
            "activations": _gib(update_activation_bytes(shape, tokens, t.gradient_checkpointing)),
            "logits": _gib(
                logits_bytes(
                    shape,
                    tokens,
                    fused=t.fused_kernels,
                    backward=True,
                    entropy=t.entropy_coeff != 0,
                    chunked=t.entropy_chunking,
                )
            ),
            "reserve": RESERVE_GIB,
        },
        tokens,
        "train.actor_token_budget (or train.sequence_parallel, train.gradient_checkpointing)",
    )


def plan_old_log_prob(run: RunSpec, shape: ModelShape, world: int, tokens: int) -> PassPlan:
    """The actor's forward-only pass for old log-probs and entropy; Adam stays unless the actor is offloaded."""
    t = run.train
    weights = 4 * shape.params / world
    adam = 0.0 if t.actor_offload or t.lora_rank > 0 else 8 * shape.params / world
    return PassPlan(
        "old log-prob",
        {
            "fp32 weights, Adam": _gib(weights + adam),
            "gathered layers/embeddings": _gib(gathered_bytes(shape, backward=False)),
            "activations": _gib(forward_activation_bytes(shape, tokens)),
            "logits and entropy": _gib(
                logits_bytes(
                    shape, tokens, fused=t.fused_kernels, backward=False, entropy=True, chunked=t.entropy_chunking
                )
            ),
            "reserve": RESERVE_GIB,
        },
        tokens,
        "train.log_prob_token_budget (or train.actor_offload)",
    )


def plan_reference(run: RunSpec, shape: ModelShape, world: int, tokens: int) -> PassPlan:
    """The reference log-prob pass: verl keeps reference weights in host memory and streams them layer by layer;
    the actor's weights and Adam stay on the GPU unless the actor is offloaded."""
    t = run.train
    actor = 0.0 if t.actor_offload else (4 if t.lora_rank > 0 else 12) * shape.params / world
    return PassPlan(
        "reference log-prob",
        {
            "actor weights, Adam (resident)": _gib(actor),
            "gathered layers/embeddings": _gib(gathered_bytes(shape, backward=False)),
            "activations": _gib(forward_activation_bytes(shape, tokens)),
            "logits": _gib(
                logits_bytes(shape, tokens, fused=t.fused_kernels, backward=False, entropy=False, chunked=False)
            ),
            "reserve": RESERVE_GIB,
        },
        tokens,
        "train.ref_token_budget (or train.actor_offload)",
    )


def kv_pool_tokens(run: RunSpec, shape: ModelShape, gpu_gib: float) -> int:
    """Tokens vLLM's KV cache holds on one replica: its memory share minus weights and activation peak."""
    t = run.train
    pool = t.gpu_memory_utilization * gpu_gib * GIB - 2 * shape.params / t.rollout_tp - VLLM_ACTIVATION_GIB * GIB
    return max(0, int(pool / shape.kv_bytes_per_token(t.rollout_tp)))


def plan_rollout(run: RunSpec, shape: ModelShape, world: int, gpu_gib: float) -> PassPlan:
    """Generation: vLLM's share of the GPU plus whatever of the actor stays resident (after step 1, Adam too)."""
    t = run.train
    actor = 0.0 if t.actor_offload else (4 if t.lora_rank > 0 else 12) * shape.params / world
    return PassPlan(
        "rollout",
        {
            "vLLM (weights, KV, activations)": t.gpu_memory_utilization * gpu_gib,
            "actor weights, Adam (resident)": _gib(actor),
            "reserve": RESERVE_GIB,
        },
        0,
        "train.gpu_memory_utilization (or train.actor_offload)",
    )


def _budget_floor(run: RunSpec) -> int:
    """The smallest legal budget: one whole sequence per SP group (verl asserts budget x SP >= longest sequence)."""
    longest = run.train.max_prompt_length + run.train.max_response_length
    return math.ceil(longest / run.train.sequence_parallel / BUDGET_STEP) * BUDGET_STEP


def size_budget(run: RunSpec, gpu_gib: float, cap_factor: int, pass_at: Any) -> int:
    """The largest budget (multiple of 1024 tokens, at most ``cap_factor`` x prompt+response) whose pass fits.

    Returns the floor when nothing fits, so that the caller reports the overflow at the smallest legal budget.
    """
    longest = run.train.max_prompt_length + run.train.max_response_length
    floor = _budget_floor(run)
    cap = max(floor, cap_factor * longest // BUDGET_STEP * BUDGET_STEP)
    best = floor
    for budget in range(floor, cap + 1, BUDGET_STEP):
        if pass_at(budget).total_gib <= gpu_gib:
            best = budget
    return best


# ---------------------------------------------------------------------------------------------------- data, time

_ROW_PATTERNS = (
    (re.compile(r"if(\d+)_logicif(\d+)\.parquet$"), lambda m: int(m.group(1)) + int(m.group(2))),
    (re.compile(r"6np_(\d+)/train_mixed\.parquet$"), lambda m: int(m.group(1))),
    (re.compile(r"ifbench_(\d+)_ifeval_(\d+)_logicif_(\d+)\.parquet$"), lambda m: sum(map(int, m.groups()))),
)


def training_rows(files: tuple[str, ...], root: Path) -> int | None:
    """Rows of the training files: the parquet footer when the file is at hand, else the count its name states
    (``if{X}_logicif{Y}.parquet``, ``6np_{V}/train_mixed.parquet``, ``ifbench_{A}_ifeval_{B}_logicif_{C}.parquet``);
    None when neither is known."""
    total = 0
    for name in files:
        path = root / name
        if path.is_file():
            import pyarrow.parquet as pq

            try:
                total += pq.ParquetFile(path).metadata.num_rows
                continue
            except Exception:  # an unreadable file is the data validator's business; fall back to its name
                pass
        for pattern, count in _ROW_PATTERNS:
            match = pattern.search(name)
            if match:
                total += count(match)
                break
        else:
            return None
    return total


@dataclass(frozen=True)
class TimeAssumptions:
    """One end of the step-time range: the assumptions the matrix's ``plan`` section does not carry.

    Every step time is a range because the inputs that drive it are not measured yet; the fast end takes the
    favourable value of each assumption and the slow end the unfavourable one, so that a budget planned on the slow
    end errs on the safe side. docs/run-planning.md gives each value's source.

    Attributes:
        name: ``fast`` or ``slow``.
        length_cv: standard deviation over mean of the response length; long responses stay longer in vLLM's running
            batch and cost more attention, so a wider spread lowers the concurrency and raises the FLOPs.
        full_tail: the longest response is decoded alone for its whole length after the last full batch (else for
            what it has beyond the mean).
        preempted_fraction: share of the sequences that do not fit the KV pool at once which vLLM preempts and
            re-prefills once.
        roofline_sum: a decode step takes memory time plus compute time (else the larger of the two).
        host_gb_per_s: host-to-GPU copy rate of offloaded weights and Adam state, per GPU.
        weight_sync_gb_per_s: rate at which the actor's bf16 weights reach vLLM after each update, per replica.
        checkpoint_gb_per_s: write rate of a checkpoint to the shared file system.
        step_overhead_s: per-step work no formula counts (data transfer between workers, sequence balancing,
            metrics, vLLM sleep and wake).
    """

    name: str
    length_cv: float
    full_tail: bool
    preempted_fraction: float
    roofline_sum: bool
    host_gb_per_s: float
    weight_sync_gb_per_s: float
    checkpoint_gb_per_s: float
    step_overhead_s: float


FAST = TimeAssumptions(
    name="fast",
    length_cv=0.5,
    full_tail=False,
    preempted_fraction=0.0,
    roofline_sum=False,
    host_gb_per_s=25.0,
    weight_sync_gb_per_s=5.0,
    checkpoint_gb_per_s=2.0,
    step_overhead_s=10.0,
)
SLOW = TimeAssumptions(
    name="slow",
    length_cv=1.0,
    full_tail=True,
    preempted_fraction=1.0,
    roofline_sum=True,
    host_gb_per_s=12.0,
    weight_sync_gb_per_s=1.0,
    checkpoint_gb_per_s=0.5,
    step_overhead_s=30.0,
)
"""The two ends of every step-time range (docs/run-planning.md, "Time", gives each value and its source)."""

CHECKPOINT_BYTES_PER_PARAM = 12
"""fp32 weights and AdamW's two fp32 moments, as ``rlif.preflight`` counts one verl checkpoint."""

UNKNOWN_VAL_ROWS = 1000
"""Validation prompts assumed when the validation files are not at hand and their names give no count."""


@dataclass(frozen=True)
class StepTime:
    """One end of a step-time estimate, part by part.

    Attributes:
        assumptions: the end's assumptions.
        parts: seconds per step of each part (generation, training, overheads; validation and checkpoints amortised).
        concurrency: sequences one vLLM replica runs at once (``max_num_seqs``, its share of the batch, or the KV
            pool, whichever is least).
        waves: batches of that concurrency a replica needs for its share of the step's sequences.
    """

    assumptions: TimeAssumptions
    parts: dict[str, float]
    concurrency: int
    waves: int

    @property
    def seconds(self) -> float:
        """The step's wall time."""
        return sum(self.parts.values())


@dataclass(frozen=True)
class Lengths:
    """Mean lengths and decode rate the time estimate runs on, and where they come from.

    Attributes:
        prompt: mean prompt tokens (chat template included).
        response: mean response tokens.
        decode_tokens_per_s: measured output tokens per second per GPU of vLLM generation (None: the decode model).
        source: ``assumed`` (the matrix's ``plan`` section) or ``measured`` (a probe file).
    """

    prompt: float
    response: float
    decode_tokens_per_s: float | None = None
    source: str = "assumed"


def attention_flops_per_token(shape: ModelShape, context: float) -> float:
    """Forward attention FLOPs of one token attending to ``context`` earlier tokens: QK^T and AV over all heads."""
    return 4 * shape.layers * shape.heads * shape.head_dim * context


def _decode_step_seconds(
    shape: ModelShape, tp: int, running: int, context: float, *, bandwidth: float, flops: float, add: bool
) -> float:
    """One decode step of a replica: read its weight shard and its running sequences' KV cache, and compute each
    sequence's next token (linear layers and attention)."""
    memory = (2 * shape.params / tp + running * context * shape.kv_bytes_per_token(tp)) / bandwidth
    compute = running * (2 * shape.params + attention_flops_per_token(shape, context)) / (tp * flops)
    return memory + compute if add else max(memory, compute)


def rollout_parts(
    run: RunSpec, shape: ModelShape, world: int, kv_tokens: int, *, sequences: int, lengths: Lengths,
    a: TimeAssumptions, bandwidth: float, flops: float,
) -> tuple[dict[str, float], int, int]:  # fmt: skip
    """Generation time of ``sequences`` responses, split into decode, the long-response tail and prefill.

    Each replica decodes its share at the concurrency its KV pool allows: a running sequence holds on average its
    prompt plus the length-biased half of its response, mean·(1 + cv²)/2, since long responses stay longest. When
    the pool, not ``max_num_seqs``, is the limit, vLLM fills it, preempts and later re-prefills sequences (waves).
    The tail is added to the decode time: the batch waits for its longest response, decoded nearly alone.

    Returns:
        (seconds per part, concurrency, waves).
    """
    t = run.train
    tp = t.rollout_tp
    replicas = max(1, world // tp)
    share = math.ceil(sequences / replicas)
    cap = t.max_response_length
    mean = min(lengths.response, cap)
    resident = min(cap, mean * (1 + a.length_cv**2) / 2)
    context = lengths.prompt + resident
    pool_limit = int(kv_tokens // max(context, 1))
    running = max(1, min(MAX_NUM_SEQS, share, pool_limit))
    waves = math.ceil(share / running)
    if lengths.decode_tokens_per_s:
        decode = share * mean / (lengths.decode_tokens_per_s * tp)
    else:
        step = _decode_step_seconds(shape, tp, running, context, bandwidth=bandwidth, flops=flops, add=a.roofline_sum)
        decode = share * mean * step / running
    tail_tokens = cap if a.full_tail else max(0.0, cap - mean)
    alone = lengths.prompt + cap / 2
    tail = tail_tokens * _decode_step_seconds(shape, tp, 1, alone, bandwidth=bandwidth, flops=flops, add=a.roofline_sum)
    refill = share - running if pool_limit < min(MAX_NUM_SEQS, share) else 0
    prefill_tokens = share * lengths.prompt + a.preempted_fraction * refill * context
    prefill_flops = prefill_tokens * (2 * shape.params + attention_flops_per_token(shape, context / 2))
    return {"decode": decode, "tail": tail, "prefill": prefill_flops / (tp * flops)}, running, waves


def training_flops(run: RunSpec, shape: ModelShape, sequences: int, lengths: Lengths, cv: float) -> float:
    """FLOPs of the old-log-prob, reference and update passes over one step's sequences.

    Forward passes: update 3 (forward and backward), 1 more for checkpointing's recompute, 1 old log-prob, 1
    reference when the KL loss needs it. Each forward costs 2 FLOPs per parameter per token plus causal attention,
    2·L·heads·head_dim·E[s²] per sequence of length s (a spread of lengths raises E[s²] above its mean squared).
    """
    t = run.train
    forwards = 3 + (1 if t.gradient_checkpointing else 0) + 1 + (1 if t.use_kl_loss and t.lora_rank == 0 else 0)
    mean_seq = lengths.prompt + lengths.response
    tokens = sequences * mean_seq
    seq_squared = mean_seq**2 + (cv * lengths.response) ** 2
    attention = 2 * shape.layers * shape.heads * shape.head_dim * seq_squared * sequences
    return forwards * (2 * shape.params * tokens + attention)


def overhead_parts(
    run: RunSpec, shape: ModelShape, world: int, *, tokens: int, ref_budget: int, a: TimeAssumptions
) -> dict[str, float]:
    """Per-step transfers: the offloaded actor's weights and Adam in and out of each pass, the reference's weights
    streamed from host memory for every micro-batch, and the bf16 weights pushed to vLLM after the update."""
    t = run.train
    per_gpu = shape.params / world
    moved = 0.0
    if t.actor_offload:
        # in and out: fp32 weights for the old-log-prob pass and the weight sync, weights and Adam for the update
        moved += 2 * 4 * per_gpu + 2 * 12 * per_gpu + 2 * 4 * per_gpu
    if t.use_kl_loss and t.lora_rank == 0:
        micro_batches = math.ceil(tokens / world / max(ref_budget, 1))
        moved += micro_batches * 4 * per_gpu  # verl gives forward-only engines a pinned-host fp32 offload policy
    sync = 2 * shape.params / t.rollout_tp / (a.weight_sync_gb_per_s * 1e9)
    return {
        "offload traffic": moved / (a.host_gb_per_s * 1e9),
        "weight sync": sync,
        "fixed": a.step_overhead_s,
    }


def step_time(
    run: RunSpec, shape: ModelShape, world: int, *, kv_tokens: int, ref_budget: int, lengths: Lengths,
    val_rows: int | None, steps: int | None, a: TimeAssumptions,
) -> StepTime:  # fmt: skip
    """One end of the step-time range: generation, training, transfers, and validation and checkpoints spread over
    the steps between them."""
    t, p = run.train, run.plan
    fast = a.name == FAST.name
    mfu = p.mfu if fast else p.mfu_low
    bandwidth = (p.hbm_tb_per_s if fast else p.hbm_tb_per_s_low) * 1e12
    flops = p.gpu_peak_tflops * 1e12 * mfu
    sequences = t.train_batch_size * t.rollout_n
    speed = {"lengths": lengths, "a": a, "bandwidth": bandwidth, "flops": flops}
    gen, running, waves = rollout_parts(run, shape, world, kv_tokens, sequences=sequences, **speed)
    parts = {f"generation {k}": v for k, v in gen.items()}
    parts["training"] = training_flops(run, shape, sequences, lengths, a.length_cv) / (world * flops)
    tokens = int(sequences * (lengths.prompt + lengths.response))
    parts.update(overhead_parts(run, shape, world, tokens=tokens, ref_budget=ref_budget, a=a))
    if t.test_freq > 0:
        val_sequences = (val_rows or UNKNOWN_VAL_ROWS) * run.validation.n
        val = sum(rollout_parts(run, shape, world, kv_tokens, sequences=val_sequences, **speed)[0].values())
        per_step = 1 / t.test_freq + (1 / steps if t.val_before_train and steps else 0)
        parts["validation (amortised)"] = val * per_step
    if t.save_freq > 0:
        per_param = 4 if t.lora_rank > 0 else CHECKPOINT_BYTES_PER_PARAM
        save = shape.params * per_param / (a.checkpoint_gb_per_s * 1e9)
        parts["checkpoint (amortised)"] = save / t.save_freq
    return StepTime(a, parts, running, waves)


# ---------------------------------------------------------------------------------------------------- the plan


def token_budgets(run: RunSpec, shape: ModelShape | None = None) -> tuple[int, int, int]:
    """Tokens per GPU per micro-batch of the update, old-log-prob and reference passes.

    With dynamic batching these are verl's token budgets: the matrix's values, or (where it says 0) the largest
    that fits ``slurm.gpu_memory_gb``. Without, a micro-batch is ``micro_batch_per_gpu`` full-length sequences.

    Raises:
        ValueError: a budget is left to the planner and the model's architecture cannot be found.
    """
    t, s = run.train, run.slurm
    longest = t.max_prompt_length + t.max_response_length
    if not t.dynamic_batch:
        actor = math.ceil(t.micro_batch_per_gpu * longest / t.sequence_parallel)
        log_prob = math.ceil(t.log_prob_micro_batch_per_gpu * longest / t.sequence_parallel)
        return actor, log_prob, log_prob
    if not (t.actor_token_budget and t.log_prob_token_budget and t.ref_token_budget) and shape is None:
        shape = model_shape(run.model)
    world, gpu = s.nodes * s.gpus_per_node, s.gpu_memory_gb
    actor = t.actor_token_budget or size_budget(
        run, gpu, UPDATE_BUDGET_CAP, lambda b: plan_update(run, shape, world, b)
    )
    log_prob = t.log_prob_token_budget or size_budget(
        run, gpu, LOG_PROB_BUDGET_CAP, lambda b: plan_old_log_prob(run, shape, world, b)
    )
    ref = t.ref_token_budget or size_budget(
        run, gpu, LOG_PROB_BUDGET_CAP, lambda b: plan_reference(run, shape, world, b)
    )
    return actor, log_prob, ref


def parallel_problems(run: RunSpec, shape: ModelShape) -> list[tuple[str, str]]:
    """What verl's Ulysses patch and vLLM assert at model load: heads and KV heads against SP and TP."""
    t, problems = run.train, []
    sp, tp = t.sequence_parallel, t.rollout_tp
    if shape.heads % sp:
        problems.append(("train.sequence_parallel", f"{sp} does not divide the {shape.heads} attention heads"))
    elif shape.kv_heads % sp and sp % shape.kv_heads:
        problems.append(("train.sequence_parallel", f"{sp} and the {shape.kv_heads} KV heads must divide one another"))
    if shape.heads % tp:
        problems.append(("train.rollout_tp", f"{tp} does not divide the {shape.heads} attention heads"))
    return problems


def plan_run(run: RunSpec, root: Path, hub_cache: Path | None = None, probe: Probe | None = None) -> RunPlan:
    """Plan one run (site settings applied).

    Args:
        run: the run.
        root: the repository root (training files are relative to it).
        hub_cache: where to look for the model's ``config.json`` (default: the usual cache variables).
        probe: measured lengths and decode rate (``rlif.runs.probe``) that replace the matrix's assumed ones.

    Raises:
        ValueError: the model's architecture cannot be found, or the probe does not match the run.
    """
    t, s, p = run.train, run.slurm, run.plan
    shape = model_shape(run.model, hub_cache)
    world = s.nodes * s.gpus_per_node
    gpu = s.gpu_memory_gb
    longest = t.max_prompt_length + t.max_response_length
    problems = parallel_problems(run, shape)

    actor, log_prob, ref = token_budgets(run, shape)
    if t.dynamic_batch:
        floor = _budget_floor(run)
        for key, value in (
            ("train.actor_token_budget", actor),
            ("train.log_prob_token_budget", log_prob),
            ("train.ref_token_budget", ref),
        ):
            if value * t.sequence_parallel < longest:
                problems.append(
                    (key, f"{value} x sequence_parallel {t.sequence_parallel} < prompt + response {longest}: "
                          f"verl asserts on the first full-length sequence (at least {floor})")
                )  # fmt: skip
    passes = (
        plan_rollout(run, shape, world, gpu),
        plan_old_log_prob(run, shape, world, log_prob),
        plan_reference(run, shape, world, ref),
        plan_update(run, shape, world, actor),
    )
    for pass_ in passes:
        if pass_.total_gib > gpu:
            problems.append(
                (
                    pass_.fix.split(" ")[0],
                    f"{pass_.name} needs {pass_.total_gib:.1f} GiB per GPU, more than {gpu:g} GiB; lower {pass_.fix}",
                )
            )
    kv_tokens = kv_pool_tokens(run, shape, gpu)
    if kv_tokens < longest:
        problems.append(
            ("train.gpu_memory_utilization", f"vLLM's KV cache holds {kv_tokens} tokens, less than one "
                                             f"{longest}-token sequence; raise it or train.rollout_tp")
        )  # fmt: skip
    rows = training_rows(run.train_files, root)
    steps, epochs = _steps(run, rows)
    if rows is not None and t.total_training_steps and steps is not None and t.total_training_steps > steps:
        problems.append(
            ("train.total_training_steps", f"{t.total_training_steps} steps, but {rows} rows give "
                                           f"{rows // t.train_batch_size} per epoch x {t.total_epochs} epochs = "
                                           f"{steps}: verl would stop on the epoch limit without a final checkpoint "
                                           "and validation; set 0 (as the data gives) or raise train.total_epochs")
        )  # fmt: skip
    assumed = Lengths(p.mean_prompt_tokens, p.mean_response_tokens)
    lengths = assumed if probe is None else probe.lengths_for(run)
    val_rows = training_rows(run.val_files, root)
    known = {"kv_tokens": kv_tokens, "ref_budget": ref, "lengths": lengths, "val_rows": val_rows, "steps": steps}
    fast, slow = (step_time(run, shape, world, a=a, **known) for a in (FAST, SLOW))
    return RunPlan(
        run=run.name,
        shape=shape,
        world=world,
        actor_budget=actor,
        log_prob_budget=log_prob,
        ref_budget=ref,
        passes=passes,
        kv_pool_tokens=kv_tokens,
        rows=rows,
        steps=steps,
        epochs=epochs,
        max_tokens_per_step=t.train_batch_size * t.rollout_n * longest,
        expected_tokens_per_step=round(t.train_batch_size * t.rollout_n * (lengths.prompt + lengths.response)),
        lengths=lengths,
        assumed=assumed,
        fast=fast,
        slow=slow,
        problems=tuple(problems),
    )  # fmt: skip


def _steps(run: RunSpec, rows: int | None) -> tuple[int | None, float | None]:
    """Steps the run trains and the epochs they make: the step limit, or what the data gives when it is 0."""
    t = run.train
    if rows is None:
        return (t.total_training_steps or None), None
    per_epoch = rows // t.train_batch_size
    if per_epoch == 0:
        return 0, 0.0
    data_steps = per_epoch * t.total_epochs
    steps = min(t.total_training_steps, data_steps) if t.total_training_steps else data_steps
    return steps, steps / per_epoch


def slurm_hours(time_limit: str) -> float:
    """A Slurm ``--time`` value (``D-HH:MM:SS``, ``HH:MM:SS``, ``MM:SS``, ``MM``) in hours."""
    days, _, clock = time_limit.rpartition("-")
    parts = [int(x) for x in clock.split(":")]
    if len(parts) == 1:
        h, m, s = 0, parts[0], 0
    elif len(parts) == 2:
        h, m, s = (parts[0], parts[1], 0) if days else (0, parts[0], parts[1])
    else:
        h, m, s = parts
    return (int(days or 0) * 24) + h + m / 60 + s / 3600


def requeues(plan: RunPlan, time_limit: str) -> int | None:
    """How many times the job must be requeued to finish (0 when one allocation suffices; None if unknown)."""
    hours = plan.wall_hours()
    if hours is None:
        return None
    return max(0, math.ceil(hours / slurm_hours(time_limit)) - 1)
