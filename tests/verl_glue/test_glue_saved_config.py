"""read_saved_config: the run-describing values of a saved verl config, by verl 0.9.1's key names."""

from __future__ import annotations

import pytest
import yaml

from rlif.verl_glue.saved_config import SavedRunConfig, read_saved_config

SAVED = """
actor_rollout_ref: {model: {path: Qwen/Qwen3-1.7B}}
data:
  train_files: [/repo/verl_data/a.parquet, /repo/verl_data/b.parquet]
  val_files: /repo/verl_data/val.parquet
  rlif_sampler: {name: fixed_ratio, params: '{"weights":{"graph/tsp":2,"iftrain":1}}', seed: 1, on_data_change: error}
trainer: {total_training_steps: 500}
reward:
  custom_reward_function: {path: pkg://rlif.verl_glue.hooks, name: compute_score, reward_kwargs: {if_reward: fraction}}
"""


def test_reads_the_six_values_of_a_generated_run() -> None:
    info = read_saved_config(yaml.safe_load(SAVED))
    assert info == SavedRunConfig(
        model_path="Qwen/Qwen3-1.7B",
        total_training_steps=500,
        train_files=("/repo/verl_data/a.parquet", "/repo/verl_data/b.parquet"),
        val_files=("/repo/verl_data/val.parquet",),
        sampler_name="fixed_ratio",
        sampler_params={"weights": {"graph/tsp": 2, "iftrain": 1}},
        sampler_seed=1,
        reward_path="pkg://rlif.verl_glue.hooks",
        reward_name="compute_score",
        reward_kwargs={"if_reward": "fraction"},
    )


def test_missing_nodes_give_empty_values() -> None:
    assert read_saved_config({"trainer": {"total_training_steps": None}}) == SavedRunConfig()


def test_a_hand_written_params_mapping_is_kept() -> None:
    info = read_saved_config({"data": {"rlif_sampler": {"name": "ema_reweight", "params": {"alpha": 0.1}}}})
    assert info.sampler_params == {"alpha": 0.1}


def test_malformed_values_are_named() -> None:
    with pytest.raises(ValueError, match=r"trainer\.total_training_steps"):
        read_saved_config({"trainer": {"total_training_steps": "500"}})
    with pytest.raises(ValueError, match=r"data\.rlif_sampler\.params"):
        read_saved_config({"data": {"rlif_sampler": {"params": "{not json"}}})
