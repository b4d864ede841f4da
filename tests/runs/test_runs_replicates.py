"""``seeds``: one run per seed, each named and seeded apart, from a run entry or a group."""

from __future__ import annotations

import pytest
from run_matrices import with_shipped_defaults

from rlif.runs.matrix import SHIPPED_MATRIX, load_matrix
from rlif.runs.spec import Replicate
from rlif.verl_glue.overrides import REPLICATE_SEED_KEYS, build_overrides


def _load(tmp_path, text: str):
    path = tmp_path / "matrix.yaml"
    path.write_text(with_shipped_defaults(text), encoding="utf-8")
    return load_matrix(path)


def test_seeds_make_one_run_per_seed_with_the_seed_in_every_seed_key(tmp_path):
    matrix = _load(
        tmp_path,
        "runs:\n"
        "  - {name: arm, stage: s, description: d, train_files: [x.parquet], seeds: [1, 2, 3]}\n"
        "  - {name: single, stage: s, description: d, train_files: [x.parquet]}\n",
    )
    assert matrix.names() == ["arm_s1", "arm_s2", "arm_s3", "single"]
    second = matrix.runs[1]
    assert second.replicate == Replicate(arm="arm", seed=2) and second.arm == "arm"
    assert second.sampler.seed == 2
    texts = {o.text for o in build_overrides(second)}
    assert {f"{key}=2" for key in REPLICATE_SEED_KEYS} <= texts
    assert "+data.rlif_sampler.seed=2" in texts
    assert "trainer.experiment_name=arm_s2" in texts
    single = {o.key for o in build_overrides(matrix.runs[3])}
    assert not single & set(REPLICATE_SEED_KEYS)  # a run without seeds keeps verl's seeds
    # the declared name selects its replicates; a replicate rebuilds from its raw mapping
    assert [r.name for r in matrix.select(names=["arm"])] == ["arm_s1", "arm_s2", "arm_s3"]
    cpu = matrix.in_cpu_mode(second)
    assert cpu.name == "arm_s2_cpu" and cpu.replicate == Replicate(arm="arm", seed=2)


def test_a_group_can_declare_seeds(tmp_path):
    matrix = _load(
        tmp_path,
        "groups: {g: {seeds: [4, 5]}}\n"
        "runs:\n"
        "  - {name: a, stage: s, description: d, group: g, train_files: [x.parquet]}\n",
    )
    assert matrix.names() == ["a_s4", "a_s5"]
    assert matrix.merged_raw("a_s5")["sampler"]["seed"] == 5 and "seeds" not in matrix.merged_raw("a_s5")


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ("seeds: []", "non-empty list of integers"),
        ("seeds: [1, 1]", "seed twice"),
        ("seeds: [true]", "non-empty list of integers"),
        ("replicate: {arm: x, seed: 1}", "replicate is set by seeds"),
    ],
)
def test_bad_seeds_fail_naming_the_run(tmp_path, entry, fragment):
    with pytest.raises(ValueError, match=fragment) as err:
        _load(tmp_path, f"runs:\n  - {{name: a, stage: s, description: d, train_files: [x.parquet], {entry}}}\n")
    assert "run 'a'" in str(err.value)


def test_a_replicate_name_cannot_clash_with_another_run(tmp_path):
    with pytest.raises(ValueError, match="duplicate run name 'a_s1'"):
        _load(
            tmp_path,
            "runs:\n"
            "  - {name: a, stage: s, description: d, train_files: [x.parquet], seeds: [1]}\n"
            "  - {name: a_s1, stage: s, description: d, train_files: [x.parquet]}\n",
        )


def test_every_stage2_arm_runs_three_seeds():
    stage2 = [run for run in load_matrix(SHIPPED_MATRIX).runs if run.stage == "stage2"]
    arms = {run.arm for run in stage2}
    assert len(stage2) == 27 and len(arms) == 9
    assert all(run.replicate is not None and run.replicate.seed in (1, 2, 3) for run in stage2)
    for name in ("1v1", "ema", "ema_rewardCurriculum", "ema_rewardCurriculum_decay"):  # the group's four keep names
        assert f"stage2_qwen17b_think_{name}" in arms
