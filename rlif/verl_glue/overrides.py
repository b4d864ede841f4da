"""Map a run spec to the verl 0.9.1 Hydra overrides of its ``main_ppo`` call.

The overrides are what makes one run differ from another: model, data, lengths, batch sizes, optimiser, parallelism,
sampler and reward options, schedule. What every rlif run shares (the hooks, GRPO, fp32 master weights, the rollout
engine) is rlif's trainer config, ``trainer_config/rlif_trainer.yaml``, which the overrides are applied to.

Every key here exists in that config, except the ``+`` keys that rlif reads itself (``PLUS_KEYS``); ``checks``
rejects any other ``+`` key, since verl silently ignores unknown added keys.

Values that are only known on the cluster (repository root, model path, data files) and the sampler's parameters
are written as bash variables (``SHELL_VARS``); the script defines them and the verl check substitutes
placeholders (``runtime_values``).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewards import reward_options
from rlif.runs.spec import RunSpec
from rlif.verl_glue.buffer_options import (
    DROP_TIED_GROUPS_KEY,
    MAX_RESPONSE_KEY,
    OVERLONG_BUFFER_KEY,
    OVERLONG_KEY,
    OVERLONG_PENALTY_KEY,
)

TRAINERS: dict[str, tuple[tuple[str, str], ...]] = {
    "v1_sync": (
        ("trainer.v1.sampler.custom_sampler.name", "RewardFeedbackReplayBuffer"),
        ("trainer.v1.trainer_mode", "sync"),
    ),
    "v1_colocate_async": (
        ("trainer.v1.sampler.custom_sampler.name", "AsyncRewardFeedbackReplayBuffer"),
        ("trainer.v1.trainer_mode", "colocate_async"),
    ),
    "legacy": (("trainer.use_v1", "false"),),
}
"""verl's keys for each ``train.trainer``: the V1 trainer mode with rlif's feedback replay buffer for it
(``rlif.verl_glue.v1_feedback``; the trainer config sets ``trainer.use_v1=true`` by verl's default), or verl's
legacy trainer, where the dataset's ``on_batch_end`` gives the feedback and writes to ``data.rlif_sampler.feedback_dir``
(the checkpoint directory). The only place rlif's trainer names meet verl's keys."""

REWARD_KWARGS = frozenset(reward_options())
"""Reward options rlif's ``compute_score`` accepts (``+reward.custom_reward_function.reward_kwargs.<k>``): the
options the reward families declare."""

PLUS_KEYS = (
    re.compile(r"^data\.apply_chat_template_kwargs\.[A-Za-z_]\w*$"),
    re.compile(r"^reward\.custom_reward_function\.reward_kwargs\.(" + "|".join(sorted(REWARD_KWARGS)) + r")$"),
    re.compile(r"^data\.rlif_sampler\.(name|params|seed|on_data_change|feedback_dir)$"),
    re.compile(
        r"^trainer\.v1\.sampler\.sampler_kwargs\.rlif_(drop_tied_groups|overlong|overlong_buffer|overlong_penalty"
        r"|max_response_length)$"
    ),
)
"""The only ``+`` (added) keys a run may carry: chat-template kwargs, rlif's reward options, sampler and replay-buffer
options."""


REPLICATE_SEED_KEYS = (
    "data.seed",
    "actor_rollout_ref.rollout.seed",
    "actor_rollout_ref.actor.data_loader_seed",
)
"""verl 0.9.1's seeds that a replicate's seed sets, beside the sampler's (``data.rlif_sampler.seed``): the training
dataloader's shuffle generator (``trainer/ppo/utils.py`` ``create_rl_sampler``; rlif's dataset draws its own rows,
so this touches only verl's index order and ``train_max_samples`` subsetting), vLLM's engine seed (``replica_rank +
seed``, ``vllm_async_server.py``: the rollout sampling) and the actor's mini-batch shuffle
(``trainer_base.py`` ``update_actor``). The FSDP engine seed (``actor.fsdp_config.seed``) is left at 42: it seeds
no sampling in full fine-tuning."""

CPU_PLUS_KEYS = (
    re.compile(r"^actor_rollout_ref\.model\.override_config\.[A-Za-z_]\w*$"),
    re.compile(r"^actor_rollout_ref\.rollout\.enable_sleep_mode$"),
)
"""Added keys that ``rlif.verl_glue.cpu_support overrides`` uses; accepted only for CPU-mode runs."""

LEGACY_PREFIXES = {
    "custom_reward_function.": "reward.custom_reward_function.",
    "reward_model.": "reward.reward_manager. / reward.reward_model.",
}
"""Top-level reward keys verl 0.9.1 still composes but ignores (#6710), with their replacements."""

SHELL_VARS = ("RLIF_ROOT", "MODEL_PATH", "TRAIN_FILES", "VAL_FILES", "CKPT_DIR", "SAMPLER_PARAMS")
"""Bash variables an override value may reference; the generated script and its launcher set each one."""

_KEY = re.compile(r"^\+?[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$")
_SEGMENT = re.compile(r"^[A-Za-z_][\w-]*$")


@dataclass(frozen=True)
class Override:
    """One Hydra override ``[+]key=value``.

    Attributes:
        key: dotted config key without the ``+``.
        value: the Hydra value text; may reference the bash variables of ``SHELL_VARS`` as ``${NAME}``.
        plus: True for an added key (``+key=value``).
    """

    key: str
    value: str
    plus: bool = False

    @property
    def text(self) -> str:
        """The override as Hydra reads it."""
        return f"{'+' if self.plus else ''}{self.key}={self.value}"

    @property
    def uses_shell(self) -> bool:
        """True when the value references a bash variable and so must be double-quoted in the script."""
        return "${" in self.value

    def bash_word(self) -> str:
        """The override as one bash word: double-quoted when it expands a variable, else single-quoted."""
        if self.uses_shell:
            return '"' + self.text + '"'
        return shlex.quote(self.text)


def parse_override(text: str) -> Override:
    """Parse ``[+]key=value``.

    Raises:
        ValueError: no ``=``, a malformed key, or ``++``/``~`` forms (not used by recipes).
    """
    key, sep, value = text.partition("=")
    if not sep or not _KEY.match(key):
        raise ValueError(f"malformed override {text!r}: expected [+]dotted.key=value")
    plus = key.startswith("+")
    return Override(key=key.removeprefix("+"), value=value, plus=plus)


def hydra_value(value: Any) -> str:
    """Format a Python value as Hydra override text.

    Raises:
        ValueError: a type Hydra overrides cannot carry, or a string that would need quoting.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        # verl's yaml has int defaults for some float knobs (entropy_coeff: 0); an integral float written as an
        # int satisfies both int and float defaults in the type check.
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        if not re.fullmatch(r"[\w./:@-]+", value):
            raise ValueError(f"string value {value!r} needs quoting; use letters, digits and ._/:@- only")
        return value
    if isinstance(value, list | tuple):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        bad = [key for key in value if not (isinstance(key, str) and _SEGMENT.match(key))]
        if bad:
            raise ValueError(f"mapping keys {bad!r} cannot be Hydra dict keys; use letters, digits, _ and -")
        return "{" + ",".join(f"{key}:{hydra_value(item)}" for key, item in value.items()) + "}"
    raise ValueError(f"cannot express {value!r} ({type(value).__name__}) as a Hydra override value")


def json_text(mapping: Mapping[str, Any]) -> str:
    """A mapping as one line of JSON text that bash single quotes and a Hydra quoted string carry unchanged.

    Hydra's key grammar has no quoting, so a key such as the source ``graph/tsp`` cannot be a dotted override
    segment; as JSON text (read back with ``json.loads``) any key and value survives. ``$`` and ``'`` are written as
    JSON's ``\\u`` escapes (valid only inside JSON strings, where they can only occur), so neither a quote nor
    OmegaConf interpolation can end or change the text.

    Raises:
        ValueError: a value JSON cannot carry (names the value).
    """
    try:
        text = json.dumps(mapping, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"cannot write {mapping!r} as JSON: {err}") from None
    return text.replace("$", "\\u0024").replace("'", "\\u0027")


def file_list(variable: str) -> str:
    """Hydra value for a file list held in a bash variable (already a Hydra list text)."""
    return "${" + variable + "}"


def hydra_files(paths: tuple[str, ...], root: str) -> str:
    """Hydra list of repository-relative paths made absolute under ``root``, as the launcher's ``data_files``
    builds it."""
    return "[" + ",".join(f"{root}/{path}" for path in paths) + "]"


def build_overrides(run: RunSpec) -> list[Override]:
    """Every override of ``run``'s ``main_ppo`` call, in a stable, readable order.

    Raises:
        ValueError: a reward or sampler value that cannot be written as an override, or a setting left to the
            planner that it cannot choose (unknown model, a CPU-mode run).
    """
    from rlif.runs.choices import resolved_run
    from rlif.runs.memory import token_budgets
    from rlif.runs.planner import run_save_freq

    run = resolved_run(run)  # the planner's vLLM share, actor offload and SP where the matrix says auto
    t = run.train
    actor_budget, log_prob_budget, ref_budget = token_budgets(run)
    longest = t.max_prompt_length + t.max_response_length
    sampling = run.val_sampling
    sampler_params = []  # the uniform policy takes none: no override
    if run.sampler.params:
        json_text(run.sampler.params)  # a value JSON cannot carry fails here, named
        # the JSON text is the script's SAMPLER_PARAMS, passed as one quoted Hydra string
        sampler_params = [Override("data.rlif_sampler.params", "'${SAMPLER_PARAMS}'", plus=True)]
    ov: list[tuple[str, Any] | Override] = [
        # data
        Override("data.train_files", file_list("TRAIN_FILES")),
        Override("data.val_files", file_list("VAL_FILES")),
        ("data.train_batch_size", t.train_batch_size),
        ("data.max_prompt_length", t.max_prompt_length),
        ("data.max_response_length", t.max_response_length),
        Override("data.apply_chat_template_kwargs.enable_thinking", hydra_value(run.think), plus=True),
        Override("data.rlif_sampler.name", hydra_value(run.sampler.name), plus=True),
        Override("data.rlif_sampler.seed", hydra_value(run.sampler.seed), plus=True),
        Override("data.rlif_sampler.on_data_change", hydra_value(run.sampler.on_data_change), plus=True),
        *sampler_params,
        # model and actor
        Override("actor_rollout_ref.model.path", "${MODEL_PATH}"),
        ("actor_rollout_ref.model.enable_gradient_checkpointing", t.gradient_checkpointing),
        ("actor_rollout_ref.model.use_fused_kernels", t.fused_kernels),
    ]
    if t.lora_rank > 0:
        ov += [
            ("actor_rollout_ref.model.lora_rank", t.lora_rank),
            ("actor_rollout_ref.model.lora_alpha", t.lora_alpha),
            ("actor_rollout_ref.model.target_modules", "all-linear"),
        ]
    ov += [
        ("actor_rollout_ref.actor.optim.lr", t.lr),
        ("actor_rollout_ref.actor.ppo_mini_batch_size", t.ppo_mini_batch_size),
        ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", t.micro_batch_per_gpu),
        ("actor_rollout_ref.actor.use_dynamic_bsz", t.dynamic_batch),
        ("actor_rollout_ref.actor.ppo_max_token_len_per_gpu", actor_budget),
        ("actor_rollout_ref.actor.use_kl_loss", t.use_kl_loss),
        ("actor_rollout_ref.actor.kl_loss_coef", t.kl_loss_coef),
        ("actor_rollout_ref.actor.kl_loss_type", t.kl_loss_type),
        ("actor_rollout_ref.actor.entropy_coeff", t.entropy_coeff),
        ("actor_rollout_ref.actor.ulysses_sequence_parallel_size", t.sequence_parallel),
        ("actor_rollout_ref.actor.entropy_from_logits_with_chunking", t.entropy_chunking),
        ("actor_rollout_ref.actor.fsdp_config.param_offload", t.actor_offload),
        # rollout
        ("actor_rollout_ref.rollout.n", t.rollout_n),
        ("actor_rollout_ref.rollout.temperature", t.temperature),
        ("actor_rollout_ref.rollout.tensor_model_parallel_size", t.rollout_tp),
        ("actor_rollout_ref.rollout.gpu_memory_utilization", t.gpu_memory_utilization),
        ("actor_rollout_ref.rollout.max_num_batched_tokens", max(8192, t.max_prompt_length + t.max_response_length)),
        ("actor_rollout_ref.rollout.max_model_len", longest),
        ("actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu", t.log_prob_micro_batch_per_gpu),
        ("actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu", log_prob_budget),
        # merged into the node (do_sample stays the trainer config's)
        (
            "actor_rollout_ref.rollout.val_kwargs",
            {
                "temperature": sampling.temperature,
                "top_p": sampling.top_p,
                "top_k": sampling.top_k,
                "n": run.validation.n,
            },
        ),
        # reference
        ("actor_rollout_ref.ref.log_prob_max_token_len_per_gpu", ref_budget),
        # reward
        ("reward.reward_manager.name", run.reward.manager),
        ("reward.num_workers", run.reward.num_workers),
        *[
            Override(f"reward.custom_reward_function.reward_kwargs.{k}", hydra_value(v), plus=True)
            for k, v in run.reward.kwargs.items()
        ],
        # which verl trainer, and how the per-step feedback reaches the sampling policy
        *trainer_overrides(t.trainer),
        *drop_tied_groups_overrides(t.drop_tied_groups),
        *overlong_overrides(run),
        *replicate_overrides(run),
        # trainer
        ("trainer.logger", list(t.logger)),
        ("trainer.project_name", run.project),
        ("trainer.experiment_name", run.name),
        ("trainer.nnodes", run.slurm.nodes),
        # the judge server's GPUs (judge.gpus) are the node's first ones; training has the rest
        ("trainer.n_gpus_per_node", run.slurm.gpus_per_node - run.judge.gpus),
        ("trainer.total_epochs", t.total_epochs),
        # null: verl trains steps_per_epoch x total_epochs, so the run ends on its last-step save and validation
        ("trainer.total_training_steps", t.total_training_steps or None),
        # 0 in the matrix: the planner's interval, so that a requeue redoes at most train.max_lost_hours
        ("trainer.save_freq", run_save_freq(run)),
        # verl deletes older checkpoints of the same job attempt beyond this many (null: keeps all)
        ("trainer.max_actor_ckpt_to_keep", t.max_ckpt_to_keep or None),
        ("trainer.test_freq", t.test_freq),
        ("trainer.val_before_train", t.val_before_train),
        Override("trainer.default_local_dir", "${CKPT_DIR}"),
    ]
    result = [item if isinstance(item, Override) else Override(item[0], hydra_value(item[1])) for item in ov]
    result.extend(parse_override(text) for text in run.extra_overrides)
    return result


def trainer_overrides(trainer: str) -> list[Override]:
    """verl's keys for ``train.trainer`` (``TRAINERS``); in legacy mode also where the dataset writes its metrics
    and post-feedback state (the checkpoint directory).

    Raises:
        ValueError: a trainer not in ``TRAINERS``.
    """
    if trainer not in TRAINERS:
        raise ValueError(f"train.trainer {trainer!r} is not one of {sorted(TRAINERS)}")
    overrides = [Override(key, value) for key, value in TRAINERS[trainer]]
    if trainer == "legacy":
        overrides.append(Override("data.rlif_sampler.feedback_dir", "${CKPT_DIR}", plus=True))
    return overrides


def drop_tied_groups_overrides(enabled: bool) -> list[Override]:
    """rlif's dynamic sampling (``train.drop_tied_groups``): the replay buffer's switch, and dataloader fetches of
    one prompt so that a dropped prompt is replaced exactly (verl forces this only for its own group filter)."""
    if not enabled:
        return []
    return [
        Override(f"trainer.v1.sampler.sampler_kwargs.{DROP_TIED_GROUPS_KEY}", "true", plus=True),
        Override("data.gen_batch_size", "1"),
    ]


def overlong_overrides(run: RunSpec) -> list[Override]:
    """The replay buffer's overlong handling (``train.overlong``); nothing for ``none`` or the legacy trainer
    (which the checks refuse with any other mode)."""
    t = run.train
    if t.overlong == "none" or t.trainer == "legacy":
        return []
    prefix = "trainer.v1.sampler.sampler_kwargs."
    out = [
        Override(prefix + OVERLONG_KEY, hydra_value(t.overlong), plus=True),
        Override(prefix + MAX_RESPONSE_KEY, hydra_value(t.max_response_length), plus=True),
    ]
    if t.overlong == "soft_punish":
        out += [
            Override(prefix + OVERLONG_BUFFER_KEY, hydra_value(t.overlong_buffer_tokens), plus=True),
            Override(prefix + OVERLONG_PENALTY_KEY, hydra_value(t.overlong_penalty), plus=True),
        ]
    return out


def replicate_overrides(run: RunSpec) -> list[Override]:
    """A replicate's seed in verl's seed keys (``REPLICATE_SEED_KEYS``); nothing for a run without ``seeds``."""
    if run.replicate is None:
        return []
    return [Override(key, hydra_value(run.replicate.seed)) for key in REPLICATE_SEED_KEYS]


def all_overrides(run: RunSpec) -> list[Override]:
    """``build_overrides`` plus, for a CPU-mode run, the overrides ``rlif.verl_glue.cpu_support`` adds at run time.

    The GPU path never imports the CPU support: it is imported here only for CPU-mode runs, so that the composed
    check sees exactly what the CPU script passes to verl.
    """
    overrides = build_overrides(run)
    if run.cpu_mode:
        from rlif.verl_glue.cpu_support import cpu_overrides

        overrides.extend(parse_override(text) for text in cpu_overrides())
    return overrides


def runtime_values(run: RunSpec, root: str, model: str | None = None) -> dict[str, str]:
    """Placeholder values of the bash variables, for composing a run's config off the cluster.

    Args:
        run: the run.
        root: stand-in for the repository root.
        model: stand-in model path (CPU mode: the tiny model is only made at run time).

    Returns:
        ``{variable: value}`` for every name in ``SHELL_VARS``.
    """
    return {
        "RLIF_ROOT": root,
        "MODEL_PATH": model or run.model,
        "TRAIN_FILES": hydra_files(run.train_files or ("cpu_demo/train.parquet",), root),
        "VAL_FILES": hydra_files(run.val_files or ("cpu_demo/val.parquet",), root),
        "CKPT_DIR": f"{root}/checkpoints/{run.project}/{run.name}",
        "SAMPLER_PARAMS": json_text(run.sampler.params),
    }


def substitute(override: Override, values: Mapping[str, str]) -> str:
    """The override text with ``${NAME}`` references replaced by ``values``.

    Raises:
        ValueError: a referenced variable that is not in ``values``.
    """

    def repl(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise ValueError(f"override {override.text!r} references unknown variable ${{{name}}}")
        return values[name]

    return re.sub(r"\$\{(\w+)\}", repl, override.text)


def override_problems(overrides: Sequence[Override], cpu_mode: bool) -> list[tuple[str, str]]:
    """What verl composes without complaint and then ignores: unknown added keys, legacy reward keys, a key set twice,
    dataloader workers with rlif's dataset, verl's own group filter.

    Args:
        overrides: all of a run's overrides (the CPU overrides included for a CPU-mode run).
        cpu_mode: the run appends the CPU overrides, which repeat keys on purpose (Hydra lets the last one win).

    Returns:
        ``(key, message)`` for each problem.
    """
    problems: list[tuple[str, str]] = []
    allowed_plus = PLUS_KEYS + (CPU_PLUS_KEYS if cpu_mode else ())
    for o in overrides:
        if o.plus and not any(p.match(o.key) for p in allowed_plus):
            hint = ""
            if o.key.startswith("reward.custom_reward_function.reward_kwargs."):
                hint = f"; rlif reward options are {sorted(REWARD_KWARGS)}"
            problems.append(("+" + o.key, f"unknown added key: verl would silently ignore it{hint}"))
        for legacy, modern in LEGACY_PREFIXES.items():
            if o.key.startswith(legacy):
                problems.append((o.key, f"legacy reward key ignored by verl 0.9.1; use {modern}"))
    if not cpu_mode:
        counts = Counter(o.key for o in overrides)
        problems += [
            (key, "set more than once; change the matrix knob instead of adding an override")
            for key, n in counts.items()
            if n > 1
        ]
    last = {o.key: o.value for o in overrides}
    if last.get("trainer.use_v1") == "false":
        problems += [
            (key, "verl's legacy trainer (train.trainer: legacy) ignores trainer.v1.* keys")
            for key in last
            if key.startswith("trainer.v1.")
        ]
    if last.get("algorithm.filter_groups.enable", "false").lower() == "true":
        problems.append(
            (
                "algorithm.filter_groups.enable",
                "verl 0.9.1's V1 trainer skips its group filter when a custom replay buffer is set, and rlif always "
                "sets one, so no group would be dropped; use rlif's setting train.drop_tied_groups: true (rlif's "
                "replay buffer drops the tied groups and still shows their rewards to the sampler)",
            )
        )
    # rlif's trainer config sets PolicySampledDataset and 0 workers: only an extra override can change either
    dataset = last.get("data.custom_cls.name", "PolicySampledDataset")
    if dataset == "PolicySampledDataset" and last.get("data.dataloader_num_workers", "0") != "0":
        problems.append(
            (
                "data.dataloader_num_workers",
                "must be 0 with PolicySampledDataset (worker processes prefetch stale draws and never see feedback)",
            )
        )
    return problems


def world_size(overrides: Sequence[Override]) -> tuple[int, int]:
    """Nodes and GPUs per node the overrides give verl (the last value of a key wins, as in Hydra).

    Raises:
        ValueError: either is missing or not an integer.
    """
    last = {o.key: o.value for o in overrides}
    try:
        return int(last["trainer.nnodes"]), int(last["trainer.n_gpus_per_node"])
    except (KeyError, ValueError):
        raise ValueError("trainer.nnodes and trainer.n_gpus_per_node must be integers") from None
