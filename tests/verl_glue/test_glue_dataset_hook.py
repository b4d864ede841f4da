"""PolicySampledDataset inside verl 0.9.1's real data path: create_rl_dataset + StatefulDataLoader + collate_fn."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl")

from glue_testkit import SOURCES, data_config, tokenizer, write_data
from torchdata.stateful_dataloader import StatefulDataLoader
from verl.trainer.ppo.utils import create_rl_dataset, create_rl_sampler
from verl.utils.dataset.rl_dataset import collate_fn

from rlif.verl_glue.hooks import INTERVAL_KEY, PolicySampledDataset
from samplers import Record

POLICIES: dict[str, dict[str, Any]] = {
    "uniform": {},
    "fixed_ratio": {},
    "ema_reweight": {},
    "reward_curriculum": {"num_intervals": 3, "min_updates_per_unlock": 1, "check_every": 1, "threshold": 0.2},
    "learnability_ucb": {"num_intervals": 2},
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    root = tmp_path_factory.mktemp("glue")
    train, val = write_data(root / "data")
    return train, val, tokenizer(root / "tok")


def build(files: tuple[Path, Path, Any], policy: str, **extra: Any) -> tuple[Any, Any, StatefulDataLoader]:
    train, val, tok = files
    config = data_config(train, val, policy, POLICIES.get(policy, {}), **extra)
    train_ds = create_rl_dataset(config.train_files, config, tok, None, is_train=True)
    val_ds = create_rl_dataset(config.val_files, config, tok, None, is_train=False)
    loader = StatefulDataLoader(
        dataset=train_ds,
        batch_size=config.train_batch_size,
        num_workers=config.dataloader_num_workers,
        drop_last=True,
        collate_fn=collate_fn,
        sampler=create_rl_sampler(config, train_ds),
    )
    return train_ds, val_ds, loader


def fake_feedback(dataset: PolicySampledDataset, batch: dict[str, Any], step: int) -> dict[str, float]:
    """Rewards that differ by source and response, in groups of two, like a GRPO step with n=2."""
    records = []
    for i, (source, extra) in enumerate(zip(batch["data_source"], batch["extra_info"], strict=True)):
        for session in range(2):
            reward = 0.9 if source == "iftrain" else 0.1 * ((i + session + step) % 3)
            records.append(Record(source, int(extra[INTERVAL_KEY]), reward, group=f"g{step}-{i}"))
    return dataset.feedback(records)


def item_ids(batch: dict[str, Any]) -> list[str]:
    return [extra["item_id"] for extra in batch["extra_info"]]


def test_train_rows_come_from_the_policy_and_val_is_stock(files: tuple[Path, Path, Any]) -> None:
    train_ds, val_ds, loader = build(files, "uniform")
    assert isinstance(train_ds, PolicySampledDataset) and train_ds.is_train
    assert not val_ds.is_train and val_ds.policy is None
    assert [val_ds[i]["extra_info"]["item_id"] for i in range(3)] == ["iftrain-0", "iftrain-1", "iftrain-2"]
    seen = Counter()
    iterator = iter(loader)
    for _ in range(12):
        batch = next(iterator)
        assert set(batch) >= {"data_source", "raw_prompt", "extra_info", "reward_model"}
        seen.update(batch["data_source"])
    # uniform over two pools: both sources drawn about equally although logicif has 3x the rows
    assert set(seen) == set(SOURCES)
    assert abs(seen["iftrain"] - seen["logicif"]) < 20


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_data_pt_round_trip_gives_identical_next_batches(
    files: tuple[Path, Path, Any], policy: str, tmp_path: Path
) -> None:
    import torch

    train_ds, _, loader = build(files, policy)
    iterator = iter(loader)
    for step in range(3):
        fake_feedback(train_ds, next(iterator), step)
    # exactly what verl 0.9.1's trainer does at a checkpoint and on resume (trainer_base.py: save / load data.pt)
    torch.save(loader.state_dict(), tmp_path / "data.pt")
    state = torch.load(tmp_path / "data.pt", weights_only=False)
    expected = []
    for step in range(3, 6):
        batch = next(iterator)
        expected.append(item_ids(batch))
        fake_feedback(train_ds, batch, step)

    restored_ds, _, restored_loader = build(files, policy)
    restored_loader.load_state_dict(state)
    restored_iterator = iter(restored_loader)
    got = []
    for step in range(3, 6):
        batch = next(restored_iterator)
        got.append(item_ids(batch))
        fake_feedback(restored_ds, batch, step)
    assert got == expected
    assert restored_ds.state_dict() == train_ds.state_dict()


def test_feedback_returns_per_source_and_sampler_metrics(files: tuple[Path, Path, Any]) -> None:
    train_ds, _, loader = build(files, "ema_reweight")
    metrics = fake_feedback(train_ds, next(iter(loader)), 0)
    assert any(k.startswith("sampler/") for k in metrics)
    for source in {k.split("/")[1] for k in metrics if k.startswith("train/")}:
        assert 0.0 <= metrics[f"train/{source}/reward_mean"] <= 1.0
        assert metrics[f"train/{source}/count"] > 0


def test_ema_moves_draws_to_the_weaker_source_through_verl_data_path(files: tuple[Path, Path, Any]) -> None:
    train_ds, _, loader = build(files, "ema_reweight")
    iterator = iter(loader)
    for step in range(8):  # 64 rows / batch 4 = 16 batches per epoch
        fake_feedback(train_ds, next(iterator), step)
    late = Counter()
    for _ in range(8):
        late.update(next(iterator)["data_source"])
    assert late["logicif"] > late["iftrain"]  # logicif's rewards are lower, so it is drawn more


def test_prefetching_workers_are_refused(files: tuple[Path, Path, Any]) -> None:
    with pytest.raises(ValueError, match="dataloader_num_workers=0"):
        build(files, "uniform", **{"data.dataloader_num_workers": 2})


def test_unknown_policy_is_a_clear_error(files: tuple[Path, Path, Any]) -> None:
    with pytest.raises(ValueError, match="unknown sampling policy"):
        build(files, "no_such_policy")


def test_missing_difficulty_names_file_row_and_field(files: tuple[Path, Path, Any], tmp_path: Path) -> None:
    from glue_testkit import make_rows

    from rlif.data.files import write_rows_atomic

    rows = make_rows("train")
    del rows[20]["extra_info"]["difficulty"]  # a logicif row: the curriculum splits logicif by difficulty
    broken = write_rows_atomic(rows, tmp_path / "broken.parquet")
    with pytest.raises(ValueError, match=r"broken\.parquet: row 20 field extra_info\.difficulty"):
        build((broken, files[1], files[2]), "reward_curriculum")
    build((broken, files[1], files[2]), "uniform")  # a policy that splits nothing does not need it


def _saved_state(files: tuple[Path, Path, Any], policy: str, **extra: Any) -> dict[str, Any]:
    train_ds, _, loader = build(files, policy, **extra)
    iterator = iter(loader)
    for step in range(3):
        fake_feedback(train_ds, next(iterator), step)
    return loader.state_dict()


def test_resume_onto_changed_data_is_refused_naming_the_pool(files: tuple[Path, Path, Any], tmp_path: Path) -> None:
    from glue_testkit import make_rows

    from rlif.data.files import write_rows_atomic

    state = _saved_state(files, "reward_curriculum")
    rows = make_rows("train")
    for row in rows:  # the same LogicIF rows with their difficulties reversed
        if row["data_source"] == "logicif":
            row["extra_info"]["difficulty"] = 100.0 - row["extra_info"]["difficulty"]
    reversed_file = write_rows_atomic(rows, tmp_path / "reversed.parquet")
    _, _, loader = build((reversed_file, files[1], files[2]), "reward_curriculum")
    loader.load_state_dict(state)  # torchdata hands the state to the dataset when iteration starts
    with pytest.raises(ValueError, match=r"pool 'logicif': interval 0 difficulty range.*on_data_change=resplit"):
        next(iter(loader))
    doubled = write_rows_atomic(make_rows("train") + make_rows("train")[16:], tmp_path / "doubled.parquet")
    _, _, loader = build((doubled, files[1], files[2]), "reward_curriculum")
    loader.load_state_dict(state)
    with pytest.raises(ValueError, match=r"pool 'logicif': rows 48 -> 96"):
        next(iter(loader))
    # the documented setting re-splits and continues; the unchanged source keeps its state
    dataset, _, loader = build(
        (doubled, files[1], files[2]), "reward_curriculum", **{"+data.rlif_sampler.on_data_change": "resplit"}
    )
    loader.load_state_dict(state)
    batch = next(iter(loader))
    assert len(batch["data_source"]) == 4
    metrics = fake_feedback(dataset, batch, 3)
    assert metrics["sampler/newest_interval/logicif"] >= 0


def test_resume_onto_the_same_data_passes_the_fingerprint(files: tuple[Path, Path, Any]) -> None:
    state = _saved_state(files, "ema_reweight")
    dataset, _, loader = build(files, "ema_reweight")
    loader.load_state_dict(state)
    next(iter(loader))
    assert set(dataset.state_dict()["policy"]) == {"fingerprint", "state"}
    assert dataset.state_dict()["policy"]["fingerprint"]["logicif"]["rows"] == SOURCES["logicif"]


def test_a_small_pool_warns_once_with_its_numbers(
    files: tuple[Path, Path, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="rlif.samplers"):
        build(files, "fixed_ratio", **{"data.train_batch_size": 64})
    messages = [r.getMessage() for r in caplog.records if "drawn" in r.getMessage()]
    # iftrain: 16 rows at half of 64 prompts = 32 draws per batch
    assert messages == [
        "sampler pool 'iftrain' interval 0 has 16 rows but is drawn 32.0 times per batch of 64 (probability 0.500): "
        "its prompts repeat within a batch; add rows, lower its weight, or use fewer intervals"
    ]


def test_all_nan_rewards_warn_once_and_the_metric_is_always_logged(
    files: tuple[Path, Path, Any], caplog: pytest.LogCaptureFixture
) -> None:
    dataset, _, _ = build(files, "ema_reweight")
    records = [Record("iftrain", 0, float("nan"), group="a"), Record("logicif", 0, 1.0, group="b")]
    with caplog.at_level("WARNING", logger="rlif.samplers"):
        for _ in range(8):
            metrics = dataset.feedback(records)
            assert metrics["sampler/nonfinite_reward_share/iftrain"] == 1.0
            assert metrics["sampler/nonfinite_reward_share/logicif"] == 0.0
    warnings = [r.getMessage() for r in caplog.records if "non-finite" in r.getMessage()]
    assert len(warnings) == 1 and "'iftrain'" in warnings[0] and "5 updates" in warnings[0]


def test_reward_flag_rates_per_source() -> None:
    from rlif.verl_glue.hooks import reward_flag_metrics

    extras = [
        {"reward_extra_info": {"if_over_length_cap": 1.0}},
        {"reward_extra_info": {"if_over_length_cap": 0.0}},
        {"reward_extra_info": {"if_over_length_cap": None}},
        {},
    ]
    sources = ["iftrain", "iftrain", "logicif", "logicif"]
    assert reward_flag_metrics(sources, extras) == {"train/iftrain/if_over_length_cap": 0.5}


def legacy_batch(batch: dict[str, Any], step: int) -> Any:
    """The ``DataProto`` verl's legacy trainer passes to ``on_batch_end``: two responses per prompt, the reward on
    the last response token, reward extras as columns, rows reordered (``trainer.balance_batch``)."""
    import numpy as np
    import torch
    from verl import DataProto

    sources, extras, uids, scores, flags = [], [], [], [], []
    for i, (source, extra) in enumerate(zip(batch["data_source"], batch["extra_info"], strict=True)):
        for session in range(2):
            sources.append(source)
            extras.append(extra)
            uids.append(f"u{step}-{i}")
            row = torch.zeros(3)
            row[-1] = 0.9 if source == "iftrain" else 0.1 * ((i + session + step) % 3)
            scores.append(row)
            flags.append(0.0 if source == "iftrain" else None)
    order = list(reversed(range(len(sources))))
    return DataProto.from_dict(
        tensors={"token_level_scores": torch.stack(scores)[order]},
        non_tensors={
            "data_source": np.array(sources, dtype=object)[order],
            "extra_info": np.array(extras, dtype=object)[order],
            "uid": np.array(uids, dtype=object)[order],
            "if_over_length_cap": np.array(flags, dtype=object)[order],
        },
    )


def test_legacy_feedback_logs_per_step_and_resumes_exactly(files: tuple[Path, Path, Any], tmp_path: Path) -> None:
    """verl's legacy trainer saves ``data.pt`` and then calls ``on_batch_end``; resuming from that checkpoint must
    draw what the run that went on drew, which needs the state the dataset saved after the feedback."""
    import json

    import torch

    from rlif.verl_glue.hooks import LEGACY_METRICS, LEGACY_STATE

    ckpt = tmp_path / "ckpt"
    feedback_dir = {"+data.rlif_sampler.feedback_dir": str(ckpt)}
    train_ds, _, loader = build(files, "ema_reweight", **feedback_dir)
    iterator = iter(loader)
    for step in range(1, 4):
        batch = next(iterator)
        (ckpt / f"global_step_{step}").mkdir(parents=True)
        torch.save(loader.state_dict(), ckpt / f"global_step_{step}" / "data.pt")  # verl saves first
        train_ds.on_batch_end(batch=legacy_batch(batch, step))
        assert (ckpt / f"global_step_{step}" / LEGACY_STATE).is_file()
    expected = []
    for step in range(4, 7):
        batch = next(iterator)
        expected.append(item_ids(batch))
        train_ds.on_batch_end(batch=legacy_batch(batch, step))

    lines = [json.loads(line) for line in (ckpt / LEGACY_METRICS).read_text().splitlines()]
    assert [line["step"] for line in lines] == [1, 2, 3, 4, 5, 6]
    for line in lines:
        metrics = line["data"]
        assert any(key.startswith("sampler/weight/") for key in metrics)
        assert sum(v for k, v in metrics.items() if k.endswith("/count")) == 8  # 4 prompts x 2 responses
        if "train/iftrain/count" in metrics:
            assert metrics["train/iftrain/reward_mean"] == pytest.approx(0.9)
            assert metrics["train/iftrain/if_over_length_cap"] == 0.0
        assert "train/logicif/if_over_length_cap" not in metrics  # None: not applicable

    restored_ds, _, restored_loader = build(files, "ema_reweight", **feedback_dir)
    restored_loader.load_state_dict(torch.load(ckpt / "global_step_3" / "data.pt", weights_only=False))
    restored_iterator = iter(restored_loader)
    got = []
    for step in range(4, 7):
        batch = next(restored_iterator)
        got.append(item_ids(batch))
        restored_ds.on_batch_end(batch=legacy_batch(batch, step))
    assert got == expected
    assert restored_ds.state_dict() == train_ds.state_dict()


def test_on_batch_end_without_a_feedback_dir_is_refused(files: tuple[Path, Path, Any]) -> None:
    train_ds, _, loader = build(files, "ema_reweight")
    with pytest.raises(RuntimeError, match=r"train\.trainer: legacy"):
        train_ds.on_batch_end(batch=legacy_batch(next(iter(loader)), 1))


def test_legacy_records_carry_success_length_truncation_and_first_exposure(
    files: tuple[Path, Path, Any], tmp_path: Path
) -> None:
    """The success indicator comes from the reward extra ``acc``, the length from the response part of the
    attention mask (truncated at the padded width), first exposure from the dataset's stamp; the exposure metrics
    reach the legacy metrics file."""
    import json

    import numpy as np
    import torch
    from verl import DataProto

    from rlif.verl_glue.hooks import LEGACY_METRICS, batch_records

    ckpt = tmp_path / "ckpt"
    train_ds, _, loader = build(files, "reward_curriculum", **{"+data.rlif_sampler.feedback_dir": str(ckpt)})
    batch = next(iter(loader))
    size = len(batch["data_source"])
    width = 4
    lengths = [width if i % 2 == 0 else 1 for i in range(size)]
    mask = torch.zeros(size, 3 + width, dtype=torch.long)
    mask[:, :3] = 1
    for i, n in enumerate(lengths):
        mask[i, 3 : 3 + n] = 1
    proto = DataProto.from_dict(
        tensors={
            "token_level_scores": torch.full((size, width), 0.25),
            "responses": torch.zeros(size, width, dtype=torch.long),
            "attention_mask": mask,
        },
        non_tensors={
            "data_source": np.array(batch["data_source"], dtype=object),
            "extra_info": np.array(batch["extra_info"], dtype=object),
            "uid": np.array([f"u{i}" for i in range(size)], dtype=object),
            "acc": np.array([float(i % 2) for i in range(size)], dtype=object),
        },
    )
    records, _ = batch_records(proto)
    assert [r.success for r in records] == [float(i % 2) for i in range(size)]
    assert [r.response_tokens for r in records] == lengths
    assert [r.truncated for r in records] == [n == width for n in lengths]
    assert all(r.exposure is not None for r in records) and any(r.exposure == 0 for r in records)
    assert all(r.reward == 1.0 for r in records)  # the shaped score, kept apart from success
    train_ds.on_batch_end(batch=proto)
    logged = json.loads((ckpt / LEGACY_METRICS).read_text().splitlines()[-1])["data"]
    for source in set(batch["data_source"]):
        assert f"exposure/prompts/{source}" in logged and f"exposure/tokens/{source}" in logged
        assert f"exposure/truncated_share/{source}" in logged and f"exposure/unique_prompts/{source}" in logged
    assert any(key.startswith("exposure/draws_per_row/") for key in logged)
    assert any(key.startswith("exposure/cum_prompt_share/") for key in logged)
    assert any(key.startswith("sampler/gate_mean/") for key in logged)
