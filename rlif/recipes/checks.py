"""Checks for the mistakes verl 0.9.1 composes and validates without complaint.

verl's Hydra compose catches misspelled existing keys and its ``validate_config`` some batch arithmetic, but a
``+``-added unknown key, a legacy top-level reward key, or a non-zero dataloader worker count with rlif's dataset all
pass and then silently do nothing (or the wrong thing) hours into a run (docs/recipes.md). These checks need no verl
import. The ones that name verl's keys are ``rlif.verl_glue.overrides.override_problems``; ``rlif.verl_glue.config``
adds the checks that need verl's composed config (types, enums, verl's validation).
"""

from __future__ import annotations

import re
from pathlib import Path

from rlif.runs.problems import Problem
from rlif.runs.spec import RunSpec
from rlif.verl_glue.buffer_options import OVERLONG_MODES
from rlif.verl_glue.overrides import TRAINERS, Override, override_problems, world_size

_SLURM_TIME = re.compile(r"^(\d+-)?\d{1,2}(:\d{2}){0,2}$")


class GenerationError(ValueError):
    """Raised when any run fails a check; carries every problem so one pass reports them all."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("invalid recipe(s):\n" + "\n".join(f"  - {p}" for p in problems))


def check_overrides(run: RunSpec, overrides: list[Override]) -> list[Problem]:
    """Key-level checks of the run's overrides (``rlif.verl_glue.overrides.override_problems``)."""
    return [Problem(run.name, key, message) for key, message in override_problems(overrides, run.cpu_mode)]


def check_reward(run: RunSpec) -> list[Problem]:
    """Reward options are ones rlif's reward families declare, with values they accept.

    The families own the values (``rewards.router.check_reward_kwargs`` calls each family's ``check_params``), so
    a new variant needs no change here.
    """
    from rewards.router import check_reward_kwargs

    try:
        check_reward_kwargs(run.reward.kwargs)
    except ValueError as err:
        return [Problem(run.name, "reward.kwargs", str(err))]
    return []


FIXED_POLICIES = frozenset({"uniform", "fixed_ratio"})
"""Sampling policies that never read rewards; every other policy learns from each step's rewards."""


def check_judge(run: RunSpec, overrides: list[Override]) -> list[Problem]:
    """A run that scores with the ``judge`` family (``reward.kwargs.judge_url``) names its model, and runs the V1
    trainer: only rlif's V1 replay buffer takes unjudged samples out of the loss and their groups' statistics
    (``rlif.verl_glue.v1_feedback.drop_no_verdict``), so the legacy trainer would train on their placeholder 0.
    And no run combines verl's colocated reward model with a policy that reads rewards: verl 0.9.1 computes a
    colocated model's rewards after the replay buffer samples, so the policy would see none."""
    from rlif.runs.spec import judge_problems

    # again here: site settings (--nodes, --gpus-per-node) may change the resources after the matrix was loaded
    problems = [Problem(run.name, "judge", message) for message in judge_problems(run.judge, run.slurm)]
    kwargs = run.reward.kwargs
    if bool(kwargs.get("judge_url")) != bool(kwargs.get("judge_model")):
        problems.append(Problem(run.name, "reward.kwargs", "judge_url and judge_model are set together or not at all"))
    if kwargs.get("judge_url") and run.train.trainer == "legacy":
        problems.append(
            Problem(
                run.name,
                "train.trainer",
                "the judge reward family needs a V1 trainer (v1_sync or v1_colocate_async): only rlif's V1 replay "
                "buffer masks samples the judge gave no verdict for; the legacy trainer would train on them as 0",
            )
        )
    colocated = any(
        o.key in ("reward.reward_model.enable", "reward_model.enable") and o.value.lower() == "true" for o in overrides
    )
    if colocated and run.sampler.name not in FIXED_POLICIES:
        problems.append(
            Problem(
                run.name,
                "sampler",
                f"policy {run.sampler.name!r} reads rewards, but a colocated reward model (reward.reward_model.enable"
                "=true) scores after verl's replay buffer samples, so it would see none; serve the judge on its own "
                "GPUs or an external URL (reward.kwargs.judge_url) or use a policy in "
                f"{sorted(FIXED_POLICIES)}",
            )
        )
    return problems


ROLLOUT_CORRECTION = "algorithm.rollout_correction."
"""verl 0.9.1's rollout correction (``trainer/config/algorithm/rollout_correction.yaml``): importance weights
(``rollout_is``: token or sequence), rejection sampling (``rollout_rs``) or bypass mode (``bypass_mode: true``, the
rollout's log-probs as the PPO anchor). All are off by default."""


def rollout_correction_set(overrides: list[Override]) -> bool:
    """Whether the overrides switch on one of verl's rollout corrections: ``rollout_is`` or ``rollout_rs`` not null,
    or ``bypass_mode`` true (the last override of a key wins, as in Hydra)."""
    values = {
        o.key[len(ROLLOUT_CORRECTION) :]: o.value.strip().lower()
        for o in overrides
        if o.key.startswith(ROLLOUT_CORRECTION)
    }
    off = {"", "null", "none", "~"}
    return (
        values.get("rollout_is", "null") not in off
        or values.get("rollout_rs", "null") not in off
        or values.get("bypass_mode", "false") == "true"
    )


def check_async(run: RunSpec, overrides: list[Override]) -> list[Problem]:
    """``v1_colocate_async`` resumes partial rollouts under newer weights, so a trajectory mixes policy versions and
    the update is off-policy by up to ``max_off_policy_threshold`` steps; verl corrects that only when one of its
    rollout corrections is on, and none is by default."""
    if run.train.trainer != "v1_colocate_async" or rollout_correction_set(overrides):
        return []
    return [
        Problem(
            run.name,
            "train.trainer",
            "v1_colocate_async trains on partial rollouts resumed under newer weights: set verl's rollout correction "
            "in extra_overrides (algorithm.rollout_correction.rollout_is=token or sequence, rollout_rs=..., or "
            "bypass_mode=true), or use v1_sync",
        )
    ]


def check_sampler(run: RunSpec) -> list[Problem]:
    """The policy exists and accepts its parameters (``samplers.build_policy`` constructs it), and the resume
    setting is known."""
    from samplers import build_policy
    from samplers.fingerprint import ON_DATA_CHANGE

    if run.sampler.on_data_change not in ON_DATA_CHANGE:
        return [
            Problem(
                run.name,
                "sampler.on_data_change",
                f"must be one of {list(ON_DATA_CHANGE)}, got {run.sampler.on_data_change!r}",
            )
        ]
    try:
        build_policy(run.sampler.name, run.sampler.params, seed=run.sampler.seed)
    except ValueError as err:
        return [Problem(run.name, "sampler", str(err))]
    return []


def check_batches(run: RunSpec, nnodes: int, gpus_per_node: int) -> list[Problem]:
    """Batch sizes divide over the GPUs the way verl's workers split them, and parallel sizes fit the nodes.

    verl's ``validate_config`` checks part of this only after the nodes and GPUs are known; we check it for the
    resources the trainer uses, with the same arithmetic as the FSDP workers (the train batch times ``n``
    responses split over the data-parallel ranks, each rank's share split into micro batches).

    Args:
        run: the run.
        nnodes: ``trainer.nnodes`` as finally overridden.
        gpus_per_node: ``trainer.n_gpus_per_node`` as finally overridden.
    """
    from rlif.runs.choices import resolved_run

    try:
        run = resolved_run(run)  # the values verl gets where the matrix leaves them to the planner
    except ValueError as err:
        return [Problem(run.name, "train", str(err))]
    t, s = run.train, run.slurm
    world = nnodes * gpus_per_node
    problems: list[Problem] = []

    def need(ok: bool, key: str, message: str) -> None:
        if not ok:
            problems.append(Problem(run.name, key, message))

    for key, value in (
        ("slurm.nodes", s.nodes),
        ("slurm.gpus_per_node", s.gpus_per_node),
        ("slurm.cpus_per_task", s.cpus_per_task),
        ("train.train_batch_size", t.train_batch_size),
        ("train.ppo_mini_batch_size", t.ppo_mini_batch_size),
        ("train.micro_batch_per_gpu", t.micro_batch_per_gpu),
        ("train.log_prob_micro_batch_per_gpu", t.log_prob_micro_batch_per_gpu),
        ("train.rollout_n", t.rollout_n),
        ("train.rollout_tp", t.rollout_tp),
        ("train.sequence_parallel", t.sequence_parallel),
        ("train.total_epochs", t.total_epochs),
        ("validation.n", run.validation.n),
    ):
        need(value >= 1, key, f"must be >= 1, got {value}")
    for key, value in (
        ("train.total_training_steps", t.total_training_steps),
        ("train.actor_token_budget", t.actor_token_budget),
        ("train.log_prob_token_budget", t.log_prob_token_budget),
        ("train.ref_token_budget", t.ref_token_budget),
    ):
        need(value >= 0, key, f"must be >= 0 (0: see docs/recipes.md), got {value}")
    need(
        world >= 1,
        "judge.gpus",
        f"{nnodes} node(s) x {gpus_per_node} training GPUs: judge.gpus {run.judge.gpus} of "
        f"slurm.gpus_per_node {s.gpus_per_node} leave no GPU to train on",
    )
    if problems:
        return problems
    need(t.rollout_n >= 2, "train.rollout_n", f"GRPO needs >= 2 responses per prompt, got {t.rollout_n}")
    need(
        t.train_batch_size % t.ppo_mini_batch_size == 0,
        "train.ppo_mini_batch_size",
        f"{t.ppo_mini_batch_size} does not divide train_batch_size {t.train_batch_size}",
    )
    need(
        (t.train_batch_size * t.rollout_n) % world == 0,
        "train.train_batch_size",
        f"{t.train_batch_size} prompts x {t.rollout_n} responses do not split over {world} GPUs",
    )
    need(
        world % t.sequence_parallel == 0,
        "train.sequence_parallel",
        f"{t.sequence_parallel} does not divide {world} GPUs",
    )
    need(
        gpus_per_node % t.rollout_tp == 0,
        "train.rollout_tp",
        f"{t.rollout_tp} does not divide {gpus_per_node} GPUs per node",
    )
    if problems:
        return problems
    dp = world // t.sequence_parallel
    mini = t.ppo_mini_batch_size * t.rollout_n
    need(mini % dp == 0, "train.ppo_mini_batch_size", f"{mini} responses per mini-batch do not split over {dp} ranks")
    if mini % dp == 0:
        per_rank = mini // dp
        need(
            per_rank % t.micro_batch_per_gpu == 0,
            "train.micro_batch_per_gpu",
            f"{t.micro_batch_per_gpu} does not divide the {per_rank} responses each rank gets per mini-batch",
        )
    need(t.save_freq >= -1, "train.save_freq", "must be >= 1, 0 (the planner's, from max_lost_hours) or -1 (never)")
    need(t.max_lost_hours > 0, "train.max_lost_hours", f"must be > 0 hours, got {t.max_lost_hours}")
    need(t.save_freq != 0 or not run.cpu_mode, "train.save_freq", "a CPU-mode run is not planned: give a number")
    need(t.max_ckpt_to_keep >= 0, "train.max_ckpt_to_keep", "must be >= 0 (0 keeps every checkpoint)")
    need(t.test_freq == -1 or t.test_freq >= 1, "train.test_freq", "must be >= 1 or -1 (never)")
    need(t.lora_rank >= 0, "train.lora_rank", "must be >= 0")
    need(0.0 < t.gpu_memory_utilization < 1.0, "train.gpu_memory_utilization", "must be in (0, 1)")
    need(t.trainer in TRAINERS, "train.trainer", f"{t.trainer!r} is not one of {sorted(TRAINERS)}")
    need(t.overlong in OVERLONG_MODES, "train.overlong", f"{t.overlong!r} is not one of {list(OVERLONG_MODES)}")
    need(
        t.overlong == "none" or t.trainer != "legacy",
        "train.overlong",
        f"{t.overlong} needs a V1 trainer (v1_sync or v1_colocate_async): rlif applies it in its V1 replay buffer "
        "before advantages, and the legacy trainer has none; set train.overlong: none or another trainer",
    )
    if t.overlong == "soft_punish":
        need(
            0 < t.overlong_buffer_tokens < t.max_response_length,
            "train.overlong_buffer_tokens",
            f"{t.overlong_buffer_tokens} must be in (0, max_response_length {t.max_response_length})",
        )
        need(t.overlong_penalty > 0, "train.overlong_penalty", f"must be > 0, got {t.overlong_penalty}")
    need(run.val_sampling.temperature > 0, "validation", "temperature must be > 0 (sampled validation)")
    return problems


def check_plan(run: RunSpec, root: Path) -> list[Problem]:
    """The run planner's verdict: every pass fits ``slurm.gpu_memory_gb``, SP/TP fit the heads, the step limit is
    reachable (``rlif.runs.planner``). CPU-mode runs (a tiny local model) are not planned."""
    from rlif.runs.planner import plan_run

    if run.cpu_mode:
        return []
    try:
        plan = plan_run(run, root)
    except ValueError as err:
        return [Problem(run.name, "model", str(err))]
    return [Problem(run.name, key, message) for key, message in plan.problems]


def check_slurm(run: RunSpec) -> list[Problem]:
    """Directive values sbatch would reject only at submit time."""
    s = run.slurm
    problems: list[Problem] = []
    if not _SLURM_TIME.match(s.time):
        problems.append(Problem(run.name, "slurm.time", f"{s.time!r} is not D-HH:MM:SS / HH:MM:SS / MM"))
    if not 30 <= s.requeue_signal_seconds <= 65535:
        problems.append(Problem(run.name, "slurm.requeue_signal_seconds", "must be in [30, 65535] (Slurm's limit)"))
    if not re.fullmatch(r"\d+[KMGT]?", s.mem):
        problems.append(Problem(run.name, "slurm.mem", f"{s.mem!r} is not a Slurm memory size (0 = whole node)"))
    for key, value in (("slurm.partition", s.partition), ("slurm.account", s.account)):
        if value and not re.fullmatch(r"[\w.,-]+", value):
            problems.append(Problem(run.name, key, f"{value!r} has characters Slurm names never contain"))
    return problems


def check_eval(run: RunSpec) -> list[Problem]:
    """The evaluation job's settings (CPU-mode runs have none): sample count, Slurm values, and a tensor-parallel
    size that vLLM accepts and the GPU memory holds (``rlif.recipes.eval_script.plan_eval``)."""
    from rlif.recipes.eval_script import job_resources, plan_eval

    if run.cpu_mode:
        return []
    e = run.eval
    problems: list[Problem] = []
    if e.n < 1:
        problems.append(Problem(run.name, "eval.n", f"{e.n} samples per prompt; at least 1"))
    if e.max_response_length < 0 or e.tp < 0:
        problems.append(Problem(run.name, "eval", "max_response_length and tp must be >= 0 (0: from the run)"))
    if not 0 < e.gpu_memory_utilization <= 1:
        problems.append(Problem(run.name, "eval.gpu_memory_utilization", f"{e.gpu_memory_utilization} not in (0, 1]"))
    if not _SLURM_TIME.match(e.time):
        problems.append(Problem(run.name, "eval.time", f"{e.time!r} is not D-HH:MM:SS / HH:MM:SS / MM"))
    if e.cpus_per_gpu < 1:
        problems.append(Problem(run.name, "eval.cpus_per_gpu", f"{e.cpus_per_gpu}; at least 1"))
    if problems:
        return problems
    try:
        job_resources(run, plan_eval(run))
    except ValueError as err:
        key = "eval.mem_per_gpu" if "mem_per_gpu" in str(err) else "eval.tp"
        problems.append(Problem(run.name, key, str(err)))
    return problems


def check_run(run: RunSpec, overrides: list[Override]) -> list[Problem]:
    """Every static check of one run.

    Args:
        run: the run.
        overrides: all its overrides, in order (a later override of a key wins, as in Hydra).

    Returns:
        The problems found.
    """
    try:
        nnodes, gpus = world_size(overrides)
    except ValueError as err:
        return [Problem(run.name, "trainer.nnodes", str(err))]
    return (
        check_overrides(run, overrides)
        + check_reward(run)
        + check_judge(run, overrides)
        + check_async(run, overrides)
        + check_sampler(run)
        + check_batches(run, nnodes, gpus)
        + check_slurm(run)
        + check_eval(run)
    )
