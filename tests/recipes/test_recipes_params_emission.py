"""Sampler params travel as one JSON override: any key survives generation, bash, Hydra's compose and the dataset
hook.

Composes rlif's trainer config (verl 0.9.1's real ``ppo_trainer`` underneath) with Hydra; verl itself is not
imported, so it runs in seconds.
"""

from __future__ import annotations

import importlib.util
import subprocess

import pytest
from omegaconf import OmegaConf

from rlif.recipes.generate import CPU_MODEL_PLACEHOLDER
from rlif.recipes.render import render_script
from rlif.runs.matrix import SHIPPED_MATRIX, default_run, load_matrix
from rlif.verl_glue.config import trainer_composer
from rlif.verl_glue.hooks import _sampler_config
from rlif.verl_glue.overrides import (
    Override,
    all_overrides,
    build_overrides,
    hydra_value,
    json_text,
    runtime_values,
    substitute,
)

ODD_PARAMS = {
    "weights": {"graph/tsp": 2, "graph/mcp": 1.5, "iftrain": 1},
    'it\'s $HOME ${oc.env:USER} \\ "q" é': ["a,b]", "{x}", None, True],
    "nested": {"k=v": {"": 0}},
}


def _texts(run) -> list[str]:
    values = runtime_values(run, "/repo", CPU_MODEL_PLACEHOLDER if run.cpu_mode else None)
    return [substitute(o, values) for o in all_overrides(run)]


DOTTED_KEYS_IMPOSSIBLE = {"cpu_demo"}
"""Runs whose params hold a key the earlier emission could not write (the demo's weights per source ``graph/mcp``:
Hydra's dotted keys have no quoting)."""


def _dotted_params(run) -> list[str]:
    """The earlier emission: one ``+data.rlif_sampler.params.<dotted key>=<value>`` per leaf."""

    def leaves(prefix: str, mapping):
        for key, value in mapping.items():
            if isinstance(value, dict):
                yield from leaves(f"{prefix}.{key}", value)
            else:
                yield Override(f"{prefix}.{key}", hydra_value(value), plus=True).text

    return list(leaves("data.rlif_sampler.params", run.sampler.params))


@pytest.fixture(scope="module")
def compose():
    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl is not installed")
    with trainer_composer() as compose_one:
        yield compose_one


def test_a_source_key_with_a_slash_reaches_the_dataset_hook(compose):
    run = default_run(train_files=["x.parquet"], sampler={"name": "fixed_ratio", "params": ODD_PARAMS})
    texts = _texts(run)
    params_override = [t for t in texts if t.startswith("+data.rlif_sampler.params=")]
    assert len(params_override) == 1
    cfg = compose(texts)
    name, params, seed, on_data_change = _sampler_config(cfg.data)
    assert (name, params, seed, on_data_change) == ("fixed_ratio", ODD_PARAMS, run.sampler.seed, "error")


def test_reward_kwargs_reach_the_reward_entry_as_written(compose):
    run = default_run(
        train_files=["x.parquet"], reward={"kwargs": {"graph_reward": "binary_format", "if_reward": "strict"}}
    )
    cfg = compose(_texts(run))
    assert OmegaConf.to_container(cfg.reward.custom_reward_function.reward_kwargs) == run.reward.kwargs


def test_every_shipped_run_composes_to_the_same_config_as_before(compose):
    """Against the earlier one-override-per-leaf emission: the composed configs are equal once the params node is
    read as the dataset hook reads it, and everything else is identical."""
    matrix = load_matrix(SHIPPED_MATRIX)
    runs = [*matrix.runs, *(matrix.in_cpu_mode(r) for r in matrix.runs if not r.cpu_mode and r.sampler.params)]
    runs = [r for r in runs if r.name not in DOTTED_KEYS_IMPOSSIBLE]
    # the emission depends on the sampler settings and the CPU mode only: one run of each is enough
    distinct = {(r.sampler.name, json_text(r.sampler.params), r.cpu_mode): r for r in reversed(runs)}
    runs = list(distinct.values())
    with_params = 0
    for run in runs:
        texts = _texts(run)
        before = [t for t in texts if not t.startswith("+data.rlif_sampler.params=")]
        at = next((i for i, t in enumerate(texts) if t.startswith("+data.rlif_sampler.params=")), len(texts))
        before[at:at] = _dotted_params(run)
        new, old = compose(texts), compose(before)
        assert _sampler_config(new.data) == _sampler_config(old.data), run.name
        new_tree, old_tree = OmegaConf.to_container(new), OmegaConf.to_container(old)
        new_tree["data"]["rlif_sampler"].pop("params", None)
        old_tree["data"]["rlif_sampler"].pop("params", None)
        assert new_tree == old_tree, run.name
        with_params += bool(run.sampler.params)
    assert with_params >= 6  # the stage-2 policies and the graph curricula are covered


def test_the_generated_script_passes_the_params_through_bash_unchanged(compose):
    """The script's ``SAMPLER_PARAMS='...'`` line and its override word, run by bash, give Hydra the JSON text."""
    run = default_run(train_files=["x.parquet"], sampler={"name": "fixed_ratio", "params": ODD_PARAMS})
    script = render_script(run, build_overrides(run))
    (assignment,) = [line for line in script.splitlines() if line.startswith("SAMPLER_PARAMS=")]
    (word,) = [line.strip() for line in script.splitlines() if "data.rlif_sampler.params=" in line]
    printed = subprocess.run(
        ["bash", "-c", f"set -eu; {assignment}; printf '%s\\n' {word}"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert printed == ["+data.rlif_sampler.params='" + json_text(ODD_PARAMS) + "'"]
    cfg = compose([*printed, "+data.rlif_sampler.name=fixed_ratio"])
    assert _sampler_config(cfg.data)[1] == ODD_PARAMS


def test_json_text_refuses_what_json_cannot_carry():
    with pytest.raises(ValueError, match=r"cannot write .* as JSON"):
        json_text({"x": float("nan")})
    with pytest.raises(ValueError, match=r"cannot write .* as JSON"):
        json_text({"x": {1, 2}})


def test_hook_refuses_params_that_are_not_an_object():
    data = OmegaConf.create({"rlif_sampler": {"name": "uniform", "params": "[1, 2]"}})
    with pytest.raises(ValueError, match=r"data.rlif_sampler.params must be a JSON object or a mapping, got \[1, 2\]"):
        _sampler_config(data)
    data = OmegaConf.create({"rlif_sampler": {"name": "uniform", "params": "{oops"}})
    with pytest.raises(ValueError, match=r"data.rlif_sampler.params: not JSON text"):
        _sampler_config(data)
    # a mapping composed by hand still works
    data = OmegaConf.create({"rlif_sampler": {"name": "uniform", "params": {"alpha": 0.1}}})
    assert _sampler_config(data)[1] == {"alpha": 0.1}
