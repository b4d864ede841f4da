"""Shared builders for the verl-glue tests: a tiny tokenizer, small parquet files, verl's real data config."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rlif.data.files import write_rows_atomic
from rlif.demo_assets import build_tokenizer

SOURCES = {"iftrain": 16, "logicif": 48}
"""Rows per source in the test data; LogicIF rows get increasing difficulty so curricula have intervals."""


def make_rows(split: str) -> list[dict[str, Any]]:
    """Rows of two sources in verl's schema (ground truth is irrelevant to sampling and not scored here)."""
    rows = []
    for source, count in SOURCES.items():
        for i in range(count):
            rows.append(
                {
                    "data_source": source,
                    "prompt": [{"role": "user", "content": f"{source} question number {i}"}],
                    "ability": "test",
                    "reward_model": {"style": "rule", "ground_truth": "{}"},
                    "extra_info": {
                        "split": split,
                        "index": len(rows),
                        "item_id": f"{source}-{i}",
                        "difficulty": float(i) if source == "logicif" else 0.0,
                    },
                }
            )
    return rows


def write_data(directory: Path) -> tuple[Path, Path]:
    """Write train and val parquet files; returns their paths."""
    train = write_rows_atomic(make_rows("train"), directory / "train.parquet")
    val = write_rows_atomic(make_rows("val")[:6], directory / "val.parquet")
    return train, val


def data_config(train: Path, val: Path, policy: str, params: dict[str, Any] | None = None, **extra: Any) -> Any:
    """verl 0.9.1's real ``data`` config node composed by Hydra, pointed at rlif's dataset hook."""
    import hydra
    import verl

    overrides = [
        f"data.train_files={train}",
        f"data.val_files={val}",
        "data.train_batch_size=4",
        "data.max_prompt_length=64",
        "data.dataloader_num_workers=0",
        "data.custom_cls.path=pkg://rlif.verl_glue.hooks",
        "data.custom_cls.name=PolicySampledDataset",
        f"+data.rlif_sampler.name={policy}",
        "+data.rlif_sampler.seed=3",
    ]
    for key, value in (params or {}).items():
        overrides.append(f"+data.rlif_sampler.params.{key}={value}")
    overrides += [f"{k}={v}" for k, v in extra.items()]
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with hydra.initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra.compose(config_name="ppo_trainer", overrides=overrides).data


def tokenizer(directory: Path) -> Any:
    """The CPU demo's tiny ChatML tokenizer."""
    return build_tokenizer(directory)
