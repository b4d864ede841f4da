"""rlif's dynamic sampling (``train.drop_tied_groups``) in the V1 feedback buffer, against an in-memory stand-in for
TransferQueue: tied prompts leave the batch and are replaced, and the policy still sees their rewards."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("verl")


class FakeQueue:
    """The four TransferQueue calls verl's replay buffer and ``read_records`` make, on dictionaries."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, tuple[dict, dict]]] = {"train": {}}

    def put_group(self, uid: str, source: str, rewards: Sequence[float], step: int = 1) -> None:
        import torch

        self.items["train"][uid] = ({"is_prompt": True, "status": "finished", "global_steps": step}, {})
        for session, reward in enumerate(rewards):
            scores = torch.zeros(3)
            scores[-1] = reward
            fields = {"data_source": source, "extra_info": {"item_id": uid}, "rm_scores": scores}
            self.items["train"][f"{uid}_{session}_0"] = ({"status": "success", "global_steps": step}, fields)

    def kv_list(self) -> dict[str, dict[str, dict]]:
        return {partition: {key: tag for key, (tag, _) in items.items()} for partition, items in self.items.items()}

    def kv_batch_get(self, keys: Sequence[str], partition_id: str, select_fields: Sequence[str]) -> dict[str, list]:
        rows = [self.items[partition_id][key][1] for key in keys]
        for field in select_fields:
            if any(field not in row for row in rows):
                raise KeyError(field)
        return {field: [row[field] for row in rows] for field in select_fields}

    def kv_clear(self, partition_id: str, keys: Sequence[str]) -> None:
        for key in keys:
            self.items[partition_id].pop(key, None)


@pytest.fixture
def queue(monkeypatch: pytest.MonkeyPatch) -> FakeQueue:
    import transfer_queue

    fake = FakeQueue()
    for name in ("kv_list", "kv_batch_get", "kv_clear"):
        monkeypatch.setattr(transfer_queue, name, getattr(fake, name))
    return fake


class FakeTrainer:
    """What the buffer reaches through ``refill_fn.__self__``: the config and the training dataset; a refill puts
    the next scripted groups in the queue as finished."""

    def __init__(self, queue: FakeQueue, batch_size: int, refills: list[tuple[str, list[float]]]) -> None:
        from omegaconf import OmegaConf

        from rlif.verl_glue.hooks import PolicySampledDataset

        class Dataset(PolicySampledDataset):
            def __init__(self) -> None:  # no data: only the feedback matters here
                self.seen: list[list[Any]] = []

            def feedback(self, records: Sequence[Any]) -> dict[str, float]:
                self.seen.append(list(records))
                return {"fake/records": float(len(records))}

        self.config = OmegaConf.create({"data": {"train_batch_size": batch_size}})
        self.train_dataset = Dataset()
        self.queue, self.refills, self.asked = queue, list(refills), 0

    def refill(self, count: int) -> int:
        self.asked += count
        for _ in range(count):
            uid, rewards = self.refills.pop(0)
            self.queue.put_group(uid, "logicif", rewards)
        return count


def _buffer(trainer: FakeTrainer, drop: bool) -> Any:
    from omegaconf import OmegaConf

    from rlif.verl_glue.v1_feedback import RewardFeedbackReplayBuffer

    kwargs = OmegaConf.create({"rlif_drop_tied_groups": True} if drop else {})
    return RewardFeedbackReplayBuffer(
        trainer_mode="sync",
        trainer_config=OmegaConf.create({}),
        max_off_policy_threshold=None,
        max_off_policy_strategy="drop",
        sampler_kwargs=kwargs,
        poll_interval=0.0,
        refill_fn=trainer.refill,
    )


def _groups(keys: Sequence[str]) -> set[str]:
    return {key.split("_")[0] for key in keys}


def test_tied_groups_leave_the_batch_are_refilled_and_still_reach_the_policy(queue: FakeQueue) -> None:
    queue.put_group("solved", "iftrain", [1.0, 1.0])
    queue.put_group("mixed", "iftrain", [1.0, 0.0])
    queue.put_group("failed", "logicif", [0.0, 0.0])
    trainer = FakeTrainer(queue, batch_size=2, refills=[("new1", [0.0, 1.0]), ("new2", [1.0, 0.0])])
    buffer = _buffer(trainer, drop=True)

    batch, metrics = buffer.sample(global_steps=1, partition_id="train", batch_size=2)

    assert _groups(batch.keys) <= {"mixed", "new1", "new2"} and len(_groups(batch.keys)) == 2
    assert trainer.asked == 2  # two ties: a refill credit of four, capped at one batch in flight
    assert metrics["training/filter_groups/evicted_samples"] == 2
    seen = trainer.train_dataset.seen[0]
    assert {record.group for record in seen} == {"solved", "mixed", "failed", "new1", "new2"}  # surplus included
    assert {r.reward for r in seen if r.group == "solved"} == {1.0}
    assert metrics["sampler/feedback_outside_batch/prompts"] == 3.0  # two tied, one surplus
    assert metrics["sampler/feedback_outside_batch/responses"] == 6.0
    assert metrics["fake/records"] == 10.0
    assert not buffer._outside_batch  # handed over once


def test_without_the_setting_tied_groups_are_trained_on(queue: FakeQueue) -> None:
    queue.put_group("solved", "iftrain", [1.0, 1.0])
    queue.put_group("mixed", "iftrain", [1.0, 0.0])
    trainer = FakeTrainer(queue, batch_size=2, refills=[])
    batch, metrics = _buffer(trainer, drop=False).sample(global_steps=1, partition_id="train", batch_size=2)
    assert _groups(batch.keys) == {"solved", "mixed"}
    assert trainer.asked == 0
    assert not any(key.startswith(("training/filter_groups", "sampler/feedback_outside")) for key in metrics)


def test_dynamic_sampling_needs_the_trainer_refill(queue: FakeQueue) -> None:
    from omegaconf import OmegaConf

    from rlif.verl_glue.v1_feedback import RewardFeedbackReplayBuffer

    with pytest.raises(ValueError, match=r"train\.drop_tied_groups"):
        RewardFeedbackReplayBuffer(
            trainer_mode="sync",
            trainer_config=OmegaConf.create({}),
            max_off_policy_threshold=None,
            max_off_policy_strategy="drop",
            sampler_kwargs=OmegaConf.create({"rlif_drop_tied_groups": True}),
            refill_fn=None,
        )
