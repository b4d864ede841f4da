"""Samples a network verifier could not judge (``judge_no_verdict``) leave the step's batch in rlif's V1 buffer,
before advantages: out of the loss and out of their group's statistics, and out of the policy's feedback."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

pytest.importorskip("verl")

from test_glue_tied_groups import FakeQueue, FakeTrainer, _buffer


@pytest.fixture
def queue(monkeypatch: pytest.MonkeyPatch) -> FakeQueue:
    import transfer_queue

    fake = FakeQueue()
    for name in ("kv_list", "kv_batch_get", "kv_clear"):
        monkeypatch.setattr(transfer_queue, name, getattr(fake, name))
    return fake


def _put(queue: FakeQueue, uid: str, rewards: Sequence[float], no_verdict: Sequence[float | None]) -> None:
    queue.put_group(uid, "judge/demo", rewards)
    for session, flag in enumerate(no_verdict):
        info = {"acc": 0.0, "judge_no_verdict": flag}
        queue.items["train"][f"{uid}_{session}_0"][1]["extra_fields"] = {"reward_extra_info": info}


def test_unjudged_samples_and_groups_left_with_one_verdict_leave_the_batch(queue: FakeQueue) -> None:
    _put(queue, "a", [1.0, 0.0, 0.0, 0.5], [0.0, 0.0, 1.0, 0.0])  # one unjudged: the other three stay
    _put(queue, "b", [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 1.0])  # one judged left: the whole group goes
    _put(queue, "c", [1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0])
    trainer = FakeTrainer(queue, batch_size=3, refills=[])

    batch, metrics = _buffer(trainer, drop=False).sample(global_steps=1, partition_id="train", batch_size=3)

    assert sorted(batch.keys) == ["a_0_0", "a_1_0", "a_3_0", "c_0_0", "c_1_0", "c_2_0", "c_3_0"]
    assert len(batch.tags) == len(batch.keys)
    assert metrics["sampler/no_verdict/rate"] == pytest.approx(4 / 12)
    assert metrics["sampler/no_verdict/dropped_responses"] == 5.0
    assert metrics["sampler/no_verdict/dropped_groups"] == 1.0
    assert metrics["train/judge/demo/judge_no_verdict"] == pytest.approx(4 / 12)
    for key in ("a_2_0", "b_0_0", "b_1_0"):
        assert key not in queue.items["train"]  # cleared from TransferQueue
    seen = trainer.train_dataset.seen[0]
    assert len(seen) == 8  # every judged response reaches the policy, the dropped group's included
    assert sorted(r.reward for r in seen if r.group == "b") == [1.0]


def test_batches_without_the_flag_are_untouched(queue: FakeQueue) -> None:
    queue.put_group("x", "iftrain", [1.0, 0.0])
    queue.put_group("y", "iftrain", [0.0, 1.0])
    trainer = FakeTrainer(queue, batch_size=2, refills=[])
    batch, metrics = _buffer(trainer, drop=False).sample(global_steps=1, partition_id="train", batch_size=2)
    assert len(batch.keys) == 4
    assert not any(key.startswith("sampler/no_verdict") for key in metrics)


def test_a_queue_answering_an_absent_field_with_an_empty_batch_means_absent(
    queue: FakeQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real TransferQueue answers a field no trajectory holds either with ``KeyError`` or with an empty TensorDict
    (whose lookup raises ``KeyError``): both leave the batch whole and give no flags."""
    import transfer_queue
    from tensordict import TensorDict

    queue.put_group("x", "iftrain", [1.0, 0.0])
    queue.put_group("y", "iftrain", [0.0, 1.0])
    answer = queue.kv_batch_get

    def empty_for_absent(keys: Sequence[str], partition_id: str, select_fields: Sequence[str]) -> object:
        try:
            return answer(keys, partition_id, select_fields)
        except KeyError:
            return TensorDict({}, batch_size=[0])

    monkeypatch.setattr(transfer_queue, "kv_batch_get", empty_for_absent)
    trainer = FakeTrainer(queue, batch_size=2, refills=[])
    batch, metrics = _buffer(trainer, drop=False).sample(global_steps=1, partition_id="train", batch_size=2)
    assert len(batch.keys) == 4
    assert not any(key.startswith("sampler/no_verdict") for key in metrics)
    assert len(trainer.train_dataset.seen[0]) == 4


class JudgedRefills(FakeTrainer):
    """A trainer whose refills are judged groups (each response carries the no-verdict flag)."""

    def refill(self, count: int) -> int:
        self.asked += count
        for _ in range(count):
            uid, rewards = self.refills.pop(0)
            _put(self.queue, uid, rewards, [0.0] * len(rewards))
        return count


def test_unjudged_samples_of_groups_dropped_as_tied_never_reach_the_policy(queue: FakeQueue) -> None:
    """With dynamic sampling, a group the judge never answered is tied at its placeholder 0 and leaves before the
    batch is read; its records reach the policy through the tied-group path, which must leave the unjudged out too."""
    _put(queue, "down", [0.0, 0.0], [1.0, 1.0])  # judge down: both placeholders, a tie at 0
    _put(queue, "half", [0.0, 0.0], [0.0, 1.0])  # one judged 0, one placeholder 0: a tie too
    _put(queue, "mixed", [1.0, 0.0], [0.0, 0.0])
    trainer = JudgedRefills(queue, batch_size=1, refills=[("new1", [0.0, 1.0]), ("new2", [1.0, 0.0])])

    _buffer(trainer, drop=True).sample(global_steps=1, partition_id="train", batch_size=1)

    seen = trainer.train_dataset.seen[0]
    assert not any(r.group == "down" for r in seen)
    assert [r.reward for r in seen if r.group == "half"] == [0.0]  # the judged response only


def test_a_step_without_any_verdict_stops_with_one_line(queue: FakeQueue) -> None:
    """A judge down for a whole step leaves nothing to train on: a clear error, not an empty batch for verl."""
    _put(queue, "a", [0.0, 0.0], [1.0, 1.0])
    _put(queue, "b", [0.0, 0.0], [1.0, 0.0])  # one judged response left: its group goes too
    trainer = FakeTrainer(queue, batch_size=2, refills=[])
    with pytest.raises(RuntimeError, match=r"3 of 4 had no verdict\): the judge did not answer"):
        _buffer(trainer, drop=False).sample(global_steps=1, partition_id="train", batch_size=2)
