"""A run's settings as frozen, type-checked dataclasses: the vocabulary every other part of rlif speaks.

``build_run`` turns one merged mapping (defaults, group and entry, see ``rlif.runs.matrix``) into a ``RunSpec``.
Typos fail here: an unknown key or a value of the wrong type raises ``ValueError`` naming ``where`` and the dotted
key, so a bad matrix never reaches a GPU queue.

A run may take settings from the winner of earlier stages (``from_winner``: the ablation chain). The spec only
checks the declaration (a metric name, settings that exist); the matrix checks the link against earlier stages and
the generator resolves it from evaluation results (``rlif.recipes.chained``).
"""

from __future__ import annotations

import copy
import dataclasses
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

AUTO = "auto"
"""The value of a setting the run planner chooses (``rlif.runs.choices``) instead of the matrix."""

Auto = Literal["auto"]
"""The type of ``AUTO`` in a setting's annotation: ``float | Auto`` takes a number or ``auto``."""

RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""Run names become file names, Slurm job names and wandb ids: keep them to safe characters."""


@dataclass(frozen=True)
class SlurmSpec:
    """Resources of one job.

    Attributes:
        nodes: nodes of the Ray cluster (``trainer.nnodes``).
        gpus_per_node: GPUs per node (``trainer.n_gpus_per_node``).
        cpus_per_task: CPUs per node for Ray (one task per node).
        mem: ``--mem`` value; ``"0"`` means all memory of the node.
        time: ``--time`` limit (``D-HH:MM:SS``).
        requeue_signal_seconds: Slurm sends USR1 this long before the limit; the script stops verl and requeues
            the job, which resumes from the last periodic checkpoint (``train.save_freq``).
        partition: ``--partition`` (empty: the cluster default). ``.env`` or ``--partition`` fill it.
        account: ``--account`` (empty: none). ``.env`` or ``--account`` fill it.
        gpu_memory_gb: memory of one GPU of the cluster in GiB; the run planner fails a run whose plan exceeds
            it. ``.env`` (``RLIF_GPU_MEMORY_GB``) or ``--gpu-memory-gb`` replace it for a cluster.
    """

    nodes: int
    gpus_per_node: int
    cpus_per_task: int
    mem: str
    time: str
    requeue_signal_seconds: int
    partition: str
    account: str
    gpu_memory_gb: float


@dataclass(frozen=True)
class TrainSpec:
    """GRPO optimisation knobs; names follow what a user tunes, ``overrides`` maps them to verl keys.

    Attributes:
        total_epochs: passes over the training file (verl stops at whichever limit comes first).
        total_training_steps: step limit; 0 runs as many steps as the data gives (rows // train_batch_size x
            total_epochs), so the last step saves and validates.
        lr: actor learning rate.
        train_batch_size: prompts per step (global batch).
        ppo_mini_batch_size: prompts per actor update.
        micro_batch_per_gpu: ``ppo_micro_batch_size_per_gpu``: sequences per update micro-batch when
            ``dynamic_batch`` is off (verl ignores it otherwise).
        log_prob_micro_batch_per_gpu: the same for the old-log-prob and reference passes.
        dynamic_batch: verl's ``use_dynamic_bsz``: micro-batches are packed up to a per-GPU token budget.
        actor_token_budget: ``ppo_max_token_len_per_gpu`` of the update; 0 lets the run planner size it.
        log_prob_token_budget: ``log_prob_max_token_len_per_gpu`` of the old-log-prob pass; 0: planner.
        ref_token_budget: ``log_prob_max_token_len_per_gpu`` of the reference pass; 0: planner.
        max_prompt_length: longer prompts are filtered out.
        max_response_length: generation limit.
        rollout_n: responses per prompt (the GRPO group size).
        rollout_tp: vLLM tensor parallel size.
        gpu_memory_utilization: vLLM's share of GPU memory; ``auto``: the planner's, the highest that leaves the
            actor what it keeps on the GPU during generation plus a margin (``rlif.runs.choices``).
        temperature: rollout sampling temperature.
        sequence_parallel: Ulysses sequence-parallel size of actor and reference; attention and KV heads must
            divide by it. ``auto``: 1 unless one full-length sequence's update does not fit a GPU, then the
            smallest size that fits and that heads, KV heads and the GPUs allow.
        actor_offload: offload actor parameters and optimizer state to CPU outside the actor's own passes.
            ``auto``: only when a pass does not fit with them resident.
        gradient_checkpointing: activation checkpointing of the actor (recompute each decoder layer in backward).
        fused_kernels: verl's fused lm_head + log-prob + entropy kernels, which never build the full
            tokens x vocabulary logits.
        entropy_chunking: compute the entropy of the old-log-prob pass in chunks (matters without fused kernels).
        lora_rank: 0 is full fine-tuning; > 0 trains LoRA adapters of this rank.
        lora_alpha: LoRA scaling.
        use_kl_loss: KL penalty to the reference as a loss term (GRPO style).
        kl_loss_coef: weight of that loss.
        kl_loss_type: verl's KL estimator name.
        entropy_coeff: entropy bonus.
        save_freq: checkpoint every this many steps; bounds the work a time-limit requeue loses (verl 0.9.1's V1
            trainer saves only on this schedule and at the last step). 0 lets the run planner size it from
            ``max_lost_hours`` (``rlif.runs.planner.auto_save_freq``); -1 never saves.
        max_lost_hours: with ``save_freq: 0``, the wall time a requeue or node failure may redo at most: the
            planner saves every max(1, floor(max_lost_hours / slow-end step hours)) steps.
        max_ckpt_to_keep: checkpoints kept per job attempt (``trainer.max_actor_ckpt_to_keep``; 0 keeps all).
        test_freq: validate every this many steps.
        val_before_train: validate once before step 1.
        logger: verl logger backends.
        drop_tied_groups: DAPO's dynamic sampling: a prompt whose responses all earn the same reward (no GRPO
            advantage) is dropped from the step's batch and replaced by newly generated prompts, in rlif's replay
            buffer (``rlif.verl_glue.v1_feedback``; verl's own ``algorithm.filter_groups`` is skipped when a custom
            replay buffer is set). The sampling policy still sees the dropped prompts' rewards. V1 trainers only.
        overlong: what a truncated response (one that reached ``max_response_length``) does to the loss, in rlif's
            V1 replay buffer before advantages, for every reward manager: ``none`` (its reward as scored, usually 0),
            ``soft_punish`` (DAPO's soft overlong punishment: the reward falls linearly by up to ``overlong_penalty``
            over the last ``overlong_buffer_tokens`` of the cap, applied to every response that long) or ``mask``
            (truncated responses leave the loss and their group's statistics, DAPO's overlong filtering). The
            sampling policy reads the scores before either.
        overlong_buffer_tokens: DAPO's ``overlong_buffer.len``: the punishment starts this many tokens before the cap.
        overlong_penalty: DAPO's ``overlong_buffer.penalty_factor``: the punishment at the cap.
        trainer: which verl 0.9.1 trainer runs: ``v1_sync`` (the V1 trainer, verl's default), ``v1_colocate_async``
            (V1; rollout of the next batch overlaps with training, so the sampling feedback arrives about one batch
            late) or ``legacy`` (verl's deprecated pre-V1 trainer, which works without V1 and TransferQueue).
    """

    total_epochs: int
    total_training_steps: int
    lr: float
    train_batch_size: int
    ppo_mini_batch_size: int
    micro_batch_per_gpu: int
    log_prob_micro_batch_per_gpu: int
    dynamic_batch: bool
    actor_token_budget: int
    log_prob_token_budget: int
    ref_token_budget: int
    max_prompt_length: int
    max_response_length: int
    rollout_n: int
    rollout_tp: int
    gpu_memory_utilization: float | Auto
    temperature: float
    sequence_parallel: int | Auto
    actor_offload: bool | Auto
    gradient_checkpointing: bool
    fused_kernels: bool
    entropy_chunking: bool
    lora_rank: int
    lora_alpha: int
    use_kl_loss: bool
    kl_loss_coef: float
    kl_loss_type: str
    entropy_coeff: float
    save_freq: int
    max_lost_hours: float
    max_ckpt_to_keep: int
    test_freq: int
    val_before_train: bool
    logger: tuple[str, ...]
    drop_tied_groups: bool
    overlong: str
    overlong_buffer_tokens: int
    overlong_penalty: float
    trainer: str


@dataclass(frozen=True)
class SamplingSpec:
    """Decoding settings of validation (the model card's recommendation, never greedy for Qwen3 thinking).

    Attributes:
        temperature: sampling temperature.
        top_p: nucleus mass.
        top_k: top-k cut (-1: none).
    """

    temperature: float
    top_p: float
    top_k: int


@dataclass(frozen=True)
class ValidationSpec:
    """How verl's in-loop validation decodes.

    Attributes:
        n: samples per validation prompt.
        think: sampling of thinking runs.
        no_think: sampling of runs without thinking.
    """

    n: int
    think: SamplingSpec
    no_think: SamplingSpec


@dataclass(frozen=True)
class PlanSpec:
    """Assumptions of the run planner's time estimate (``rlif.runs.planner``; docs/run-planning.md).

    Attributes:
        mean_prompt_tokens: expected mean prompt length (chat template included).
        mean_response_tokens: expected mean response length; replace with the logged ``response_length/mean``
            after the first steps.
        gpu_peak_tflops: dense bf16 peak of one GPU (H100 SXM: 989).
        mfu: model FLOPs utilisation of the compute-bound passes at the fast end of the step-time range.
        mfu_low: the same at the slow end.
        hbm_tb_per_s: effective memory bandwidth of one GPU during vLLM decoding, fast end.
        hbm_tb_per_s_low: the same at the slow end.
    """

    mean_prompt_tokens: int
    mean_response_tokens: int
    gpu_peak_tflops: float
    mfu: float
    mfu_low: float
    hbm_tb_per_s: float
    hbm_tb_per_s_low: float


@dataclass(frozen=True)
class RewardSpec:
    """Reward settings.

    Attributes:
        manager: verl reward manager (``naive`` runs the scorer in threads; ``remote`` in processes).
        num_workers: reward-loop workers.
        kwargs: options passed to ``rlif`` rewards (``if_reward``, ``if_max_answer_chars``, ``logicif_partial_credit``,
            ``graph_reward``).
    """

    manager: str
    num_workers: int
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class JudgeSpec:
    """The LLM judge the ``judge`` reward family asks (docs/judge.md); mapped onto the reward options
    ``judge_url`` and ``judge_model`` when the run is built.

    Attributes:
        model: the judge model (HF repo id or local path; also the served model name); empty: no judge.
        gpus: GPUs of the run's node the job reserves for a vLLM server of ``model`` (its tensor-parallel size):
            the script starts it on the node's first ``gpus`` GPUs before Ray and waits for it; training uses the
            rest (``trainer.n_gpus_per_node`` = ``slurm.gpus_per_node`` - ``gpus``). 0: no server (``url`` names
            one). Single-node runs only: the reward workers reach it on loopback.
        port: the port of that server.
        url: an external OpenAI-compatible endpoint (``http://host:port/v1``) serving ``model``; excludes ``gpus``.
    """

    model: str
    gpus: int
    port: int
    url: str

    @property
    def enabled(self) -> bool:
        """Whether the run has a judge."""
        return bool(self.model)

    @property
    def endpoint(self) -> str:
        """The URL the reward family asks: the external one, or the job's own server on loopback."""
        return self.url or f"http://127.0.0.1:{self.port}/v1"


JUDGE_OPTIONS = ("judge_url", "judge_model")
"""The reward options a ``judge:`` setting fills."""


def judge_problems(judge: JudgeSpec, slurm: SlurmSpec) -> list[str]:
    """What is wrong with a run's ``judge:`` setting against its resources (empty when nothing is)."""
    problems = []
    if judge.gpus < 0:
        problems.append(f"judge.gpus must be >= 0, got {judge.gpus}")
    if not 1 <= judge.port <= 65535:
        problems.append(f"judge.port must be in [1, 65535], got {judge.port}")
    if (judge.url or judge.gpus) and not judge.model:
        problems.append("judge.model is empty: name the judge model (the served model name) with judge.url or gpus")
    if judge.model and not judge.url and judge.gpus == 0:
        problems.append("judge.model is set without judge.url or judge.gpus: say where the judge runs")
    if judge.url and judge.gpus:
        problems.append("judge.url and judge.gpus together: an external endpoint needs no GPUs of the run")
    if judge.url and not re.match(r"^https?://[^\s/]+", judge.url):
        problems.append(f"judge.url {judge.url!r} is not an http(s) URL")
    if judge.gpus > 0 and slurm.nodes != 1:
        problems.append(
            f"judge.gpus: a judge server the job starts is supported on single-node runs (slurm.nodes is "
            f"{slurm.nodes}); serve it elsewhere and set judge.url"
        )
    if judge.gpus > 0 and judge.gpus >= slurm.gpus_per_node:
        problems.append(f"judge.gpus {judge.gpus} leaves no training GPU of slurm.gpus_per_node {slurm.gpus_per_node}")
    return problems


def with_judge_options(reward: RewardSpec, judge: JudgeSpec) -> RewardSpec:
    """``reward`` with ``judge_url`` and ``judge_model`` taken from ``judge`` (unchanged without a judge).

    Raises:
        ValueError: ``reward.kwargs`` sets one of them too (one place says where the judge is).
    """
    if not judge.enabled:
        return reward
    both = sorted(set(JUDGE_OPTIONS) & set(reward.kwargs))
    if both:
        raise ValueError(f"reward.kwargs sets {both} and judge: is set; keep the judge in judge: only")
    kwargs = {**reward.kwargs, "judge_url": judge.endpoint, "judge_model": judge.model}
    return dataclasses.replace(reward, kwargs=kwargs)


@dataclass(frozen=True)
class SamplerSpec:
    """The prompt-sampling policy of ``PolicySampledDataset``.

    Attributes:
        name: a registered policy name (``samplers.policy_names()``).
        params: keyword arguments of that policy.
        seed: seed of the policy's RNG.
        on_data_change: what a resume does when the training data no longer matches the saved sampler state:
            ``error`` (stop, naming what changed) or ``resplit`` (re-split the new data and continue).
    """

    name: str
    params: dict[str, Any]
    seed: int
    on_data_change: str


BENCHMARK_TIERS = ("fast", "full")
"""``fast``: what an ablation chain may select on (validation files); ``full``: the complete results (benchmarks' test
files), reported and never selected on."""
BENCHMARK_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
"""A benchmark's name: its folder under ``eval/<run>/<step>/`` and a shell variable of the evaluation job."""


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark of a run's evaluation job, generated and scored with its own settings into
    ``eval/<run>/<step>/<name>/``.

    Attributes:
        name: its folder (lowercase letters, digits, underscores; starts with a letter).
        files: its evaluation files (relative to the repository root); empty: the run's ``val_files`` and
            ``eval.files``.
        n: samples per prompt (pass@k is reported for every k up to n).
        max_tokens: generation limit per sample; 0 uses ``eval.max_response_length`` (then the training limit).
        headline: the flat metric keys that are its pre-registered outcome (``math/aime24/pass@64``); each is shown
            with its source's ``truncated_rate`` beside it.
        tier: ``fast`` (an ablation chain may select on it) or ``full`` (reported, never selected on).
    """

    name: str
    files: tuple[str, ...]
    n: int
    max_tokens: int
    headline: tuple[str, ...]
    tier: str


@dataclass(frozen=True)
class EvalSpec:
    """The run's evaluation job (``recipe/rlif/eval/<run>.sh``): vLLM generation on one node, then scoring.

    Decoding is the run's validation sampling (``RunSpec.val_sampling``); the files are the run's ``val_files`` and
    these ``files``.

    Attributes:
        files: extra evaluation files (relative to the repository root), e.g. mathematics files the user builds.
        n: samples per prompt (pass@k is reported for every k up to n).
        max_response_length: generation limit; 0 uses ``train.max_response_length``.
        tp: vLLM tensor-parallel size; 0 picks the smallest that divides the attention heads and fits weights and
            the KV cache of one prompt's n full-length samples in one GPU (``rlif.recipes.eval_script``).
        gpu_memory_utilization: vLLM's share of each GPU.
        cpus_per_gpu: CPUs asked for per GPU (scoring runs on them).
        mem_per_gpu: host memory per GPU as a Slurm size (merging a checkpoint holds its fp32 weights in memory).
        time: ``--time`` limit of the job; it requeues at the limit and resumes the finished prompts.
        benchmarks: the benchmarks, each with its own files, n, length, headline and tier; empty: one evaluation of
            the files above with ``n`` and ``max_response_length`` into ``eval/<run>/<step>/`` itself.
    """

    files: tuple[str, ...]
    n: int
    max_response_length: int
    tp: int
    gpu_memory_utilization: float
    cpus_per_gpu: int
    mem_per_gpu: str
    time: str
    benchmarks: tuple[BenchmarkSpec, ...]


def benchmark_problems(spec: EvalSpec) -> list[str]:
    """What is wrong with ``spec.benchmarks`` (empty when nothing is): names, tiers, counts and headlines."""
    problems = []
    names = [b.name for b in spec.benchmarks]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"eval.benchmarks: {name!r} is listed twice")
    for b in spec.benchmarks:
        where = f"eval.benchmarks {b.name!r}"
        if not BENCHMARK_NAME.match(b.name):
            problems.append(f"{where}: name must match {BENCHMARK_NAME.pattern}")
        if b.tier not in BENCHMARK_TIERS:
            problems.append(f"{where}: tier must be one of {list(BENCHMARK_TIERS)}, got {b.tier!r}")
        if b.n < 1:
            problems.append(f"{where}: n must be at least 1, got {b.n}")
        if b.max_tokens < 0:
            problems.append(f"{where}: max_tokens must be 0 (the run's limit) or more, got {b.max_tokens}")
        if not b.headline or not all(key.strip() == key and "/" in key for key in b.headline):
            problems.append(f"{where}: headline must list flat metric keys such as math/aime24/pass@64")
    if spec.benchmarks and not any(b.tier == "fast" for b in spec.benchmarks):
        problems.append("eval.benchmarks: no fast-tier benchmark: an ablation chain would have nothing to select on")
    return problems


@dataclass(frozen=True)
class WinnerSpec:
    """``from_winner``: this run takes settings from the best run of earlier stages, by an evaluation metric.

    Attributes:
        stages: the earlier stages whose runs compete (all must come before this run in the matrix).
        metric: the criterion in words: a flat metric key of ``metrics.json`` (``graph/optimal_rate``), or a
            weighted sum of several (``0.7 graph/optimal_rate + 0.3 ifeval/prompt_level_strict_acc``) that balances
            in-task and cross-domain results. Select on validation files; test files are reported, never chosen on.
        take: dotted matrix keys whose values the winner passes on (``train_files``, ``sampler``,
            ``reward.kwargs.graph_reward``); the run itself must not set them.
        weights: ``(flat metric key, weight)`` of the criterion; one key of weight 1 for a single metric.
        tie_rule: in words, which of the candidates tied within the paired interval wins: the first listed in the
            matrix, so the matrix lists them in the order of the rule (e.g. ``smaller volume, then mixed``).
        sign_off: the generator stops at this link until a person accepts its decision table (``--accept``).
    """

    stages: tuple[str, ...]
    metric: str
    take: tuple[str, ...]
    weights: tuple[tuple[str, float], ...] = ()
    tie_rule: str = "the first listed candidate"
    sign_off: bool = False

    def describe(self) -> str:
        """``take <keys> from the winner of <stages> by <metric>`` (for listings and script headers)."""
        text = f"take {', '.join(self.take)} from the winner of {' + '.join(self.stages)} by {self.metric}"
        return text + (" (sign-off)" if self.sign_off else "")


@dataclass(frozen=True)
class Replicate:
    """One seed of a run declared with ``seeds: [...]``: the matrix writes one run per seed.

    Attributes:
        arm: the declared run name (the replicates' common name, without the ``_s<seed>`` suffix).
        seed: this replicate's seed: the sampler's RNG, verl's data order, the rollout's sampling and the actor's
            mini-batch order (``rlif.verl_glue.overrides``).
    """

    arm: str
    seed: int


REPLICATE_SUFFIX = "_s{seed}"
"""Appended to a replicate's name, so each seed has its own script, checkpoint directory and wandb run."""


def parse_seeds(raw: Any, where: str) -> tuple[int, ...]:
    """Read ``seeds``: a non-empty list of distinct integers >= 0.

    Raises:
        ValueError: names ``where`` and what is wrong.
    """
    if (
        not isinstance(raw, list)
        or not raw
        or not all(isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 for seed in raw)
    ):
        raise ValueError(f"{where}: seeds must be a non-empty list of integers >= 0, got {raw!r}")
    if len(set(raw)) != len(raw):
        raise ValueError(f"{where}: seeds names a seed twice: {raw}")
    return tuple(raw)


def replicate_raw(raw: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The merged mapping of one replicate of ``raw`` (which declares ``seeds``): ``<name>_s<seed>``, the seed in
    ``sampler.seed`` and in the ``replicate`` record, ``seeds`` removed."""
    merged = copy.deepcopy(dict(raw))
    merged.pop("seeds", None)
    arm = str(merged["name"])
    merged["name"] = arm + REPLICATE_SUFFIX.format(seed=seed)
    set_dotted(merged, "sampler.seed", seed)
    merged["replicate"] = {"arm": arm, "seed": seed}
    return merged


def build_runs(raw: Mapping[str, Any], where: str) -> list[RunSpec]:
    """The runs of one merged matrix entry: one run, or one per seed when it declares ``seeds``.

    Raises:
        ValueError: what ``build_run`` raises, a malformed ``seeds``, ``seeds`` together with ``from_winner`` (a
            chain link compares single runs), or a ``replicate`` key written by hand.
    """
    if "replicate" in raw:
        raise ValueError(f"{where}: replicate is set by seeds: [...], not written in the matrix")
    if raw.get("seeds") is None:
        return [build_run({k: v for k, v in raw.items() if k != "seeds"}, where)]
    seeds = parse_seeds(raw["seeds"], where)
    if raw.get("from_winner") is not None:
        raise ValueError(f"{where}: seeds and from_winner together are not supported (a link takes one run's settings)")
    return [build_run(replicate_raw(raw, seed), f"{where} (seed {seed})") for seed in seeds]


TAKE_FORBIDDEN = frozenset({"name", "stage", "description", "cpu_mode", "from_winner", "replicate"})
"""Keys that identify a run; a winner cannot pass them on."""


@dataclass(frozen=True)
class RunSpec:
    """One run of the matrix: everything its script needs.

    Attributes:
        name: script basename, Slurm job name, verl experiment name and checkpoint folder.
        stage: group of runs (``smoke``, ``stage1``, ``stage2``, ``graph``, ``cpu``) for ``--stage``.
        description: one line on why the run exists; printed at the top of its script.
        project: wandb project; checkpoints go to ``checkpoints/<project>/<name>``.
        model: HF repo id or local path of the initial policy.
        think: Qwen3 thinking mode (``enable_thinking``).
        train_files: training parquet files, relative to the repository root.
        val_files: validation parquet files, relative to the repository root.
        train: optimisation knobs.
        reward: reward settings.
        sampler: prompt-sampling policy.
        slurm: job resources.
        judge: the LLM judge of the ``judge`` reward family (its server or URL); its ``judge_url`` and
            ``judge_model`` are in ``reward.kwargs`` once built.
        validation: how in-loop validation decodes.
        plan: assumptions of the planner's time estimate.
        extra_overrides: raw verl Hydra overrides appended last (validated like the rest).
        eval: its evaluation job.
        cpu_mode: CPU end-to-end mode: tiny model and data from ``rlif.cpu_demo``, ``rlif.verl_glue.cpu_support``
            env and overrides. Only for the local Slurm test and the CPU demo; the GPU scripts never import it.
        model_setting: a ``.env`` key (or environment variable) whose value replaces ``model`` at generation, for
            a checkpoint whose path differs per machine (the group's graph-SFT checkpoints); ``model`` then only
            stands in for its architecture in the matrix's own checks, and the run's scripts, holding that path,
            are never committed. Empty: ``model`` is the model.
        from_winner: the chain link it takes settings through (None: an ordinary run). Until the generator
            resolves it, the taken keys hold the defaults' (or the run's group's) values. A field with a default:
            a link belongs to a single run entry, so ``defaults:`` cannot hold it and most runs have none.
        replicate: the arm and seed of a run declared with ``seeds`` (None: a single run); set by the matrix.
    """

    name: str
    stage: str
    description: str
    project: str
    model: str
    think: bool
    train_files: tuple[str, ...]
    val_files: tuple[str, ...]
    train: TrainSpec
    reward: RewardSpec
    sampler: SamplerSpec
    slurm: SlurmSpec
    judge: JudgeSpec
    validation: ValidationSpec
    plan: PlanSpec
    extra_overrides: tuple[str, ...]
    eval: EvalSpec
    cpu_mode: bool
    model_setting: str
    from_winner: WinnerSpec | None = None
    replicate: Replicate | None = None

    @property
    def arm(self) -> str:
        """The declared run name: the replicates of one ``seeds`` entry share it."""
        return self.replicate.arm if self.replicate is not None else self.name

    @property
    def val_sampling(self) -> SamplingSpec:
        """The validation decoding of this run's mode (thinking or not)."""
        return self.validation.think if self.think else self.validation.no_think

    @property
    def eval_files(self) -> tuple[str, ...]:
        """What its evaluation job scores: the validation files, then ``eval.files`` (each once)."""
        return tuple(dict.fromkeys((*self.val_files, *self.eval.files)))


def parse_winner(raw: Any, where: str) -> WinnerSpec:
    """Read a ``from_winner`` mapping: ``{stage: S or [S, ...], metric: M or {M: weight, ...}, take: [key, ...]}``
    with optional ``tie_rule`` (words) and ``sign_off`` (bool).

    Raises:
        ValueError: a missing or unknown key, a wrong type, or a ``take`` key that is no setting of a run.
    """
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: from_winner must be a mapping {{stage, metric, take}}, got {raw!r}")
    required = {"stage", "metric", "take"}
    unknown, missing = sorted(set(raw) - required - {"tie_rule", "sign_off"}), sorted(required - set(raw))
    if unknown or missing:
        problem = f"unknown key(s) {unknown}" if unknown else f"missing key(s) {missing}"
        raise ValueError(f"{where}: from_winner: {problem}; expected stage, metric, take")
    stage = raw["stage"]
    stages = [stage] if isinstance(stage, str) else stage
    if not isinstance(stages, list) or not stages or not all(isinstance(s, str) and s for s in stages):
        raise ValueError(f"{where}: from_winner.stage must be a stage name or a list of them, got {stage!r}")
    if len(set(stages)) != len(stages):
        raise ValueError(f"{where}: from_winner.stage names a stage twice: {stages}")
    metric = raw["metric"]
    parts = metric if isinstance(metric, Mapping) else {metric: 1.0}
    for key, weight in parts.items():
        if not isinstance(key, str) or not key.strip() or key != key.strip():
            raise ValueError(
                f"{where}: from_winner.metric must be a flat metric key such as graph/optimal_rate, or a mapping "
                f"of such keys to weights, got {metric!r}"
            )
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight == 0:
            raise ValueError(
                f"{where}: from_winner.metric: weight of {key!r} must be a non-zero number, got {weight!r}"
            )
    if not parts:
        raise ValueError(f"{where}: from_winner.metric: an empty mapping names no metric")
    weights = tuple((key, float(weight)) for key, weight in parts.items())
    text = metric if isinstance(metric, str) else " + ".join(f"{w:g} {k}" for k, w in weights)
    tie_rule = raw.get("tie_rule", "the first listed candidate")
    if not isinstance(tie_rule, str) or not tie_rule.strip():
        raise ValueError(f"{where}: from_winner.tie_rule must be the rule in words, got {tie_rule!r}")
    sign_off = raw.get("sign_off", False)
    if not isinstance(sign_off, bool):
        raise ValueError(f"{where}: from_winner.sign_off must be true or false, got {sign_off!r}")
    take = raw["take"]
    if not isinstance(take, list) or not take or not all(isinstance(k, str) and k for k in take):
        raise ValueError(f"{where}: from_winner.take must be a non-empty list of setting names, got {take!r}")
    for key in take:
        problem = setting_problem(key)
        if problem:
            raise ValueError(f"{where}: from_winner.take: {key!r} {problem}")
    return WinnerSpec(tuple(stages), text, tuple(take), weights, tie_rule.strip(), sign_off)


def setting_problem(key: str) -> str:
    """Why ``key`` (dotted) is not a setting a winner can pass on; empty when it is. Keys below a mapping-valued
    field (``reward.kwargs.graph_reward``, ``sampler.params.alpha``) are free-form, as in the matrix itself."""
    parts = key.split(".")
    if parts[0] in TAKE_FORBIDDEN:
        return f"identifies a run and cannot be taken (not one of {sorted(TAKE_FORBIDDEN)})"
    cls: Any = RunSpec
    for depth, part in enumerate(parts):
        hints = typing.get_type_hints(cls)
        if part not in hints:
            return f"is not a run setting ({part!r} is not one of {sorted(hints)})"
        hint = hints[part]
        if dataclasses.is_dataclass(hint):
            cls = hint
            continue
        if typing.get_origin(hint) is dict:
            return ""
        if depth != len(parts) - 1:
            return f"is not a run setting ({part!r} has no sub-keys)"
    return ""


def set_dotted(mapping: dict[str, Any], key: str, value: Any) -> None:
    """Set ``mapping[a][b][c] = value`` for ``key`` ``a.b.c``, creating the intermediate mappings."""
    *parents, last = key.split(".")
    for part in parents:
        child = mapping.get(part)
        if not isinstance(child, dict):
            child = {}
            mapping[part] = child
        mapping = child
    mapping[last] = copy.deepcopy(value)


def get_dotted(mapping: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    """``(True, value)`` at dotted ``key`` of ``mapping``, or ``(False, None)`` when a part is missing."""
    value: Any = mapping
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` merged onto a copy of ``base``: mappings merge recursively, other values replace."""
    merged = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def build_run(raw: Mapping[str, Any], where: str) -> RunSpec:
    """Build a ``RunSpec`` from a merged mapping.

    Raises:
        ValueError: unknown key, missing required key, wrong type or an unsafe name; names ``where`` and the key.
    """
    raw = dict(raw)
    link = parse_winner(raw.pop("from_winner"), where) if raw.get("from_winner") is not None else None
    raw.pop("from_winner", None)
    replicate = raw.pop("replicate", None)
    run = dataclasses.replace(_build(RunSpec, raw, where, prefix=""), from_winner=link)
    if replicate is not None:
        run = dataclasses.replace(run, replicate=Replicate(arm=str(replicate["arm"]), seed=int(replicate["seed"])))
    problems = judge_problems(run.judge, run.slurm)
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems))
    try:
        run = dataclasses.replace(run, reward=with_judge_options(run.reward, run.judge))
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    if not RUN_NAME.match(run.name):
        raise ValueError(f"{where}: name {run.name!r} must match {RUN_NAME.pattern}")
    if not run.cpu_mode and not run.train_files:
        raise ValueError(f"{where}: train_files is empty")
    problems = benchmark_problems(run.eval)
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems))
    return run


RENAMED = {"train.trainer_mode": "train.trainer: v1_sync, v1_colocate_async or legacy"}
"""Run settings that were renamed, with what replaces them, so that an old matrix fails naming the new setting."""

REMOVED = {
    "train.ref_offload": "nothing replaces it: verl 0.9.1 streams every forward-only FSDP2 engine (the reference) "
    "from pinned host memory whatever ref.fsdp_config.param_offload says, so the knob did nothing; delete the key",
}
"""Run settings that were removed, with why, so that an old matrix fails saying what to do instead."""


def _build(cls: type, raw: Mapping[str, Any], where: str, prefix: str) -> Any:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: {prefix.rstrip('.') or 'entry'} must be a mapping, got {raw!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - names)
    for key in unknown:
        if prefix + key in RENAMED:
            raise ValueError(f"{where}: {prefix + key} is now {RENAMED[prefix + key]}")
        if prefix + key in REMOVED:
            raise ValueError(f"{where}: {prefix + key} was removed; {REMOVED[prefix + key]}")
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {[prefix + k for k in unknown]}; allowed: {sorted(names)}")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(
                    f"{where}: missing required key {prefix + f.name!r} (every run setting has its default in the"
                    " matrix's defaults: section)"
                )
            continue
        values[f.name] = _coerce(hints[f.name], raw[f.name], where, prefix + f.name)
    return cls(**values)


def _coerce(hint: Any, value: Any, where: str, key: str) -> Any:
    """Check ``value`` against a field's type; YAML ints are accepted for floats, nothing else is converted."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        concrete = [arg for arg in typing.get_args(hint) if arg != Auto]
        if len(concrete) != 1 or Auto not in typing.get_args(hint):
            raise TypeError(f"unsupported field type {hint!r} for {key}")
        if value == AUTO:
            return AUTO
        try:
            return _coerce(concrete[0], value, where, key)
        except ValueError:
            raise ValueError(f"{where}: {key} must be {concrete[0].__name__} or {AUTO!r}, got {value!r}") from None
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, where, key + ".")
    origin = typing.get_origin(hint)
    if origin is tuple and dataclasses.is_dataclass(typing.get_args(hint)[0]):
        if not isinstance(value, list):
            raise ValueError(f"{where}: {key} must be a list of mappings, got {value!r}")
        item = typing.get_args(hint)[0]
        return tuple(_build(item, entry, where, f"{key}[{i}].") for i, entry in enumerate(value))
    if origin is tuple:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{where}: {key} must be a list of strings, got {value!r}")
        return tuple(value)
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise ValueError(f"{where}: {key} must be a mapping with string keys, got {value!r}")
        return dict(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (int, float, str) and (not isinstance(value, hint) or isinstance(value, bool)):
        raise ValueError(f"{where}: {key} must be {hint.__name__}, got {value!r}")
    if hint is bool and not isinstance(value, bool):
        raise ValueError(f"{where}: {key} must be true or false, got {value!r}")
    if hint not in (int, float, str, bool):
        raise TypeError(f"unsupported field type {hint!r} for {key}")
    return value
