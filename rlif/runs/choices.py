"""The memory settings a run may leave to the planner: vLLM's share of each GPU, actor offload and Ulysses sequence
parallel.

A matrix value ``auto`` (``rlif.runs.spec.AUTO``) asks the planner to choose; a number or a boolean is kept and the
plan checks it like any other setting. Each choice comes with its reason, shown in the generator's plan output
(docs/run-planning.md, "Settings the planner chooses"):

- **sequence parallel**: 1 unless one full-length sequence's update does not fit a GPU at SP 1; then the smallest
  size that fits among those the heads, KV heads, the GPUs of a node and the mini-batch split allow. Ulysses SP
  adds two all-to-alls per attention layer and narrows data parallelism, so it is used only where memory needs it.
- **actor offload**: off unless a pass does not fit with the actor's fp32 weights and Adam state resident: the
  old-log-prob or reference pass at its smallest micro-batch, or generation with a KV cache that holds one
  full-length sequence. Offload moves 40 bytes per parameter per step over PCIe and pins host memory.
- **vLLM's share** (``gpu_memory_utilization``): the highest multiple of 0.05, at most vLLM's default 0.9, that
  leaves the actor what it keeps on the GPU while vLLM runs, the planner's reserve and a margin. The training
  passes do not bound it: verl puts vLLM to sleep (``rollout.free_cache_engine``, weights and KV cache released)
  before each of them.

Everything here is arithmetic on ``rlif.runs.memory``'s pass plans: no torch, no verl.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from rlif.runs.memory import (
    BUDGET_STEP,
    RESERVE_GIB,
    kv_pool_tokens,
    plan_old_log_prob,
    plan_reference,
    plan_rollout,
    plan_update,
)
from rlif.runs.shapes import ModelShape, model_shape
from rlif.runs.spec import AUTO, RunSpec

UTILIZATION_STEP = 0.05
"""vLLM's share is chosen in steps of this fraction, so that a value in a script reads as a round number."""

MAX_UTILIZATION = 0.9
"""The most the planner gives vLLM: vLLM's own default ``gpu_memory_utilization``, at which its memory profile
(weights, activation peak, KV cache) was checked against silybench's Qwen3-8B figure (docs/run-planning.md)."""

ROLLOUT_MARGIN = 0.05
"""Share of the GPU the planner leaves free during generation beyond the reserve: the resident actor's estimate
leaves out allocator caching between passes (*assumed*; 4 GiB of an 80 GiB GPU)."""

CHOSEN_KEYS = ("train.sequence_parallel", "train.actor_offload", "train.gpu_memory_utilization")
"""The run settings that take ``auto``, in the order the planner resolves them (each choice uses the ones before)."""


@dataclass(frozen=True)
class Choice:
    """One memory setting of a run as verl gets it, and why.

    Attributes:
        key: the run setting (``train.gpu_memory_utilization``, ...).
        value: its value.
        auto: True when the planner chose it (the matrix said ``auto``), False when the matrix fixed it.
        reason: why this value (for a fixed value: that the matrix sets it).
    """

    key: str
    value: float | int | bool
    auto: bool
    reason: str

    def text(self) -> str:
        """``key value (planner: reason)`` or ``key value (matrix)``, one line of the plan output."""
        value = ("true" if self.value else "false") if isinstance(self.value, bool) else f"{self.value:g}"
        return f"{self.key} {value} ({'planner: ' + self.reason if self.auto else self.reason})"


@dataclass(frozen=True)
class Resolved:
    """A run with every ``auto`` memory setting replaced by the planner's value.

    Attributes:
        run: the run as verl gets it (no ``auto`` left).
        choices: the three settings with their reasons, in ``CHOSEN_KEYS`` order.
    """

    run: RunSpec
    choices: tuple[Choice, ...]


def has_auto(run: RunSpec) -> bool:
    """Whether any memory setting of ``run`` is left to the planner."""
    t = run.train
    return AUTO in (t.sequence_parallel, t.actor_offload, t.gpu_memory_utilization)


def resolve(run: RunSpec, shape: ModelShape | None = None) -> Resolved:
    """``run`` with the planner's values for its ``auto`` memory settings, and the reason for each setting.

    Args:
        run: the run (site settings applied: the GPU memory and node count the choices fit).
        shape: its model's architecture (default: ``model_shape(run.model)``).

    Raises:
        ValueError: a CPU-mode run leaves a setting to the planner (the planner does not plan CPU-mode runs), or the
            model's architecture cannot be found.
    """
    t = run.train
    if not has_auto(run):
        fixed = "set in the matrix"
        return Resolved(
            run,
            (
                Choice(CHOSEN_KEYS[0], t.sequence_parallel, False, fixed),
                Choice(CHOSEN_KEYS[1], t.actor_offload, False, fixed),
                Choice(CHOSEN_KEYS[2], t.gpu_memory_utilization, False, fixed),
            ),
        )
    if run.cpu_mode:
        keys = [k for k, v in zip(CHOSEN_KEYS, _values(run), strict=True) if v == AUTO]
        raise ValueError(
            f"{', '.join(keys)}: auto needs the run planner, which does not plan CPU-mode runs; set a value"
        )
    shape = shape or model_shape(run.model)
    world = max(1, run.slurm.nodes * run.slurm.gpus_per_node - run.judge.gpus)
    gpu = run.slurm.gpu_memory_gb

    if t.sequence_parallel == AUTO:
        sp, sp_reason = choose_sequence_parallel(run, shape, world, gpu)
        sp_choice = Choice(CHOSEN_KEYS[0], sp, True, sp_reason)
    else:
        sp_choice = Choice(CHOSEN_KEYS[0], t.sequence_parallel, False, "set in the matrix")
    run = _with(run, sequence_parallel=sp_choice.value)

    if t.actor_offload == AUTO:
        offload, offload_reason = choose_actor_offload(run, shape, world, gpu)
        offload_choice = Choice(CHOSEN_KEYS[1], offload, True, offload_reason)
    else:
        offload_choice = Choice(CHOSEN_KEYS[1], t.actor_offload, False, "set in the matrix")
    run = _with(run, actor_offload=offload_choice.value)

    if t.gpu_memory_utilization == AUTO:
        util = highest_utilization(run, shape, world, gpu)
        reason = _utilization_reason(_with(run, gpu_memory_utilization=util), shape, world, gpu, util)
        util_choice = Choice(CHOSEN_KEYS[2], util, True, reason)
    else:
        util_choice = Choice(CHOSEN_KEYS[2], t.gpu_memory_utilization, False, "set in the matrix")
    run = _with(run, gpu_memory_utilization=util_choice.value)
    return Resolved(run, (sp_choice, offload_choice, util_choice))


def resolved_run(run: RunSpec, shape: ModelShape | None = None) -> RunSpec:
    """``run`` as verl gets it: ``resolve(run).run``, and ``run`` itself when nothing is left to the planner.

    Raises:
        ValueError: as ``resolve``.
    """
    return resolve(run, shape).run if has_auto(run) else run


def _values(run: RunSpec) -> tuple[object, object, object]:
    t = run.train
    return t.sequence_parallel, t.actor_offload, t.gpu_memory_utilization


def _with(run: RunSpec, **train: object) -> RunSpec:
    return dataclasses.replace(run, train=dataclasses.replace(run.train, **train))


def smallest_micro_batch(run: RunSpec, *, update: bool) -> int:
    """Tokens per GPU of the smallest micro-batch a pass can run at ``run``'s sequence-parallel size: one
    full-length sequence per SP group with dynamic batching (verl's floor, ``memory.budget_floor``), else the
    configured sequences per micro-batch."""
    t = run.train
    longest = t.max_prompt_length + t.max_response_length
    if t.dynamic_batch:
        return math.ceil(longest / t.sequence_parallel / BUDGET_STEP) * BUDGET_STEP
    sequences = t.micro_batch_per_gpu if update else t.log_prob_micro_batch_per_gpu
    return math.ceil(sequences * longest / t.sequence_parallel)


def sequence_parallel_sizes(run: RunSpec, shape: ModelShape, world: int) -> list[int]:
    """The Ulysses sizes verl and the batch split accept, smallest first: divisors of a node's training GPUs that
    divide the world, the attention heads, and divide (or are divided by) the KV heads, leaving data-parallel ranks
    that split the mini-batch's responses (and, without dynamic batching, each rank's share into micro-batches)."""
    t = run.train
    per_node = run.slurm.gpus_per_node - run.judge.gpus
    responses = t.ppo_mini_batch_size * t.rollout_n
    sizes = []
    for sp in range(1, per_node + 1):
        if per_node % sp or world % sp or shape.heads % sp or (shape.kv_heads % sp and sp % shape.kv_heads):
            continue
        dp = world // sp
        if responses % dp or (not t.dynamic_batch and (responses // dp) % t.micro_batch_per_gpu):
            continue
        sizes.append(sp)
    return sizes


def choose_sequence_parallel(run: RunSpec, shape: ModelShape, world: int, gpu: float) -> tuple[int, str]:
    """SP 1 when one full-length sequence's update fits ``gpu`` GiB; else the smallest allowed size at which it
    fits; else (nothing fits) the largest allowed size, whose overflow the plan then reports."""
    longest = run.train.max_prompt_length + run.train.max_response_length
    sizes = sequence_parallel_sizes(run, shape, world) or [1]

    def update_gib(sp: int) -> float:
        at = _with(run, sequence_parallel=sp)
        return plan_update(at, shape, world, smallest_micro_batch(at, update=True)).total_gib

    first = update_gib(1)
    if first <= gpu:
        return 1, f"one {longest:,}-token sequence's update needs {first:.1f} GiB at SP 1, within {gpu:g} GiB"
    allowed = f"allowed by {shape.heads} heads, {shape.kv_heads} KV heads and {world} GPUs: {sizes}"
    for sp in sizes:
        need = update_gib(sp)
        if need <= gpu:
            return sp, (
                f"one {longest:,}-token sequence's update needs {first:.1f} GiB at SP 1, more than {gpu:g} GiB; "
                f"{need:.1f} GiB at SP {sp}, the smallest size that fits ({allowed})"
            )
    return sizes[-1], f"no size fits one {longest:,}-token sequence's update in {gpu:g} GiB ({allowed}); the largest"


def choose_actor_offload(run: RunSpec, shape: ModelShape, world: int, gpu: float) -> tuple[bool, str]:
    """Offload only when a pass does not fit with the actor resident: the old-log-prob or reference pass at its
    smallest micro-batch, or generation at the run's vLLM share (or, when that is ``auto``, at the highest share
    left, with a KV cache for one full-length sequence)."""
    resident = _with(run, actor_offload=False)
    tokens = smallest_micro_batch(resident, update=False)
    kept = plan_rollout(_with(resident, gpu_memory_utilization=0.0), shape, world, gpu).components_gib[
        "actor weights, Adam (resident)"
    ]
    for pass_ in (plan_old_log_prob(resident, shape, world, tokens), plan_reference(resident, shape, world, tokens)):
        if pass_.total_gib > gpu:
            return True, (
                f"with the actor resident ({kept:.1f} GiB per GPU) the {pass_.name} pass needs "
                f"{pass_.total_gib:.1f} GiB at its smallest micro-batch ({tokens:,} tokens), more than {gpu:g} GiB"
            )
    longest = run.train.max_prompt_length + run.train.max_response_length
    util = run.train.gpu_memory_utilization
    if util != AUTO:
        rollout = plan_rollout(resident, shape, world, gpu)
        if rollout.total_gib > gpu:
            return True, (
                f"with the actor resident ({kept:.1f} GiB per GPU) generation at gpu_memory_utilization {util:g} "
                f"needs {rollout.total_gib:.1f} GiB, more than {gpu:g} GiB"
            )
        return False, (
            f"not needed: with the actor resident ({kept:.1f} GiB per GPU) every pass fits {gpu:g} GiB at "
            f"gpu_memory_utilization {util:g}"
        )
    best = highest_utilization(resident, shape, world, gpu)
    tokens_kv = kv_pool_tokens(_with(resident, gpu_memory_utilization=best), shape, gpu) if best > 0 else 0
    if tokens_kv < longest:
        return True, (
            f"with the actor resident ({kept:.1f} GiB per GPU) vLLM could get at most {max(best, 0):g} of the GPU, "
            f"a KV cache of {tokens_kv:,} tokens, less than one {longest:,}-token sequence"
        )
    return False, (
        f"not needed: with the actor resident ({kept:.1f} GiB per GPU) the old-log-prob and reference passes fit "
        f"{gpu:g} GiB at their smallest micro-batches and vLLM still gets {best:g}"
    )


def highest_utilization(run: RunSpec, shape: ModelShape, world: int, gpu: float) -> float:
    """The highest multiple of ``UTILIZATION_STEP``, at most ``MAX_UTILIZATION``, at which generation (vLLM's
    share, the actor's resident part, the reserve) leaves ``ROLLOUT_MARGIN`` of the GPU free; one step when even
    that does not fit (the plan then reports the KV cache as too small)."""
    rest = plan_rollout(_with(run, gpu_memory_utilization=0.0), shape, world, gpu).total_gib
    room = gpu * (1 - ROLLOUT_MARGIN) - rest
    steps = math.floor(room / (gpu * UTILIZATION_STEP) + 1e-9)
    return round(min(MAX_UTILIZATION, max(1, steps) * UTILIZATION_STEP), 2)


def _utilization_reason(run: RunSpec, shape: ModelShape, world: int, gpu: float, util: float) -> str:
    rollout = plan_rollout(run, shape, world, gpu)
    kept = rollout.components_gib["actor weights, Adam (resident)"]
    kv = kv_pool_tokens(run, shape, gpu)
    limit = "vLLM's default, the most the planner gives" if util >= MAX_UTILIZATION else "the highest multiple of 0.05"
    return (
        f"{limit} at which vLLM's share, the actor's resident {kept:.1f} GiB, the {RESERVE_GIB:g} GiB reserve and a "
        f"{ROLLOUT_MARGIN * gpu:.1f} GiB margin fit {gpu:g} GiB ({rollout.total_gib:.1f} GiB in generation); KV cache "
        f"{kv:,} tokens"
    )
