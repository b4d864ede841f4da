"""Overlong handling (``train.overlong``) in rlif's V1 buffer, before advantages: DAPO's soft punishment on
``rm_scores`` or truncated responses out of the batch; the policy's feedback keeps the unpenalised scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("verl")

from test_glue_tied_groups import FakeQueue, FakeTrainer

CAP = 8


class LengthQueue(FakeQueue):
    """A queue whose trajectories carry a ``response_mask`` (the generated length) and take ``kv_batch_put``."""

    def put_lengths(self, uid: str, rewards: Sequence[float], lengths: Sequence[int]) -> None:
        import torch

        self.put_group(uid, "logicif", rewards)
        for session, (reward, length) in enumerate(zip(rewards, lengths, strict=True)):
            fields = self.items["train"][f"{uid}_{session}_0"][1]
            scores = torch.zeros(CAP)
            scores[length - 1] = reward
            fields["rm_scores"] = scores
            fields["response_mask"] = torch.tensor([1] * length + [0] * (CAP - length))

    def kv_batch_get(self, keys: Sequence[str], partition_id: str, select_fields: Sequence[str]) -> dict[str, Any]:
        import torch

        got = super().kv_batch_get(keys, partition_id, select_fields)
        if "response_mask" in got:
            got["response_mask"] = torch.stack(got["response_mask"])
        return got

    def kv_batch_put(self, keys: Sequence[str], partition_id: str, fields: dict[str, Any]) -> None:
        for i, key in enumerate(keys):
            for name, values in fields.items():
                self.items[partition_id][key][1][name] = values[i]


@pytest.fixture
def queue(monkeypatch: pytest.MonkeyPatch) -> LengthQueue:
    import transfer_queue

    fake = LengthQueue()
    for name in ("kv_list", "kv_batch_get", "kv_clear", "kv_batch_put"):
        monkeypatch.setattr(transfer_queue, name, getattr(fake, name))
    return fake


def _buffer(trainer: FakeTrainer, **options: Any) -> Any:
    from omegaconf import OmegaConf

    from rlif.verl_glue.v1_feedback import RewardFeedbackReplayBuffer

    return RewardFeedbackReplayBuffer(
        trainer_mode="sync",
        trainer_config=OmegaConf.create({}),
        max_off_policy_threshold=None,
        max_off_policy_strategy="drop",
        sampler_kwargs=OmegaConf.create({"rlif_max_response_length": CAP, **options}),
        poll_interval=0.0,
        refill_fn=trainer.refill,
    )


def _score(queue: LengthQueue, key: str) -> float:
    return float(queue.items["train"][key][1]["rm_scores"].sum())


def test_dapo_soft_punishment_formula() -> None:
    from rlif.verl_glue.v1_feedback import OverlongOptions, soft_overlong_penalty

    options = OverlongOptions("soft_punish", max_response_length=8192, buffer_tokens=2048, penalty=1.0)
    # verl's dapo manager: min(-(length - (cap - buffer)) / buffer * factor, 0)
    assert soft_overlong_penalty(6144, options) == 0.0 and soft_overlong_penalty(100, options) == 0.0
    assert soft_overlong_penalty(7168, options) == pytest.approx(-0.5)
    assert soft_overlong_penalty(8192, options) == pytest.approx(-1.0)


def test_soft_punish_lowers_long_rewards_but_not_the_policys_feedback(queue: LengthQueue) -> None:
    queue.put_lengths("a", [1.0, 1.0, 0.0, 1.0], [3, 6, 8, 7])  # buffer 4: penalty from 4 tokens up
    queue.put_lengths("b", [0.0, 1.0], [2, 4])
    trainer = FakeTrainer(queue, batch_size=2, refills=[])
    batch, metrics = _buffer(
        trainer, rlif_overlong="soft_punish", rlif_overlong_buffer=4, rlif_overlong_penalty=1.0
    ).sample(global_steps=1, partition_id="train", batch_size=2)
    assert len(batch.keys) == 6
    assert _score(queue, "a_0_0") == 1.0 and _score(queue, "b_1_0") == 1.0
    assert _score(queue, "a_1_0") == pytest.approx(0.5) and _score(queue, "a_3_0") == pytest.approx(0.25)
    assert _score(queue, "a_2_0") == pytest.approx(-1.0)
    assert metrics["sampler/overlong/truncated_rate"] == pytest.approx(1 / 6)
    assert metrics["sampler/overlong/mean_penalty"] == pytest.approx(-(0.5 + 1.0 + 0.75) / 6)
    fed = sorted(record.reward for record in trainer.train_dataset.seen[0] if record.group == "a")
    assert fed == [0.0, 1.0, 1.0, 1.0]  # read before the penalty


def test_mask_takes_truncated_responses_and_groups_left_alone_out(queue: LengthQueue) -> None:
    queue.put_lengths("a", [1.0, 0.0, 0.0], [3, 8, 5])  # one truncated: two stay
    queue.put_lengths("b", [0.0, 1.0], [8, 4])  # one left: the group goes
    queue.put_lengths("c", [0.0, 1.0], [2, 4])
    trainer = FakeTrainer(queue, batch_size=3, refills=[])
    batch, metrics = _buffer(trainer, rlif_overlong="mask").sample(global_steps=1, partition_id="train", batch_size=3)
    assert sorted(batch.keys) == ["a_0_0", "a_2_0", "c_0_0", "c_1_0"]
    assert metrics["sampler/overlong/masked_responses"] == 3.0 and metrics["sampler/overlong/masked_groups"] == 1.0
    assert metrics["sampler/overlong/truncated_rate"] == pytest.approx(2 / 7)
    assert "a_1_0" not in queue.items["train"] and "b_1_0" not in queue.items["train"]
    assert len(trainer.train_dataset.seen[0]) == 7  # the policy still sees the truncated responses


def test_mask_keeps_a_batch_that_is_all_truncated(queue: LengthQueue) -> None:
    queue.put_lengths("a", [0.0, 0.0], [8, 8])
    trainer = FakeTrainer(queue, batch_size=1, refills=[])
    batch, metrics = _buffer(trainer, rlif_overlong="mask").sample(global_steps=1, partition_id="train", batch_size=1)
    assert len(batch.keys) == 2 and metrics["sampler/overlong/masked_responses"] == 0.0


def test_none_touches_nothing(queue: LengthQueue) -> None:
    queue.put_lengths("a", [1.0, 0.0], [8, 8])
    trainer = FakeTrainer(queue, batch_size=1, refills=[])
    batch, metrics = _buffer(trainer).sample(global_steps=1, partition_id="train", batch_size=1)
    assert len(batch.keys) == 2 and not any(k.startswith("sampler/overlong") for k in metrics)
    with pytest.raises(ValueError, match=r"rlif_overlong.*not one of"):
        _buffer(trainer, rlif_overlong="cut")


def test_soft_punishment_without_a_buffer_is_refused() -> None:
    """A zero buffer would divide by zero at the first long response; it is refused when the buffer is built."""
    from rlif.verl_glue.v1_feedback import OverlongOptions

    base = {"rlif_overlong": "soft_punish", "rlif_max_response_length": 64}
    with pytest.raises(ValueError, match=r"soft_punish needs rlif_overlong_buffer between 1 and .* \(64\), got 0"):
        OverlongOptions.from_kwargs(base)
    with pytest.raises(ValueError, match=r"got 65"):
        OverlongOptions.from_kwargs({**base, "rlif_overlong_buffer": 65})
    assert OverlongOptions.from_kwargs({**base, "rlif_overlong_buffer": 16}).buffer_tokens == 16
