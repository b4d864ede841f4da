"""Step time of a run as a range: memory-bound decoding with its long tail and KV-pool waves, training FLOPs with
attention, and the fixed per-step work (docs/run-planning.md, "Time", gives each assumption and its source)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rlif.runs.memory import MAX_NUM_SEQS
from rlif.runs.shapes import ModelShape
from rlif.runs.spec import RunSpec


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
        # verl gives forward-only engines a pinned-host offload policy; rlif loads the reference in bf16
        moved += micro_batches * 2 * per_gpu
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
