"""RewardFeedbackReplayBuffer against a real local TransferQueue, with trajectories laid out as verl's V1
rollout loop writes them (prompt keys ``{uid}`` with status tags, trajectory keys ``{uid}_{session}_0`` carrying the
dataset row's fields plus ``rm_scores``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def transfer_queue() -> Any:
    import ray
    import transfer_queue as tq
    from omegaconf import OmegaConf

    ray.init(address="local", num_cpus=4, include_dashboard=False)
    tq.init(OmegaConf.create({"backend": {"SimpleStorage": {"num_data_storage_units": 1}}}))
    yield tq
    tq.close()
    ray.shutdown()


def put_step(tq: Any, batch: dict[str, Any], rewards: list[list[float]], step: int) -> None:
    """Write one finished GRPO step: every prompt of ``batch`` with ``len(rewards[i])`` scored responses."""
    import torch
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    keys, fields, tags = [], [], []
    for i, (source, extra) in enumerate(zip(batch["data_source"], batch["extra_info"], strict=True)):
        uid = f"s{step}p{i}"
        tq.kv_put(key=uid, partition_id="train", tag={"is_prompt": True, "status": "finished", "global_steps": step})
        for session, reward in enumerate(rewards[i]):
            scores = torch.zeros(3, dtype=torch.float32)
            scores[-1] = reward
            keys.append(f"{uid}_{session}_0")
            fields.append({"data_source": source, "extra_info": dict(extra), "rm_scores": scores, "uid": uid})
            tags.append({"status": "success", "global_steps": step})
    tq.kv_batch_put(keys=keys, fields=list_of_dict_to_tensordict(fields), tags=tags, partition_id="train")


def test_feedback_reaches_the_policy_and_metrics_come_back(transfer_queue: Any, tmp_path: Path) -> None:
    from glue_testkit import data_config, tokenizer, write_data
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import create_rl_dataset

    from rlif.verl_glue.v1_feedback import RewardFeedbackReplayBuffer

    train, val = write_data(tmp_path / "data")
    config = data_config(train, val, "ema_reweight", {"alpha": 1.0})
    dataset = create_rl_dataset(config.train_files, config, tokenizer(tmp_path / "tok"), None, is_train=True)
    buffer = RewardFeedbackReplayBuffer(
        trainer_mode="sync",
        trainer_config=OmegaConf.create({}),
        max_off_policy_threshold=None,
        max_off_policy_strategy="drop",
        sampler_kwargs=OmegaConf.create({}),
        poll_interval=0.05,
        refill_fn=_FakeTrainer(dataset).refill,
    )
    rows = two_of_each_source(dataset)
    batch = {"data_source": [r["data_source"] for r in rows], "extra_info": [r["extra_info"] for r in rows]}
    # IF answers are all right, LogicIF answers all wrong: EMA must move weight to logicif
    rewards = [[1.0, 1.0] if source == "iftrain" else [0.0, 0.0] for source in batch["data_source"]]
    put_step(transfer_queue, batch, rewards, step=1)

    meta, metrics = buffer.sample(global_steps=1, partition_id="train", batch_size=4)

    assert len(meta.keys) == 8
    assert metrics["train/iftrain/count"] == 4.0 and metrics["train/logicif/count"] == 4.0
    assert metrics["train/iftrain/reward_mean"] == 1.0 and metrics["train/logicif/reward_mean"] == 0.0
    assert metrics["sampler/weight/logicif"] > metrics["sampler/weight/iftrain"]


def test_validation_sampling_gives_no_feedback(transfer_queue: Any, tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    from rlif.verl_glue.v1_feedback import RewardFeedbackReplayBuffer

    buffer = RewardFeedbackReplayBuffer(
        trainer_mode="sync",
        trainer_config=OmegaConf.create({}),
        max_off_policy_threshold=None,
        max_off_policy_strategy="drop",
        sampler_kwargs=OmegaConf.create({}),
        poll_interval=0.05,
        refill_fn=None,
    )
    transfer_queue.kv_put(
        key="v0", partition_id="val", tag={"is_prompt": True, "status": "finished", "global_steps": 0}
    )
    import torch
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    transfer_queue.kv_batch_put(
        keys=["v0_0_0"],
        fields=list_of_dict_to_tensordict([{"data_source": "ifeval", "rm_scores": torch.zeros(2)}]),
        tags=[{"status": "success", "global_steps": 0}],
        partition_id="val",
    )
    meta, metrics = buffer.sample(global_steps=0, partition_id="val", batch_size=1)
    assert meta.keys == ["v0_0_0"]
    assert not any(key.startswith(("sampler/", "train/")) for key in metrics)


def two_of_each_source(dataset: Any) -> list[dict[str, Any]]:
    """Draw rows from the policy until two of each source are in hand."""
    picked: dict[str, list[dict[str, Any]]] = {"iftrain": [], "logicif": []}
    while min(len(rows) for rows in picked.values()) < 2:
        row = dataset[0]
        if len(picked[row["data_source"]]) < 2:
            picked[row["data_source"]].append(row)
    return picked["iftrain"] + picked["logicif"]


class _FakeTrainer:
    """Gives the buffer a bound ``refill_fn`` whose ``__self__`` holds ``train_dataset``, as verl's trainer does."""

    def __init__(self, dataset: Any) -> None:
        self.train_dataset = dataset

    def refill(self, count: int) -> int:
        return 0
