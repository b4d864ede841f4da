"""What verl 0.9.1 loads from rlif in every run: the reward entry and the prompt-sampling dataset.

verl 0.9.1 removed the ``data.sampler`` hook (docs/verl-integration.md), so rlif plugs in through config-only
extension points, named ``pkg://rlif.verl_glue.hooks`` here:

- ``reward.custom_reward_function.name=compute_score``: the verl-free router in ``rewards``.
- ``data.custom_cls.name=PolicySampledDataset``: on the training split each ``__getitem__`` ignores its index and
  draws a (source, interval) pool from the sampling policy, then a row from that pool. Validation behaves exactly
  like verl's ``RLHFDataset``. The policy and the row RNG are saved in verl's ``data.pt`` through the dataloader's
  ``state_dict`` and resume exactly (this needs ``data.dataloader_num_workers=0``, checked at construction).

Per-step reward feedback reaches the policy in one of two ways, by trainer:

- verl's V1 trainer (``trainer.use_v1=true``): a custom replay buffer, ``rlif.verl_glue.v1_feedback``, which alone
  imports verl's V1 package and TransferQueue, so this module imports without them.
- verl's legacy trainer (``trainer.use_v1=false``): ``PolicySampledDataset.on_batch_end``, which verl calls after it
  has logged and checkpointed a step (and never after a run's last step). verl ignores what it returns and its
  logger is out of reach, so the dataset appends its metrics to ``LEGACY_METRICS`` in the checkpoint directory, and
  saves its post-feedback state beside that step's checkpoint (``LEGACY_STATE``), which it loads on resume in place
  of the pre-feedback state in verl's ``data.pt``.

A verl upgrade is a port of this package (this file and v1_feedback.py; config.py for the config's names and checks;
cpu_support.py and demo_phase.py for CPU runs); tests/verl_glue pins its behaviour.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from verl.utils.dataset.rl_dataset import RLHFDataset

from rewards import compute_score
from rewards.registry import training_flags
from rlif.atomic_files import atomic_write
from samplers import Pool, Record, SamplingPolicy, build_policy
from samplers.base import row_intervals
from samplers.diagnostics import PoolSizeWatch, RewardHealth
from samplers.drawing import restore_rng, rng_state
from samplers.exposure import ExposureLedger, row_draw_metrics
from samplers.fingerprint import ON_DATA_CHANGE, SETTING

__all__ = ["PolicySampledDataset", "compute_score"]

LOG = logging.getLogger("rlif.samplers")

INTERVAL_KEY = "rlif_interval"
"""``extra_info`` key the dataset stamps on each drawn row, so the feedback hook knows the row's interval."""

EXPOSURE_KEY = "rlif_exposure"
"""``extra_info`` key the dataset stamps on each drawn row: how often the row was drawn before (0: first exposure)."""

SUCCESS_KEY = "acc"
"""The reward extra every family returns as its success indicator (``rewards.registry``), what gates read."""

ROW_KEY = "_rlif_row"
"""A column added for the overlong-prompt filter only, to see which rows it dropped."""

LEGACY_METRICS = "rlif_sampler_metrics.jsonl"
"""In legacy-trainer mode, the file in the checkpoint directory (``data.rlif_sampler.feedback_dir``) to which the
dataset appends each step's sampler and per-source metrics, as verl's file logger writes lines:
``{"step": N, "data": {...}}``."""

LEGACY_STATE = "rlif_sampler_after_feedback.pt"
"""In legacy-trainer mode, the dataset's state after step N's feedback, saved in ``global_step_N/`` beside verl's
``data.pt`` (which verl saved before the feedback)."""


def _as_list(files: Any) -> list[str]:
    if isinstance(files, str):
        return [files]
    if isinstance(files, ListConfig):
        return [str(f) for f in OmegaConf.to_container(files)]
    return [str(f) for f in files]


def _sampler_config(config: DictConfig) -> tuple[str, dict[str, Any], int, str]:
    """Read ``data.rlif_sampler.{name,params,seed,on_data_change}``; without it the uniform policy is used.

    ``params`` is JSON text (what generated scripts write: any key survives, e.g. a source ``graph/tsp``) or a
    mapping composed by Hydra (a hand-written ``+data.rlif_sampler.params.<k>=...``).

    Raises:
        ValueError: an unknown key, params that are not a JSON object or mapping, or a bad ``on_data_change``.
    """
    node = config.get("rlif_sampler", None)
    if node is None:
        return "uniform", {}, 0, "error"
    unknown = set(node.keys()) - {"name", "params", "seed", "on_data_change", "feedback_dir"}
    if unknown:
        raise ValueError(
            f"data.rlif_sampler: unknown key(s) {sorted(unknown)}; "
            "expected name, params, seed, on_data_change, feedback_dir"
        )
    params = node.get("params", None)
    if isinstance(params, str):
        try:
            params_dict = json.loads(params)
        except json.JSONDecodeError as err:
            raise ValueError(f"data.rlif_sampler.params: not JSON text ({err}): {params[:80]!r}") from None
    else:
        params_dict = OmegaConf.to_container(params, resolve=True) if params is not None else {}
    if not isinstance(params_dict, dict):
        raise ValueError(f"data.rlif_sampler.params must be a JSON object or a mapping, got {params_dict!r}")
    on_data_change = str(node.get("on_data_change", "error"))
    if on_data_change not in ON_DATA_CHANGE:
        raise ValueError(f"{SETTING} must be one of {list(ON_DATA_CHANGE)}, got {on_data_change!r}")
    return str(node.get("name", "uniform")), dict(params_dict), int(node.get("seed", 0)), on_data_change


class PolicySampledDataset(RLHFDataset):
    """verl dataset whose training rows are drawn by a sampling policy (``samplers``).

    The same class serves train and validation (verl builds both from ``data.custom_cls``); it is the training
    dataset when its files are ``data.train_files``.
    """

    def __init__(
        self,
        data_files: str | list[str],
        tokenizer: Any,
        config: DictConfig,
        processor: Any = None,
        max_samples: int = -1,
        **kwargs: Any,
    ) -> None:
        self._before_filter: list[tuple[str, Any]] | None = None
        self._kept_rows: list[int] | None = None
        super().__init__(data_files, tokenizer, config, processor=processor, max_samples=max_samples, **kwargs)
        self.is_train = _as_list(data_files) == _as_list(config.get("train_files", []))
        self.policy: SamplingPolicy | None = None
        if not self.is_train:
            return
        if int(config.get("dataloader_num_workers", 0)) != 0:
            raise ValueError(
                "PolicySampledDataset needs data.dataloader_num_workers=0: worker processes hold copies of the "
                "dataset that never see reward feedback, and prefetching makes the saved sampler state stale"
            )
        name, params, seed, self.on_data_change = _sampler_config(config)
        self.policy = build_policy(name, params, seed=seed)
        self._row_rng = random.Random(seed + 1)
        self._pools, self._row_interval = self._build_pools(self.policy)
        pool_rows = {pool: len(rows) for pool, rows in self._pools.items()}
        self.policy.set_pools(pool_rows)
        self._row_sources = list(self.dataframe.select_columns(["data_source"])["data_source"])
        self._row_draws = [0] * len(self._row_sources)
        response_cap = config.get("max_response_length", None)
        self._response_cap = int(response_cap) if response_cap else None
        self._exposure = ExposureLedger(self.policy.group_of(), self._overlong_dropped(self.policy))
        self._pool_watch = PoolSizeWatch(pool_rows, int(config.get("train_batch_size", 1)))
        self._pool_watch.check(self.policy.probabilities())
        self._reward_health = RewardHealth()
        self._batch_size = int(config.get("train_batch_size", 1))
        self._draws = 0
        node = config.get("rlif_sampler", None)
        feedback_dir = node.get("feedback_dir", None) if node is not None else None
        self._feedback_dir = Path(str(feedback_dir)) if feedback_dir else None

    def maybe_filter_out_long_prompts(self, dataframe: Any = None) -> Any:
        """verl's overlong-prompt filter, remembering which rows it dropped (``exposure/overlong_dropped``)."""
        if not self.filter_overlong_prompts or dataframe is None:
            return super().maybe_filter_out_long_prompts(dataframe)
        columns = dataframe.select_columns(["data_source", "extra_info"])
        self._before_filter = list(zip(columns["data_source"], columns["extra_info"], strict=True))
        kept = super().maybe_filter_out_long_prompts(dataframe.add_column(ROW_KEY, list(range(len(dataframe)))))
        self._kept_rows = [int(row) for row in kept[ROW_KEY]]
        return kept.remove_columns(ROW_KEY)

    def _overlong_dropped(self, policy: SamplingPolicy) -> dict[Pool, int]:
        """Rows dropped as overlong prompts per pool, logged once. A dropped row of a split source is counted in
        the kept interval its function went to, else the first interval whose difficulty range reaches it."""
        if self._before_filter is None or self._kept_rows is None:
            return {}
        kept = set(self._kept_rows)
        dropped_rows = [self._before_filter[row] for row in range(len(self._before_filter)) if row not in kept]
        if not dropped_rows:
            return {}
        function_interval: dict[tuple[str, str], int] = {}
        if policy.function_field:
            extras = self.dataframe.select_columns(["data_source", "extra_info"])
            for row, (source, extra) in enumerate(zip(extras["data_source"], extras["extra_info"], strict=True)):
                function = (extra or {}).get(policy.function_field)
                if function is not None:
                    function_interval[(source, str(function))] = self._row_interval[row]
        ranges = policy.fingerprint()
        counts: dict[Pool, int] = defaultdict(int)
        for source, raw_extra in dropped_rows:
            extra = raw_extra or {}
            interval = 0
            function = extra.get(policy.function_field) if policy.function_field else None
            if (source, str(function)) in function_interval:
                interval = function_interval[(source, str(function))]
            elif policy.splits(source) and source in ranges and extra.get(policy.difficulty_field) is not None:
                value = float(extra[policy.difficulty_field])
                spans = ranges[source]["intervals"]
                interval = next((int(i) for i, _n, _lo, hi in spans if value <= hi), int(spans[-1][0]))
            counts[(source, interval)] += 1
        LOG.warning(
            "data.filter_overlong_prompts dropped %d of %d training rows (prompt longer than data.max_prompt_length): "
            "%s",
            len(dropped_rows),
            len(self._before_filter),
            ", ".join(f"{source} interval {interval}: {n}" for (source, interval), n in sorted(counts.items())),
        )
        return dict(counts)

    def _build_pools(self, policy: SamplingPolicy) -> tuple[dict[Pool, list[int]], list[int]]:
        """Group row indices by (data_source, interval); intervals come from the policy and, for the sources it
        splits, ``extra_info.<policy.difficulty_field>`` (``difficulty``, or the graph builder's ``level``), with
        each ``extra_info.<policy.function_field>`` (LogicIF's ``task_id``) kept in one interval."""
        columns = self.dataframe.select_columns(["data_source", "extra_info"])
        sources = list(columns["data_source"])
        files = ", ".join(_as_list(self.original_data_files))
        row_interval = row_intervals(policy, sources, list(columns["extra_info"]), files)
        rows_by_source: dict[str, list[int]] = defaultdict(list)
        for row, source in enumerate(sources):
            rows_by_source[source].append(row)
        pools: dict[Pool, list[int]] = defaultdict(list)
        for source, rows in sorted(rows_by_source.items()):
            for row in rows:
                pools[(source, row_interval[row])].append(row)
        return dict(pools), row_interval

    def __getitem__(self, item: int) -> dict[str, Any]:
        if self.policy is None:
            return super().__getitem__(item)
        pool = self.policy.draw()
        self._draws += 1
        rows = self._pools[pool]
        row = rows[self._row_rng.randrange(len(rows))]
        row_dict = super().__getitem__(row)
        row_dict["extra_info"] = {**row_dict["extra_info"], INTERVAL_KEY: pool[1], EXPOSURE_KEY: self._row_draws[row]}
        self._row_draws[row] += 1
        return row_dict

    def feedback(self, records: Sequence[Record]) -> dict[str, float]:
        """Give one step's scored responses to the policy; return the step's sampler and per-source metrics."""
        if self.policy is None:
            raise RuntimeError("feedback() called on the validation dataset")
        if self._response_cap is not None:
            cap = self._response_cap
            records = [
                dataclasses.replace(record, truncated=record.response_tokens >= cap)
                if record.truncated is None and record.response_tokens is not None
                else record
                for record in records
            ]
        metrics = per_source_reward_metrics(records)
        metrics.update(self._reward_health.observe(records))
        metrics.update(self.policy.update(records))
        metrics.update(self._exposure.observe(records))
        metrics.update(
            row_draw_metrics(
                self._row_draws, [(s, i) for s, i in zip(self._row_sources, self._row_interval, strict=True)]
            )
        )
        self._pool_watch.check(self.policy.probabilities())
        return metrics

    def on_batch_end(self, batch: Any) -> None:
        """Legacy-trainer feedback: give the step verl just trained to the policy, log its metrics, save the state.

        verl 0.9.1's legacy trainer calls this after it logged and checkpointed the step and before it draws the
        next batch, ignores the return value, and skips the call after a run's last step. The step is the one whose
        rows were drawn last (``draws / train_batch_size``): the dataset sees no step counter.

        Raises:
            RuntimeError: no ``data.rlif_sampler.feedback_dir`` (a run not generated with ``train.trainer: legacy``:
                its metrics and resume state would have nowhere to go).
        """
        if self.policy is None:
            return
        if self._feedback_dir is None:
            raise RuntimeError(
                "PolicySampledDataset.on_batch_end (verl's legacy trainer) needs data.rlif_sampler.feedback_dir, "
                "which runs with train.trainer: legacy set to the checkpoint directory"
            )
        step = -(-self._draws // self._batch_size)
        records, flags = batch_records(batch)
        metrics = self.feedback(records)
        metrics.update(flags)
        self._feedback_dir.mkdir(parents=True, exist_ok=True)
        with open(self._feedback_dir / LEGACY_METRICS, "a", encoding="utf-8") as log:
            log.write(json.dumps({"step": step, "data": metrics}) + "\n")
        step_dir = self._feedback_dir / f"global_step_{step}"
        if (step_dir / "data.pt").is_file():
            import torch

            state = self.state_dict()
            atomic_write(step_dir / LEGACY_STATE, lambda path: torch.save(state, path))

    def state_dict(self) -> dict[str, Any]:
        """Policy state with the data fingerprint, the row RNG and the rows drawn; ``StatefulDataLoader`` stores it
        in verl's ``data.pt``."""
        if self.policy is None:
            return {}
        return {
            "policy": self.policy.checkpoint(),
            "row_rng": rng_state(self._row_rng),
            "draws": self._draws,
            "row_draws": list(self._row_draws),
            "exposure": self._exposure.state(),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned (verl calls this when it resumes from a checkpoint).

        In legacy-trainer mode the state saved after that step's feedback (``LEGACY_STATE``) replaces verl's
        pre-feedback one, so the next draws are those of a run that never stopped.

        Raises:
            ValueError: the training data changed since the save and ``data.rlif_sampler.on_data_change`` is
                ``error`` (the message names each changed source and what changed).
        """
        if self.policy is None or not state:
            return
        if self._feedback_dir is not None:
            state = self._after_feedback(state)
        changes = self.policy.restore(state["policy"], self.on_data_change)
        for change in changes:
            LOG.warning("resumed onto changed data (%s=resplit): %s", SETTING, change)
        restore_rng(self._row_rng, state["row_rng"])
        self._draws = int(state.get("draws", 0))
        row_draws = state.get("row_draws")
        if row_draws is not None and len(row_draws) == len(self._row_draws) and not changes:
            self._row_draws = [int(n) for n in row_draws]
            self._exposure.load(state.get("exposure", {}))
        else:
            LOG.warning(
                "sampler state has no per-row draw counts for these rows (saved before exposure accounting, or onto "
                "changed data): exposure counts and first-exposure flags restart from this resume"
            )

    def _after_feedback(self, state: Mapping[str, Any]) -> Mapping[str, Any]:
        """The legacy-mode post-feedback state of the checkpoint's step if it was saved, else ``state``."""
        step = -(-int(state.get("draws", 0)) // self._batch_size)
        saved = self._feedback_dir / f"global_step_{step}" / LEGACY_STATE
        if not saved.is_file():
            LOG.warning(
                "no %s for step %d: verl's legacy trainer gives no feedback after a run's last step, so the policy "
                "resumes without that step's rewards",
                saved,
                step,
            )
            return state
        import torch

        after = torch.load(saved, weights_only=False)
        if int(after.get("draws", -1)) != int(state.get("draws", 0)):
            raise ValueError(f"{saved}: saved after {after.get('draws')} draws, the checkpoint after {state['draws']}")
        return after


def reward_flag_metrics(sources: Sequence[str], extra_fields: Sequence[Any]) -> dict[str, float]:
    """``train/<source>/<flag>``: the rate of each family's ``training_flags`` per source over one step's responses
    (verl logs reward extras only in validation).

    Args:
        sources: each response's ``data_source``.
        extra_fields: each response's TransferQueue ``extra_fields`` (holding the reward's ``reward_extra_info``).

    Returns:
        One rate per (source, flag) among responses whose reward returned the flag (None means not applicable).
    """
    counts: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for source, extra in zip(sources, extra_fields, strict=True):
        fields = _plain(extra)
        info = fields.get("reward_extra_info", {}) if isinstance(fields, Mapping) else {}
        for flag in training_flags():
            value = info.get(flag) if isinstance(info, Mapping) else None
            if value is None:
                continue
            entry = counts[(source, flag)]
            entry[0] += float(value)
            entry[1] += 1.0
    return {f"train/{source}/{flag}": total / n for (source, flag), (total, n) in sorted(counts.items())}


def per_source_reward_metrics(records: Sequence[Record]) -> dict[str, float]:
    """``train/<source>/reward_mean`` and ``train/<source>/count`` for one step (verl logs no per-source curve)."""
    totals: dict[str, list[float]] = defaultdict(list)
    for record in records:
        totals[record.source].append(record.reward)
    metrics: dict[str, float] = {}
    for source, rewards in sorted(totals.items()):
        metrics[f"train/{source}/reward_mean"] = sum(rewards) / len(rewards)
        metrics[f"train/{source}/count"] = float(len(rewards))
    return metrics


def batch_records(batch: Any) -> tuple[list[Record], dict[str, float]]:
    """Records and reward-flag rates (``reward_flag_metrics``) of one trained legacy-trainer batch (a ``DataProto``).

    Each response's score is its token-level scores summed (verl places the reward on the last response token); its
    success is the reward extra ``acc`` (verl's legacy trainer puts reward extras in ``non_tensor_batch``); its
    length is the response part of ``attention_mask`` (the last ``responses.shape[1]`` columns), and it is truncated
    when that length reaches the padded width, which is ``data.max_response_length``.
    Rows are matched by position within the batch, so verl's reordering (``trainer.balance_batch``) is harmless;
    the GRPO group is the row's ``uid``.
    """
    non_tensor = batch.non_tensor_batch
    scores = batch.batch["token_level_scores"].sum(-1).tolist()
    sources = [str(_plain(source)) for source in non_tensor["data_source"]]
    extras = [_plain(extra) or {} for extra in non_tensor["extra_info"]]
    uids = [str(uid) for uid in non_tensor.get("uid", [""] * len(sources))]
    successes = [_number(_plain(value)) for value in non_tensor[SUCCESS_KEY]] if SUCCESS_KEY in non_tensor else None
    lengths: list[int | None] = [None] * len(sources)
    cap = None
    tensors = set(batch.batch.keys())
    if {"responses", "attention_mask"} <= tensors:
        cap = int(batch.batch["responses"].shape[-1])
        lengths = [int(n) for n in batch.batch["attention_mask"][:, -cap:].sum(-1).tolist()]
    records = [
        Record(
            source=source,
            interval=int(extra.get(INTERVAL_KEY, 0)),
            reward=float(score),
            group=uid,
            item_id=str(extra.get("item_id", "")),
            success=None if successes is None else successes[i],
            exposure=None if extra.get(EXPOSURE_KEY) is None else int(extra[EXPOSURE_KEY]),
            response_tokens=lengths[i],
            truncated=None if cap is None or lengths[i] is None else lengths[i] >= cap,
        )
        for i, (source, extra, score, uid) in enumerate(zip(sources, extras, scores, uids, strict=True))
    ]
    flags = [
        {"reward_extra_info": {flag: _plain(non_tensor[flag][i]) for flag in training_flags() if flag in non_tensor}}
        for i in range(len(sources))
    ]
    return records, reward_flag_metrics(sources, flags)


def _number(value: Any) -> float | None:
    """A reward extra as a float; None for a missing or non-numeric value (a family that returned none)."""
    if value is None or isinstance(value, str):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _plain(value: Any) -> Any:
    """Unwrap TensorDict's NonTensorData to the Python value it holds."""
    return getattr(value, "data", value)
