"""Reward feedback through verl 0.9.1's V1 replay buffer (``trainer.use_v1=true``), apart from the other hooks.

verl's V1 trainer loads ``trainer.v1.sampler.custom_sampler`` (path ``pkg://rlif.verl_glue.v1_feedback``, name
``RewardFeedbackReplayBuffer``, or ``AsyncRewardFeedbackReplayBuffer`` in ``colocate_async`` mode) and calls its
``sample`` once per training step after rollouts and rewards and before the update. The buffer reads each sampled
trajectory's source, interval and score from TransferQueue, feeds them to the training dataset's policy, and returns
``sampler/*`` and per-source reward metrics, which verl merges into the step's log. In ``colocate_async`` mode the
prompts of about ``num_warmup_batches`` batches are already in flight when feedback arrives, so a draw sees the
rewards of the batch trained one to two steps earlier, and verl's async buffer keeps evicting groups older than
``max_off_policy_threshold`` steps.

With ``train.drop_tied_groups`` (DAPO's dynamic sampling) the buffer also drops every prompt whose responses all
earned the same reward and has new prompts generated in their place, with verl's own filter machinery
(``ReplayBuffer(filter_groups_metric="reward")``: in sync mode each dropped prompt adds two to the refill, in flight
up to one batch, and the surplus is discarded once a batch is full). verl 0.9.1 hands that machinery only to its
built-in buffers (``algorithm.filter_groups`` is skipped when a custom buffer is set), so rlif's buffer turns it on
itself from ``trainer.v1.sampler.sampler_kwargs``. The policy still learns from every generated prompt: the records
of dropped and surplus prompts are read before verl clears them and given to the policy with the batch's, so a
policy that reads rewards sees the ties (an all-solved or all-failed pool) and the exposure metrics count them.

With ``train.overlong`` the buffer also decides what a truncated response (one that reached
``data.max_response_length``) does to the loss, for any reward manager: ``soft_punish`` adds DAPO's soft overlong
punishment to the trajectory's ``rm_scores`` (``overlong_penalty``), ``mask`` takes truncated responses out of the
batch as ``drop_no_verdict`` does with unjudged ones (``mask_truncated``). Both act after the records are read, so
the sampling policy learns from the unpenalised scores; tied groups are judged on those too.

This module is the only one that imports verl's V1 package (``verl.trainer.ppo.v1``) and TransferQueue: the V1
trainer and TransferQueue change between verl versions and are gone on verl's ``neo`` branch, so the reward entry
and the dataset (``rlif.verl_glue.hooks``) must import without them; the legacy trainer gets the same feedback
through ``PolicySampledDataset.on_batch_end``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer, ReplayBufferAsync

from rlif.verl_glue.buffer_options import (
    DROP_TIED_GROUPS_KEY,
    MAX_RESPONSE_KEY,
    OVERLONG_BUFFER_KEY,
    OVERLONG_KEY,
    OVERLONG_PENALTY_KEY,
)
from rlif.verl_glue.hooks import (
    EXPOSURE_KEY,
    INTERVAL_KEY,
    SUCCESS_KEY,
    PolicySampledDataset,
    _number,
    _plain,
    reward_flag_metrics,
)
from samplers import Record

__all__ = [
    "AsyncRewardFeedbackReplayBuffer",
    "OverlongOptions",
    "RewardFeedbackReplayBuffer",
    "apply_overlong",
    "drop_no_verdict",
    "read_records",
    "soft_overlong_penalty",
]


@dataclass(frozen=True)
class OverlongOptions:
    """What a truncated response does to the loss (a run's ``train.overlong``; ``rlif.verl_glue.buffer_options``).

    Attributes:
        mode: ``none``, ``soft_punish`` or ``mask``.
        max_response_length: the cap: a response this long was truncated.
        buffer_tokens: DAPO's overlong buffer: the punishment starts this many tokens before the cap.
        penalty: DAPO's penalty factor: the punishment at the cap.
    """

    mode: str = "none"
    max_response_length: int = 0
    buffer_tokens: int = 0
    penalty: float = 1.0

    @classmethod
    def from_kwargs(cls, options: Mapping[str, Any]) -> OverlongOptions:
        """Read the buffer's ``sampler_kwargs``.

        Raises:
            ValueError: an unknown mode, a mode without the response cap, or soft punishment without a buffer.
        """
        mode = str(options.get(OVERLONG_KEY, "none"))
        if mode not in ("none", "soft_punish", "mask"):
            raise ValueError(f"{OVERLONG_KEY} (train.overlong) {mode!r} is not one of none, soft_punish, mask")
        cap = int(options.get(MAX_RESPONSE_KEY, 0))
        if mode != "none" and cap <= 0:
            raise ValueError(f"{OVERLONG_KEY}={mode} needs {MAX_RESPONSE_KEY} (data.max_response_length)")
        buffer = int(options.get(OVERLONG_BUFFER_KEY, 0))
        if mode == "soft_punish" and not 0 < buffer <= cap:
            raise ValueError(
                f"{OVERLONG_KEY}=soft_punish needs {OVERLONG_BUFFER_KEY} between 1 and {MAX_RESPONSE_KEY} ({cap}), "
                f"got {buffer}"
            )
        return cls(mode, cap, buffer, float(options.get(OVERLONG_PENALTY_KEY, 1.0)))


class _RewardFeedback:
    """One step of reward feedback to the training dataset's policy, after verl's own ``sample``.

    verl constructs the buffer with the stock keyword arguments; ``refill_fn`` is the trainer's bound method,
    through which the buffer reaches ``trainer.train_dataset`` (and, for dynamic sampling, the batch size).

    Raises:
        ValueError: dynamic sampling without a ``refill_fn`` (nothing could replace a dropped prompt).
    """

    refill_fn: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        options = kwargs.get("sampler_kwargs") or {}
        self.drops_tied_groups = bool(options.get(DROP_TIED_GROUPS_KEY, False))
        if self.drops_tied_groups:
            kwargs = {**kwargs, **_dynamic_sampling_kwargs(kwargs.get("refill_fn"))}
        self._outside_batch: list[Record] = []
        """Records of generated prompts that verl cleared before they reached a batch (dropped or surplus)."""
        self._groups_outside_batch = 0
        self.overlong = OverlongOptions.from_kwargs(options)
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]

    def sample(self, global_steps: int, partition_id: str, batch_size: int) -> tuple[Any, dict]:
        batch, metrics = super().sample(global_steps, partition_id, batch_size)  # type: ignore[misc]
        if partition_id != "train":
            return batch, metrics
        dataset = self._train_dataset()
        records, flags = read_records(batch.keys, partition_id)
        batch, records, no_verdict_metrics = drop_no_verdict(batch, records)
        # after the records are read: the policy learns from the unpenalised scores
        batch, overlong_metrics = apply_overlong(batch, self.overlong)
        outside, groups = self._outside_batch, self._groups_outside_batch
        self._outside_batch, self._groups_outside_batch = [], 0
        metrics = dict(metrics)
        metrics.update(dataset.feedback(records + outside))
        metrics.update(flags)
        metrics.update(no_verdict_metrics)
        metrics.update(overlong_metrics)
        if self.drops_tied_groups:
            metrics["sampler/feedback_outside_batch/prompts"] = float(groups)
            metrics["sampler/feedback_outside_batch/responses"] = float(len(outside))
        return batch, metrics

    def _clear_groups(self, partition_id: str, uids: set[str]) -> None:
        """Before verl clears finished prompts from TransferQueue (dropped as tied, or surplus to the batch), keep
        their records for the policy: what it learns from is every prompt generated, not only those trained on.
        Unjudged responses are left out, as ``drop_no_verdict`` leaves them out of the batch: a group the judge
        never answered is tied at its placeholder 0, and the policy would read that as a failed pool."""
        if self.drops_tied_groups and partition_id == "train" and uids:
            finished = set(uids) & self.finished_keys[partition_id]  # type: ignore[attr-defined]
            keys = sorted(key for key in self.partitions[partition_id] if key.split("_")[0] in finished)  # type: ignore[attr-defined]
            if keys:
                records, _ = read_records(keys, partition_id)
                flags = _flags(keys, partition_id, NO_VERDICT_FLAG) or [None] * len(keys)
                judged = [record for record, flag in zip(records, flags, strict=True) if not flag]
                self._outside_batch.extend(judged)
                self._groups_outside_batch += len({record.group for record in records})
        super()._clear_groups(partition_id, uids)  # type: ignore[misc]

    def _train_dataset(self) -> PolicySampledDataset:
        trainer = getattr(self.refill_fn, "__self__", None)
        dataset = getattr(trainer, "train_dataset", None)
        if not isinstance(dataset, PolicySampledDataset):
            raise RuntimeError(
                f"{type(self).__name__} needs data.custom_cls.name=PolicySampledDataset "
                f"(path pkg://rlif.verl_glue.hooks); the trainer's train_dataset is {type(dataset).__name__}"
            )
        return dataset


def _dynamic_sampling_kwargs(refill_fn: Any) -> dict[str, Any]:
    """The keyword arguments verl gives its built-in buffer for ``algorithm.filter_groups`` with ``metric:
    reward`` (``trainer_base.py`` ``_build_replay_buffer``): ties on the scalar reward, refills one prompt at a
    time, at most one batch in flight.

    Raises:
        ValueError: no ``refill_fn`` bound to a trainer with a config.
    """
    config = getattr(getattr(refill_fn, "__self__", None), "config", None)
    if config is None:
        raise ValueError(
            f"{DROP_TIED_GROUPS_KEY} (train.drop_tied_groups) needs verl's refill_fn, bound to the trainer, to replace "
            "the dropped prompts"
        )
    return {
        "filter_groups_metric": "reward",
        "train_batch_size": int(config.data.train_batch_size),
        "gen_batch_size": 1,
        "max_inflight_gen_batches": 1,
    }


class RewardFeedbackReplayBuffer(_RewardFeedback, ReplayBuffer):
    """verl's sync replay buffer plus one step of reward feedback (``trainer.v1.trainer_mode=sync``)."""


class AsyncRewardFeedbackReplayBuffer(_RewardFeedback, ReplayBufferAsync):
    """verl's async replay buffer (stale and failed groups evicted and refilled) plus reward feedback
    (``trainer.v1.trainer_mode=colocate_async``)."""


def read_records(keys: Sequence[str], partition_id: str) -> tuple[list[Record], dict[str, float]]:
    """Read source, interval, item id and score of each trajectory key (``{uid}_{session}_{index}``) from TQ, and
    the rates of the reward's per-sample flags (``reward_flag_metrics``) when the trajectories carry reward extras.

    Each record also gets its success indicator (``reward_extra_info.acc`` in ``extra_fields``, None without
    reward extras), the row's earlier draws (the dataset's ``extra_info`` stamp) and its response length (the
    jagged ``response_mask``'s row length; None when TQ has no mask). Truncation is left to the dataset, which knows
    ``data.max_response_length``.

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
    # None when no reward extras were streamed (a reward returning a bare float): no flags, no success
    extra_fields = _optional_field(keys, partition_id, "extra_fields")
    lengths = _response_lengths(keys, partition_id)
    records = []
    for i, (key, source, extra, scores) in enumerate(
        zip(keys, data["data_source"], data["extra_info"], data["rm_scores"], strict=True)
    ):
        extra_info = _plain(extra) or {}
        exposure = extra_info.get(EXPOSURE_KEY)
        records.append(
            Record(
                source=str(_plain(source)),
                interval=int(extra_info.get(INTERVAL_KEY, 0)),
                reward=float(scores.sum().item()),
                group=key.split("_")[0],
                item_id=str(extra_info.get("item_id", "")),
                success=None if extra_fields is None else _success(extra_fields[i]),
                exposure=None if exposure is None else int(exposure),
                response_tokens=None if lengths is None else lengths[i],
            )
        )
    if extra_fields is None:
        return records, {}
    return records, reward_flag_metrics([record.source for record in records], extra_fields)


NO_VERDICT_FLAG = "judge_no_verdict"
"""The reward extra a network verifier sets on a sample it could not judge (``rewards.judge``)."""


def drop_no_verdict(batch: Any, records: Sequence[Record]) -> tuple[Any, list[Record], dict[str, float]]:
    """Take the samples without a verdict out of the step, before verl computes advantages.

    A sample whose reward returned ``judge_no_verdict=1`` has no reward (its ``score`` is a placeholder), so it
    must count neither in the loss nor in its group's statistics. Its trajectory key is removed from the sampled
    batch (and cleared from TransferQueue), so verl's advantage step never sees it: GRPO's group mean and standard
    deviation are computed over the group's judged responses only, and the policy loss, its token normaliser and
    the step's reward metrics leave it out. verl then pads the batch back to its mini-batch multiple with its own
    no-op samples (``upsample_batch_to_divisible_size``: zero ``response_mask`` and ``loss_mask``), as it does for
    any batch that is short. A group left with fewer than two judged responses leaves the batch whole: a group
    statistic of one response would pay that response its raw score as advantage. The policy is fed the judged
    responses (dropped groups included) and not the unjudged ones.

    Args:
        batch: the ``KVBatchMeta`` verl's ``sample`` returned.
        records: ``read_records`` of ``batch.keys``, in the same order.

    Returns:
        The batch without those keys, the records of judged responses, and the step's
        ``sampler/no_verdict/{rate,dropped_responses,dropped_groups}`` (only when a response of the batch was judged
        by a network verifier, i.e. carried the flag).

    Raises:
        RuntimeError: no group keeps two judged responses (the judge was down for the whole step): verl cannot
            train on an empty batch, and training on placeholders would teach nothing true.
    """

    keys = list(batch.keys)
    flags = _flags(keys, batch.partition_id, NO_VERDICT_FLAG)
    if flags is None or all(flag is None for flag in flags):
        return batch, list(records), {}
    unjudged = {key for key, flag in zip(keys, flags, strict=True) if flag}
    dropped, dropped_groups = _keys_to_drop(keys, unjudged)
    if len(dropped) == len(keys):
        raise RuntimeError(
            f"no response of this step has two judged responses in its group ({len(unjudged)} of {len(keys)} had "
            "no verdict): the judge did not answer; check its server and the judge's timeout, then resume from the "
            "last checkpoint"
        )
    flagged = sum(flag is not None for flag in flags)
    metrics = {
        "sampler/no_verdict/rate": len(unjudged) / flagged,
        "sampler/no_verdict/dropped_responses": float(len(dropped)),
        "sampler/no_verdict/dropped_groups": float(len(dropped_groups)),
    }
    if not dropped:
        return batch, list(records), metrics
    trimmed = _without(batch, dropped)
    judged_records = [record for key, record in zip(keys, records, strict=True) if key not in unjudged]
    return trimmed, judged_records, metrics


def _keys_to_drop(keys: Sequence[str], unwanted: set[str]) -> tuple[list[str], set[str]]:
    """The keys to take out of a batch for ``unwanted`` samples, and the groups taken out whole: a group left with
    fewer than two responses leaves entirely (a group statistic of one response would pay it its raw score)."""
    kept_per_group: dict[str, int] = {}
    for key in keys:
        uid = key.split("_")[0]
        kept_per_group[uid] = kept_per_group.get(uid, 0) + (key not in unwanted)
    groups = {uid for uid, kept in kept_per_group.items() if kept < 2}
    return [key for key in keys if key in unwanted or key.split("_")[0] in groups], groups


def _without(batch: Any, dropped: Sequence[str]) -> Any:
    """``batch`` without the ``dropped`` keys, which are cleared from TransferQueue. verl then pads the batch back
    to its mini-batch multiple with its own no-op samples, as for any short batch."""
    import transfer_queue as tq

    keys, gone = list(batch.keys), set(dropped)
    tq.kv_clear(partition_id=batch.partition_id, keys=list(dropped))
    kept = [i for i, key in enumerate(keys) if key not in gone]
    tags = list(batch.tags)
    return type(batch)(
        keys=[keys[i] for i in kept],
        tags=[tags[i] for i in kept] if tags else [],
        partition_id=batch.partition_id,
        fields=batch.fields,
        extra_info=dict(batch.extra_info or {}),
    )


def soft_overlong_penalty(length: int, options: OverlongOptions) -> float:
    """DAPO's soft overlong punishment (verl 0.9.1 ``workers/reward_manager/dapo.py``, Yu et al. 2025,
    arXiv 2503.14476): 0 up to ``max_response_length - buffer_tokens`` tokens, then falling linearly to
    ``-penalty`` at the cap: ``min(-(length - expected) / buffer * penalty, 0)``."""
    expected = options.max_response_length - options.buffer_tokens
    return min(-(length - expected) / options.buffer_tokens * options.penalty, 0.0)


def apply_overlong(batch: Any, options: OverlongOptions) -> tuple[Any, dict[str, float]]:
    """Apply the run's overlong handling to a sampled batch, before verl computes advantages.

    ``soft_punish`` adds ``soft_overlong_penalty`` to each long trajectory's ``rm_scores`` at its last response
    token, where the reward managers put the score. ``mask`` takes every truncated response (length >= the cap)
    out of the batch, and the group with it when fewer than two responses stay (``_keys_to_drop``), so it counts
    neither in the loss nor in its group's mean and deviation; if that would empty the batch, the batch stays whole.

    Returns:
        The batch (trimmed under ``mask``) and ``sampler/overlong/*`` metrics: the truncated share, and the mean
        penalty or the masked responses and groups.

    Raises:
        RuntimeError: the trajectories carry no ``response_mask``, so no length is known.
    """
    if options.mode == "none" or not batch.keys:
        return batch, {}
    keys = list(batch.keys)
    lengths = _response_lengths(keys, batch.partition_id)
    if lengths is None:
        raise RuntimeError(f"train.overlong={options.mode} needs each trajectory's response_mask in TransferQueue")
    cap = options.max_response_length
    truncated = {key for key, length in zip(keys, lengths, strict=True) if length >= cap}
    metrics = {"sampler/overlong/truncated_rate": len(truncated) / len(keys)}
    if options.mode == "soft_punish":
        penalties = [soft_overlong_penalty(length, options) for length in lengths]
        metrics["sampler/overlong/mean_penalty"] = sum(penalties) / len(penalties)
        if any(penalties):
            _add_to_last_token(keys, batch.partition_id, penalties, lengths)
        return batch, metrics
    dropped, groups = _keys_to_drop(keys, truncated)
    if len(dropped) == len(keys):
        dropped, groups = [], set()
    metrics["sampler/overlong/masked_responses"] = float(len(dropped))
    metrics["sampler/overlong/masked_groups"] = float(len(groups))
    return (_without(batch, dropped) if dropped else batch), metrics


def _add_to_last_token(
    keys: Sequence[str], partition_id: str, amounts: Sequence[float], lengths: Sequence[int]
) -> None:
    """Add ``amounts[i]`` to trajectory i's ``rm_scores`` at its last response token, in TransferQueue."""
    import transfer_queue as tq

    data = tq.kv_batch_get(keys=list(keys), partition_id=partition_id, select_fields=["rm_scores"])
    scores = data["rm_scores"]
    if getattr(scores, "is_nested", False):
        values, ends = scores.values(), scores.offsets()[1:] - 1
        for i, amount in enumerate(amounts):
            if amount:
                values[int(ends[i])] += amount
    else:  # a padded tensor or a list of rows, the response left-aligned in each
        for i, amount in enumerate(amounts):
            if amount:
                scores[i][max(lengths[i], 1) - 1] += amount
    data["rm_scores"] = scores
    tq.kv_batch_put(keys=list(keys), partition_id=partition_id, fields=data)


def _flags(keys: Sequence[str], partition_id: str, flag: str) -> list[float | None] | None:
    """``reward_extra_info[flag]`` of each trajectory (None where absent), or None without reward extras."""
    extras = _optional_field(keys, partition_id, "extra_fields")
    if extras is None:
        return None
    out: list[float | None] = []
    for extra in extras:
        fields = _plain(extra)
        info = fields.get("reward_extra_info", {}) if isinstance(fields, Mapping) else {}
        out.append(_number(_plain(info.get(flag))) if isinstance(info, Mapping) else None)
    return out


def _success(extra: Any) -> float | None:
    """``reward_extra_info.acc`` of one trajectory's ``extra_fields``, or None."""
    fields = _plain(extra)
    info = fields.get("reward_extra_info", {}) if isinstance(fields, Mapping) else {}
    return _number(_plain(info.get(SUCCESS_KEY))) if isinstance(info, Mapping) else None


def _optional_field(keys: Sequence[str], partition_id: str, field: str, as_list: bool = True) -> Any:
    """One field of each trajectory from TransferQueue, or None when the trajectories do not carry it (or there are
    none). TransferQueue answers a field it does not hold with ``KeyError``, or with an empty TensorDict when the
    metadata it selects names no field; both mean "absent"."""
    import transfer_queue as tq

    if not keys:
        return None
    try:
        data = tq.kv_batch_get(keys=list(keys), partition_id=partition_id, select_fields=[field])
        values = data[field]
    except KeyError:
        return None
    return list(values) if as_list else values


def _response_lengths(keys: Sequence[str], partition_id: str) -> list[int] | None:
    """Response tokens per trajectory from TQ's ``response_mask``.

    TransferQueue hands back each trajectory's row as verl's rollout wrote it, as a jagged tensor: the row length is
    the whole response, tool-response tokens included, which is the length verl's ``dapo`` manager punishes and
    whose last token holds the score. A dense mask gives its row sums, the generated tokens only (the same for a
    single-turn response)."""
    mask = _optional_field(keys, partition_id, "response_mask", as_list=False)
    if mask is None:
        return None
    if getattr(mask, "is_nested", False):
        return [int(n) for n in mask.offsets().diff().tolist()]
    return [int(n) for n in mask.sum(-1).tolist()]
