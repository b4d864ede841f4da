"""The CPU demo's overrides: the matrix's CPU run as the generator builds it, plus the demo's named deltas."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlif.cpu_demo import DEMO_SAMPLER, DEMO_SIZES, MATRIX, DemoLayout, cpu_run, demo_deltas, demo_overrides
from rlif.recipes.overrides import all_overrides, parse_override

LAYOUT = DemoLayout(Path("/demo"))


def overrides_by_key(texts: list[str]) -> dict[str, str]:
    parsed = [parse_override(text) for text in texts]
    keys = [o.key for o in parsed]
    assert len(keys) == len(set(keys)), "a key is set twice"
    return {o.key: o.text for o in parsed}


def demo(total_steps: int = 2, trainer_mode: str = "sync", matrix_path: Path = MATRIX) -> dict[str, str]:
    texts = demo_overrides(
        Path("/m"), Path("/t.parquet"), Path("/v.parquet"), LAYOUT, total_steps, trainer_mode=trainer_mode,
        matrix_path=matrix_path,
    )  # fmt: skip
    return overrides_by_key(texts)


def test_every_key_not_in_a_delta_is_the_matrix_cpu_run_s() -> None:
    deltas = {parse_override(t).key for t in (*DEMO_SIZES, *DEMO_SAMPLER, *demo_deltas(2, "sync"))}
    run = {o.key: o.text for o in all_overrides(cpu_run())}  # the last of a repeated key wins, as in Hydra
    ours = demo()
    assert not [key for key in run if key not in ours and not key.startswith("data.rlif_sampler.")]
    for key, text in ours.items():
        if key in deltas:
            continue
        if "${" in run[key]:  # the run's placeholders get the demo's paths
            assert "${" not in text and text.split("=")[0] == run[key].split("=")[0], key
        else:
            assert text == run[key], key


def test_the_demo_s_own_settings() -> None:
    ours = demo(total_steps=3)
    assert ours["trainer.experiment_name"] == "trainer.experiment_name=cpu_demo"
    assert ours["trainer.total_training_steps"] == "trainer.total_training_steps=3"
    assert ours["trainer.save_freq"] == "trainer.save_freq=1"
    assert ours["trainer.logger"] == "trainer.logger=[console,file]"
    assert ours["trainer.default_local_dir"] == f"trainer.default_local_dir={LAYOUT.checkpoints.resolve()}"
    assert ours["data.train_files"] == f"data.train_files=[{Path('/t.parquet').resolve()}]"
    assert ours["actor_rollout_ref.model.path"] == f"actor_rollout_ref.model.path={Path('/m').resolve()}"
    # an added key stays added when a delta replaces its value
    assert ours["data.apply_chat_template_kwargs.enable_thinking"].startswith("+") and ours[
        "data.apply_chat_template_kwargs.enable_thinking"
    ].endswith("=false")
    assert {k: v for k, v in ours.items() if k.startswith("data.rlif_sampler.")} == {
        parse_override(t).key: t for t in DEMO_SAMPLER
    }
    assert ours["trainer.device"] == "trainer.device=cpu"  # the CPU support's overrides are in


def test_async_mode_uses_the_async_feedback_buffer() -> None:
    ours = demo(trainer_mode="colocate_async")
    assert ours["trainer.v1.trainer_mode"] == "trainer.v1.trainer_mode=colocate_async"
    assert ours["trainer.v1.sampler.custom_sampler.name"].endswith("=AsyncRewardFeedbackReplayBuffer")


def test_the_learning_rate_follows_the_matrix(tmp_path: Path) -> None:
    text = MATRIX.read_text(encoding="utf-8")
    assert "\n    lr: 1.0e-6\n" in text
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(text.replace("\n    lr: 1.0e-6\n", "\n    lr: 3.0e-6\n", 1), encoding="utf-8")
    assert demo(matrix_path=matrix)["actor_rollout_ref.actor.optim.lr"] == "actor_rollout_ref.actor.optim.lr=3e-06"


def test_a_matrix_without_one_cpu_run_is_refused(tmp_path: Path) -> None:
    text = MATRIX.read_text(encoding="utf-8")
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(text.replace("    cpu_mode: true\n", ""), encoding="utf-8")
    with pytest.raises(ValueError, match=r"matrix.yaml: the CPU demo needs exactly one run with cpu_mode: true, found"):
        cpu_run(matrix)
