"""Peak GPU memory of each pass of a verl 0.9.1 GRPO step, and the token budgets that fit it.

Four phases share each GPU (docs/run-planning.md gives every formula and its source): vLLM rollout, the actor's
old-log-prob pass, the reference log-prob pass and the actor update. Each peak is estimated from the model's
architecture and the run's lengths, batch, parallelism, offload and dynamic-batch budgets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rlif.runs.shapes import GIB, ModelShape, model_shape
from rlif.runs.spec import RunSpec

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


def budget_floor(run: RunSpec) -> int:
    """The smallest legal budget: one whole sequence per SP group (verl asserts budget x SP >= longest sequence)."""
    longest = run.train.max_prompt_length + run.train.max_response_length
    return math.ceil(longest / run.train.sequence_parallel / BUDGET_STEP) * BUDGET_STEP


def size_budget(run: RunSpec, gpu_gib: float, cap_factor: int, pass_at: Any) -> int:
    """The largest budget (multiple of 1024 tokens, at most ``cap_factor`` x prompt+response) whose pass fits.

    Returns the floor when nothing fits, so that the caller reports the overflow at the smallest legal budget.
    """
    longest = run.train.max_prompt_length + run.train.max_response_length
    floor = budget_floor(run)
    cap = max(floor, cap_factor * longest // BUDGET_STEP * BUDGET_STEP)
    best = floor
    for budget in range(floor, cap + 1, BUDGET_STEP):
        if pass_at(budget).total_gib <= gpu_gib:
            best = budget
    return best


# ---------------------------------------------------------------------------------------------------- data, time


def token_budgets(run: RunSpec, shape: ModelShape | None = None) -> tuple[int, int, int]:
    """Tokens per GPU per micro-batch of the update, old-log-prob and reference passes.

    With dynamic batching these are verl's token budgets: the matrix's values, or (where it says 0) the largest
    that fits ``slurm.gpu_memory_gb``. Without, a micro-batch is ``micro_batch_per_gpu`` full-length sequences.

    Raises:
        ValueError: a budget or a memory setting is left to the planner and the model's architecture cannot be
            found, or a CPU-mode run leaves a memory setting to it (``rlif.runs.choices.resolve``).
    """
    from rlif.runs.choices import resolved_run  # the choices are made on this module's pass plans

    run = resolved_run(run, shape)
    t, s = run.train, run.slurm
    longest = t.max_prompt_length + t.max_response_length
    if not t.dynamic_batch:
        actor = math.ceil(t.micro_batch_per_gpu * longest / t.sequence_parallel)
        log_prob = math.ceil(t.log_prob_micro_batch_per_gpu * longest / t.sequence_parallel)
        return actor, log_prob, log_prob
    if not (t.actor_token_budget and t.log_prob_token_budget and t.ref_token_budget) and shape is None:
        shape = model_shape(run.model)
    world, gpu = max(1, s.nodes * s.gpus_per_node - run.judge.gpus), s.gpu_memory_gb  # a judge server's GPUs excluded
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
