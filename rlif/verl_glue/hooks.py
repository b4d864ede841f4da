"""Everything verl 0.9.1 loads from rlif, in one module: reward entry, prompt-sampling dataset, feedback hook.

verl 0.9.1 removed the ``data.sampler`` hook (docs/verl-integration.md), so rlif plugs in through three config-only
extension points, all named ``pkg://rlif.verl_glue.hooks``:

- ``reward.custom_reward_function.name=compute_score``: the verl-free router in ``rewards``.
- ``data.custom_cls.name=PolicySampledDataset``: on the training split each ``__getitem__`` ignores its index and
  draws a (source, interval) pool from the sampling policy, then a row from that pool. Validation behaves exactly
  like verl's ``RLHFDataset``. The policy and the row RNG are saved in verl's ``data.pt`` through the dataloader's
  ``state_dict`` and resume exactly (this needs ``data.dataloader_num_workers=0``, checked at construction).
- ``trainer.v1.sampler.custom_sampler.name=RewardFeedbackReplayBuffer`` (``AsyncRewardFeedbackReplayBuffer`` in
  verl's ``colocate_async`` trainer mode): verl calls its ``sample`` once per training step after rollouts and
  rewards and before the update; it reads each sampled trajectory's source, interval and score from TransferQueue,
  feeds them to the policy, and returns ``sampler/*`` and per-source reward metrics, which verl merges into the
  step's log. In ``colocate_async`` mode the prompts of about ``num_warmup_batches`` batches are already in flight
  when feedback arrives, so a draw sees the rewards of the batch trained one to two steps earlier, and verl's async
  buffer keeps evicting groups older than ``max_off_policy_threshold`` steps.

A verl upgrade is a port of this package (this file; config.py for the config's names and checks; cpu_support.py
and demo_phase.py for CPU runs); tests/verl_glue pins its behaviour.
"""

from __future__ import annotations

import json
import logging
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer, ReplayBufferAsync
from verl.utils.dataset.rl_dataset import RLHFDataset

from rewards import compute_score
from rewards.registry import training_flags
from samplers import Pool, Record, SamplingPolicy, build_policy
from samplers.diagnostics import PoolSizeWatch, RewardHealth
from samplers.drawing import restore_rng, rng_state
from samplers.fingerprint import ON_DATA_CHANGE, SETTING

__all__ = ["AsyncRewardFeedbackReplayBuffer", "PolicySampledDataset", "RewardFeedbackReplayBuffer", "compute_score"]

LOG = logging.getLogger("rlif.samplers")

INTERVAL_KEY = "rlif_interval"
"""``extra_info`` key the dataset stamps on each drawn row, so the feedback hook knows the row's interval."""


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
    unknown = set(node.keys()) - {"name", "params", "seed", "on_data_change"}
    if unknown:
        raise ValueError(
            f"data.rlif_sampler: unknown key(s) {sorted(unknown)}; expected name, params, seed, on_data_change"
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
        self._pool_watch = PoolSizeWatch(pool_rows, int(config.get("train_batch_size", 1)))
        self._pool_watch.check(self.policy.probabilities())
        self._reward_health = RewardHealth()

    def _build_pools(self, policy: SamplingPolicy) -> tuple[dict[Pool, list[int]], list[int]]:
        """Group row indices by (data_source, interval); intervals come from the policy and, for the sources it
        splits, ``extra_info.<policy.difficulty_field>`` (``difficulty``, or the graph builder's ``level``)."""
        columns = self.dataframe.select_columns(["data_source", "extra_info"])
        sources = list(columns["data_source"])
        extras = list(columns["extra_info"])
        rows_by_source: dict[str, list[int]] = defaultdict(list)
        for row, source in enumerate(sources):
            rows_by_source[source].append(row)
        pools: dict[Pool, list[int]] = defaultdict(list)
        row_interval = [0] * len(sources)
        files = ", ".join(_as_list(self.original_data_files))
        field = policy.difficulty_field
        for source, rows in sorted(rows_by_source.items()):
            difficulties: list[Any] = []
            for row in rows:
                if not policy.splits(source):
                    difficulties.append(0.0)
                    continue
                extra = extras[row] or {}
                if extra.get(field) is None:
                    raise ValueError(f"{files}: row {row} field extra_info.{field} is missing (source {source!r})")
                difficulties.append(extra[field])
            for row, interval in zip(rows, policy.assign_intervals(source, difficulties), strict=True):
                pools[(source, int(interval))].append(row)
                row_interval[row] = int(interval)
        return dict(pools), row_interval

    def __getitem__(self, item: int) -> dict[str, Any]:
        if self.policy is None:
            return super().__getitem__(item)
        pool = self.policy.draw()
        rows = self._pools[pool]
        row = rows[self._row_rng.randrange(len(rows))]
        row_dict = super().__getitem__(row)
        row_dict["extra_info"] = {**row_dict["extra_info"], INTERVAL_KEY: pool[1]}
        return row_dict

    def feedback(self, records: Sequence[Record]) -> dict[str, float]:
        """Give one step's scored responses to the policy; return the step's sampler and per-source metrics."""
        if self.policy is None:
            raise RuntimeError("feedback() called on the validation dataset")
        metrics = per_source_reward_metrics(records)
        metrics.update(self._reward_health.observe(records))
        metrics.update(self.policy.update(records))
        self._pool_watch.check(self.policy.probabilities())
        return metrics

    def state_dict(self) -> dict[str, Any]:
        """Policy state with the data fingerprint, and the row RNG; ``StatefulDataLoader`` stores it in verl's
        ``data.pt``."""
        if self.policy is None:
            return {}
        return {"policy": self.policy.checkpoint(), "row_rng": rng_state(self._row_rng)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned (verl calls this when it resumes from a checkpoint).

        Raises:
            ValueError: the training data changed since the save and ``data.rlif_sampler.on_data_change`` is
                ``error`` (the message names each changed source and what changed).
        """
        if self.policy is None or not state:
            return
        changes = self.policy.restore(state["policy"], self.on_data_change)
        for change in changes:
            LOG.warning("resumed onto changed data (%s=resplit): %s", SETTING, change)
        restore_rng(self._row_rng, state["row_rng"])


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


class _RewardFeedback:
    """One step of reward feedback to the training dataset's policy, after verl's own ``sample``.

    verl constructs the buffer with the stock keyword arguments; ``refill_fn`` is the trainer's bound method,
    through which the buffer reaches ``trainer.train_dataset``.
    """

    refill_fn: Any

    def sample(self, global_steps: int, partition_id: str, batch_size: int) -> tuple[Any, dict]:
        batch, metrics = super().sample(global_steps, partition_id, batch_size)  # type: ignore[misc]
        if partition_id != "train":
            return batch, metrics
        dataset = self._train_dataset()
        records, flags = read_records(batch.keys, partition_id)
        metrics = dict(metrics)
        metrics.update(dataset.feedback(records))
        metrics.update(flags)
        return batch, metrics

    def _train_dataset(self) -> PolicySampledDataset:
        trainer = getattr(self.refill_fn, "__self__", None)
        dataset = getattr(trainer, "train_dataset", None)
        if not isinstance(dataset, PolicySampledDataset):
            raise RuntimeError(
                f"{type(self).__name__} needs data.custom_cls.name=PolicySampledDataset "
                f"(path pkg://rlif.verl_glue.hooks); the trainer's train_dataset is {type(dataset).__name__}"
            )
        return dataset


class RewardFeedbackReplayBuffer(_RewardFeedback, ReplayBuffer):
    """verl's sync replay buffer plus one step of reward feedback (``trainer.v1.trainer_mode=sync``)."""


class AsyncRewardFeedbackReplayBuffer(_RewardFeedback, ReplayBufferAsync):
    """verl's async replay buffer (stale and failed groups evicted and refilled) plus reward feedback
    (``trainer.v1.trainer_mode=colocate_async``)."""


def read_records(keys: Sequence[str], partition_id: str) -> tuple[list[Record], dict[str, float]]:
    """Read source, interval, item id and score of each trajectory key (``{uid}_{session}_{index}``) from TQ, and
    the rates of the reward's per-sample flags (``reward_flag_metrics``) when the trajectories carry reward extras.

    Raises:
        RuntimeError: the trajectories carry no ``rm_scores`` yet (rewards computed after sampling, e.g. a
            colocated reward model): the policy would silently never learn, so the run stops at step 1.
    """
    import transfer_queue as tq

    if not keys:
        return [], {}
    fields = ["data_source", "extra_info", "rm_scores"]
    try:
        data = tq.kv_batch_get(keys=list(keys), partition_id=partition_id, select_fields=fields)
    except KeyError as err:
        raise RuntimeError(
            f"sampled trajectories lack {err}: rlif's feedback needs rule rewards streamed by reward workers "
            "(no colocated reward model)"
        ) from err
    records = []
    for key, source, extra, scores in zip(
        keys, data["data_source"], data["extra_info"], data["rm_scores"], strict=True
    ):
        extra_info = _plain(extra) or {}
        records.append(
            Record(
                source=str(_plain(source)),
                interval=int(extra_info.get(INTERVAL_KEY, 0)),
                reward=float(scores.sum().item()),
                group=key.split("_")[0],
                item_id=str(extra_info.get("item_id", "")),
            )
        )
    try:
        extras = tq.kv_batch_get(keys=list(keys), partition_id=partition_id, select_fields=["extra_fields"])
        extra_fields = list(extras["extra_fields"])
    except KeyError:  # no reward extras were streamed (a reward returning a bare float): no flags to log
        return records, {}
    return records, reward_flag_metrics([record.source for record in records], extra_fields)


def _plain(value: Any) -> Any:
    """Unwrap TensorDict's NonTensorData to the Python value it holds."""
    return getattr(value, "data", value)
