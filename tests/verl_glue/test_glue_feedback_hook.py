"""RewardFeedbackReplayBuffer against a real local TransferQueue, with trajectories laid out as verl's V1
rollout loop writes them (prompt keys ``{uid}`` with status tags, trajectory keys ``{uid}_{session}_0`` carrying the
dataset row's fields plus ``rm_scores``), and the overlong handling (``train.overlong``) writing its penalty back or
clearing truncated trajectories in that queue."""

from __future__ import annotations

from collections.abc import Sequence
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


CAP, BUFFER, FACTOR = 8, 4, 0.5
"""``data.max_response_length``, DAPO's overlong buffer and penalty factor of the overlong tests."""

MULTI_TURN = [1, 1, 1, 0, 0, 1, 1]
"""A two-turn response: 3 generated tokens, a 2-token tool response (mask 0), 2 generated tokens."""


def put_agent_loop_group(tq: Any, uid: str, step: int, sessions: Sequence[tuple[Sequence[int], float]]) -> list[str]:
    """Write one finished GRPO group laid out as verl 0.9.1's V1 rollout writes it; returns its trajectory keys.

    ``sessions`` holds each response's ``response_mask`` (its length is the response's) and reward. The layout is
    verl's, built with verl's own ``AgentLoopOutput.as_dict`` (``verl/experimental/agent_loop/agent_loop.py``):

    - the reward worker's answer (``AgentLoopWorker._compute_score``) sets ``reward_score`` and
      ``extra_fields["reward_extra_info"]``; ``as_dict`` turns the score into ``rm_scores``, a float32 row as long
      as the response (tool tokens included) with the score at its last token, next to the int64 ``prompts``,
      ``responses`` and ``response_mask`` (1 for generated tokens, 0 for tool-response tokens);
    - ``AgentLoopWorkerTQ._agent_loop_postprocess`` (``verl/trainer/ppo/v1/agent_loop_tq.py``) adds the prompt's
      dataset fields and ``session_id``, ``loss_mask`` (the response mask), ``input_ids``, ``position_ids`` and
      ``multi_modal_inputs`` (empty for text), and puts each session's outputs with one ``kv_batch_put`` of
      ``list_of_dict_to_tensordict`` under ``{uid}_{session}_0``, tagged ``success`` with prompt, response and
      sequence lengths and the global steps;
    - the prompt key ``{uid}`` is registered ``pending`` by ``trainer_base._submit_batch_to_rollout`` and set
      ``finished`` by ``AgentLoopWorkerTQ._run_prompt`` once every session is in.

    TransferQueue stores each trajectory's rows as written and hands a batch of them back as jagged nested tensors
    (``SimpleStorageManager._pack_field_values``), which is what the buffer reads.
    """
    import torch
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    tq.kv_put(key=uid, partition_id="train", tag={"is_prompt": True, "status": "pending", "global_steps": step})
    prompt_ids = [5, 6, 7]
    row = {
        "data_source": "logicif",
        "extra_info": {"item_id": f"item-{uid}", "index": 0},
        "reward_model": {"style": "rule", "ground_truth": "{}"},
        "uid": uid,
        "global_steps": step,
        "agent_name": "single_turn_agent",
    }
    keys = []
    for session, (mask, reward) in enumerate(sessions):
        response_ids = [100 + session * 10 + t for t in range(len(mask))]
        output = AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids,
            response_mask=list(mask),
            reward_score=reward,
            num_turns=2 if 0 in mask else 1,
            metrics=AgentLoopMetrics(),
            extra_fields={"reward_extra_info": {"acc": reward}},
        )
        field = output.as_dict()
        field.update(row, session_id=session)
        field["loss_mask"] = field["response_mask"]
        field["input_ids"] = torch.tensor(prompt_ids + response_ids, dtype=torch.int64)
        field["position_ids"] = torch.arange(len(prompt_ids) + len(response_ids))
        field["multi_modal_inputs"] = {}
        tag = {
            "status": "success",
            "prompt_len": len(prompt_ids),
            "response_len": len(response_ids),
            "seq_len": len(prompt_ids) + len(response_ids),
            "global_steps": step,
            "min_global_steps": None,
            "max_global_steps": None,
        }
        keys.append(f"{uid}_{session}_0")
        tq.kv_batch_put(keys=keys[-1:], fields=list_of_dict_to_tensordict([field]), tags=[tag], partition_id="train")
    tq.kv_put(key=uid, partition_id="train", tag={"status": "finished"})
    return keys


def _overlong_buffer(**options: Any) -> Any:
    from omegaconf import OmegaConf
    from test_glue_tied_groups import FakeTrainer

    from rlif.verl_glue.v1_feedback import RewardFeedbackReplayBuffer

    return RewardFeedbackReplayBuffer(
        trainer_mode="sync",
        trainer_config=OmegaConf.create({}),
        max_off_policy_threshold=None,
        max_off_policy_strategy="drop",
        sampler_kwargs=OmegaConf.create({"rlif_max_response_length": CAP, **options}),
        poll_interval=0.05,
        refill_fn=FakeTrainer(None, batch_size=1, refills=[]).refill,
    )


def _rows(tq: Any, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Every stored field of each key, one plain dict per key (tensors as lists)."""
    data = tq.kv_batch_get(keys=list(keys), partition_id="train")
    names = list(data.keys())  # iterating a TensorDict itself yields its rows
    return {key: {name: _plain_value(data[name][i]) for name in names} for i, key in enumerate(keys)}


def _plain_value(value: Any) -> Any:
    import torch

    return value.tolist() if isinstance(value, torch.Tensor) else value


def test_soft_punish_lands_on_the_last_response_token_in_transfer_queue(transfer_queue: Any) -> None:
    """DAPO's penalty is added to ``rm_scores`` at the last token of exactly the long responses; every other value
    and tag stays as written. A response's length counts its tool tokens, as verl's ``dapo`` reward manager counts
    it (``experimental/reward_loop/reward_manager/dapo.py``: the attention mask over the whole response)."""
    from rlif.verl_glue.v1_feedback import OverlongOptions, soft_overlong_penalty

    tq = transfer_queue
    long_a = put_agent_loop_group(tq, "olA", 20, [([1] * 3, 1.0), ([1] * 6, 1.0), ([1] * CAP, 0.0)])
    long_b = put_agent_loop_group(tq, "olB", 20, [(MULTI_TURN, 1.0), ([1] * 2, 0.0)])
    keys = long_a + long_b
    before, tags_before = _rows(tq, keys), tq.kv_list(partition_id="train")["train"]
    # the layout the buffer reads: one jagged row per trajectory, as long as its response (verl's own
    # ``_compute_reward_colocate`` takes response lengths from these offsets too)
    layout = tq.kv_batch_get(keys=keys, partition_id="train", select_fields=["rm_scores", "response_mask"])
    assert layout["rm_scores"].is_nested and layout["response_mask"].is_nested
    assert layout["response_mask"].offsets().diff().tolist() == [3, 6, CAP, len(MULTI_TURN), 2]

    batch, metrics = _overlong_buffer(
        rlif_overlong="soft_punish", rlif_overlong_buffer=BUFFER, rlif_overlong_penalty=FACTOR
    ).sample(global_steps=20, partition_id="train", batch_size=2)

    assert sorted(batch.keys) == sorted(keys)
    after = _rows(tq, keys)
    options = OverlongOptions("soft_punish", CAP, BUFFER, FACTOR)
    # lengths 3 and 2: below the buffer; 6: -(6-4)/4*0.5; 8 (the cap): -0.5; the two-turn 7: -(7-4)/4*0.5
    expected = {"olA_1_0": -0.25, "olA_2_0": -0.5, "olB_0_0": -0.375}
    for key in keys:
        length = len(before[key]["response_mask"])
        assert soft_overlong_penalty(length, options) == pytest.approx(expected.get(key, 0.0))
        wanted = list(before[key]["rm_scores"])
        wanted[-1] += expected.get(key, 0.0)
        assert after[key]["rm_scores"] == pytest.approx(wanted), key
        assert {k: v for k, v in after[key].items() if k != "rm_scores"} == {
            k: v for k, v in before[key].items() if k != "rm_scores"
        }, key
    tags_after = tq.kv_list(partition_id="train")["train"]
    assert {key: tags_after[key] for key in keys} == {key: tags_before[key] for key in keys}
    assert metrics["sampler/overlong/truncated_rate"] == pytest.approx(1 / 5)
    assert metrics["sampler/overlong/mean_penalty"] == pytest.approx(sum(expected.values()) / 5)
    tq.kv_clear(partition_id="train", keys=keys)


def test_mask_clears_truncated_trajectories_from_transfer_queue(transfer_queue: Any) -> None:
    """Under ``mask`` each response that reached the cap (the two-turn one too, though it generated fewer tokens)
    leaves the batch and TransferQueue, with its group when fewer than two stay; the rest stay as written."""
    tq = transfer_queue
    truncated_turns = [1, 1, 1, 1, 0, 0, 1, 1]  # 6 generated tokens, but the response reached the cap
    group_a = put_agent_loop_group(tq, "omA", 21, [([1] * 3, 1.0), (truncated_turns, 0.0), ([1] * 5, 0.0)])
    group_b = put_agent_loop_group(tq, "omB", 21, [([1] * CAP, 0.0), ([1] * 4, 1.0)])
    group_c = put_agent_loop_group(tq, "omC", 21, [([1] * 2, 0.0), (MULTI_TURN, 1.0)])
    keys = group_a + group_b + group_c
    kept = ["omA_0_0", "omA_2_0", "omC_0_0", "omC_1_0"]
    before = _rows(tq, kept)

    batch, metrics = _overlong_buffer(rlif_overlong="mask").sample(global_steps=21, partition_id="train", batch_size=3)

    assert sorted(batch.keys) == kept
    stored = set(tq.kv_list(partition_id="train")["train"])
    assert stored & set(keys) == set(kept)
    assert _rows(tq, kept) == before
    assert metrics["sampler/overlong/masked_responses"] == 3.0 and metrics["sampler/overlong/masked_groups"] == 1.0
    assert metrics["sampler/overlong/truncated_rate"] == pytest.approx(2 / 7)
    tq.kv_clear(partition_id="train", keys=kept)
