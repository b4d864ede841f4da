"""Run planner: GPU memory of every pass, tokens per step, step time and GPU-hours of a run, with no GPU.

The plan of a run puts together its model's shape (``rlif.runs.shapes``), the peak memory of each pass and the
token budgets (``rlif.runs.memory``), the step time as a range (``rlif.runs.timing``) and the training data's row
count, measured lengths replacing assumed ones where a probe file exists (``rlif.runs.probe``). Everything here
is arithmetic: no torch, no verl.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rlif.runs.choices import Choice, resolve
from rlif.runs.spec import RunSpec

if TYPE_CHECKING:
    from rlif.runs.probe import Probe

from rlif.runs.memory import (
    PassPlan,
    budget_floor,
    kv_pool_tokens,
    parallel_problems,
    plan_old_log_prob,
    plan_reference,
    plan_rollout,
    plan_update,
    token_budgets,
)
from rlif.runs.shapes import ModelShape, model_shape
from rlif.runs.timing import FAST, SLOW, Lengths, StepTime, step_time


@dataclass(frozen=True)
class RunPlan:
    """The planner's view of one run.

    Attributes:
        run: the run's name.
        shape: the model architecture used.
        world: GPUs training uses (the judge server's excluded).
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
        save_freq: steps between checkpoints: the matrix's, or where it says 0 the planner's
            (``auto_save_freq``); -1 never saves.
        problems: (key, message) pairs: what does not fit or cannot run, with the knob that fixes it.
        judge_gpus: GPUs the job holds for its judge server (``judge.gpus``): not in ``world``, in the GPU-hours.
        choices: vLLM's share, actor offload and sequence parallel as planned, each with the planner's reason or
            the note that the matrix fixes it (``rlif.runs.choices``).
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
    save_freq: int = -1
    problems: tuple[tuple[str, str], ...] = field(default=())
    judge_gpus: int = 0
    choices: tuple[Choice, ...] = field(default=())

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

    @property
    def gpus(self) -> int:
        """GPUs the job holds: training's and the judge server's."""
        return self.world + self.judge_gpus

    def gpu_hours(self) -> float | None:
        """GPU-hours of the whole run at the slow end (None when the step count is unknown)."""
        return None if self.steps is None else self.step_seconds * self.steps * self.gpus / 3600

    def gpu_hours_range(self) -> tuple[float, float] | None:
        """GPU-hours of the whole run, fast end and slow end (None when the step count is unknown)."""
        if self.steps is None:
            return None
        return tuple(seconds * self.steps * self.gpus / 3600 for seconds in self.step_seconds_range)  # type: ignore[return-value]

    def wall_hours(self) -> float | None:
        """Wall-clock hours of the whole run at the slow end."""
        return None if self.steps is None else self.step_seconds * self.steps / 3600


# ---------------------------------------------------------------------------------------------------- memory


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


def plan_run(run: RunSpec, root: Path, hub_cache: Path | None = None, probe: Probe | None = None) -> RunPlan:
    """Plan one run (site settings applied).

    Args:
        run: the run.
        root: the repository root (training files are relative to it).
        hub_cache: where to look for the model's ``config.json`` (default: the usual cache variables).
        probe: measured lengths and decode rate (``rlif.runs.probe``) that replace the matrix's assumed ones.

    Raises:
        ValueError: the model's architecture cannot be found, the probe does not match the run, or a CPU-mode run
            leaves a memory setting to the planner.
    """
    shape = model_shape(run.model, hub_cache)
    resolution = resolve(run, shape)
    run = resolution.run
    t, s, p = run.train, run.slurm, run.plan
    world = s.nodes * s.gpus_per_node - run.judge.gpus
    if world < 1:
        raise ValueError(f"judge.gpus {run.judge.gpus} of {s.nodes} x {s.gpus_per_node} GPUs leave no GPU to train on")
    gpu = s.gpu_memory_gb
    longest = t.max_prompt_length + t.max_response_length
    problems = parallel_problems(run, shape)

    actor, log_prob, ref = token_budgets(run, shape)
    if t.dynamic_batch:
        floor = budget_floor(run)
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
    save_freq = t.save_freq
    if save_freq == 0:
        # the checkpoint's own time is left out of the step it sizes (it is a few per cent of a step)
        bare = step_time(run, shape, world, a=SLOW, **known)
        save_freq = auto_save_freq(bare.seconds, t.max_lost_hours)
        run = dataclasses.replace(run, train=dataclasses.replace(t, save_freq=save_freq))
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
        save_freq=save_freq,
        problems=tuple(problems),
        judge_gpus=run.judge.gpus,
        choices=resolution.choices,
    )  # fmt: skip


def auto_save_freq(step_seconds: float, max_lost_hours: float) -> int:
    """Steps between checkpoints such that a requeue redoes at most ``max_lost_hours`` of wall time at the slow end
    of the step time: max(1, floor(max_lost_hours / step hours)). verl 0.9.1's V1 trainer saves nothing before a
    time limit, so this interval is all that bounds the loss."""
    return max(1, math.floor(max_lost_hours * 3600 / step_seconds))


def run_save_freq(run: RunSpec, root: Path | None = None) -> int:
    """``train.save_freq`` as verl gets it: the matrix's number, or the planner's where it says 0.

    Raises:
        ValueError: the run leaves it to the planner and the model's architecture cannot be found.
    """
    if run.train.save_freq != 0:
        return run.train.save_freq
    return plan_run(run, root or Path(__file__).resolve().parents[2]).save_freq


def checkpoints_on_disk(run: RunSpec, steps: int | None, save_freq: int) -> int:
    """Checkpoints one job attempt may hold at once: verl writes the next before it deletes the oldest beyond
    ``max_ckpt_to_keep``, so keep + 1; with keep 0 (keep all) every save of the run, the last step's included (one
    when the step count is unknown); none when the run never saves."""
    keep = run.train.max_ckpt_to_keep
    if save_freq < 0:
        return 0
    if keep > 0:
        return keep + 1
    if steps is None:
        return 1
    return steps // save_freq + (1 if steps % save_freq else 0)


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
