"""Reward families declare what evaluation, its tables and the training hook report about them, so no code outside
a family's module names a family or a source.

Two checks: no module of ``rlif.eval``, ``rlif.report`` or ``rlif.verl_glue`` holds a family name or a data source
as a string literal (docstrings aside), and a family registered here, in a test module only, shows up everywhere:
its metrics with their direction, its groups, its mean over sources, its tables, its sample details and its
training flags.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rewards
from rewards.registry import (
    Evaluation,
    Grouping,
    Layout,
    Metric,
    Records,
    SourceMean,
    TaskFamily,
    families,
    find_family,
    mean,
    metric_keys,
    registered,
    training_flags,
)
from rewards.thinking import SplitResponse
from rlif.eval.cli import main
from rlif.eval.metrics import lower_is_better

REPO = Path(__file__).resolve().parents[1]

FAMILY_BLIND_PACKAGES = ("rlif/eval", "rlif/report", "rlif/verl_glue")
"""Packages that read the families' declarations and must name no family or source themselves."""

CONCRETE_SOURCES = ("ifeval", "ifbench", "iftrain", "logicif", "graph/tsp", "graph/mcp", "math/aime24", "math/gsm8k")
"""Sources rlif's data builders write, beside the registry's own prefixes."""


def _registry_names() -> set[str]:
    names = {f.name for f in families()}
    for family in families():
        names.update(family.prefixes)
        names.update(prefix.rstrip("/") for prefix in family.prefixes)
    return names


def _is_family_literal(text: str) -> bool:
    return text in _registry_names() or find_family(text) is not None


def _string_literals(tree: ast.AST) -> Iterator[ast.Constant]:
    """Every string constant of ``tree`` except bare string statements (docstrings, attribute docstrings)."""
    bare = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare:
            yield node


def _family_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}"
        for node in _string_literals(tree)
        if _is_family_literal(node.value)
    ]


def test_every_concrete_source_is_served() -> None:
    assert all(find_family(source) is not None for source in CONCRETE_SOURCES)


@pytest.mark.parametrize("package", FAMILY_BLIND_PACKAGES)
def test_no_family_or_source_literal_outside_the_families(package: str) -> None:
    found = [hit for path in sorted((REPO / package).rglob("*.py")) for hit in _family_literals(path)]
    assert found == [], "family or source names switched on outside rewards/:\n" + "\n".join(found)


def test_the_scan_sees_a_literal_but_not_a_docstring() -> None:
    tree = ast.parse('"""About ifeval."""\nX = "graph/tsp"\n"""The ``logicif`` source."""\nY = f"{X}/if"\n')
    assert [node.value for node in _string_literals(tree) if _is_family_literal(node.value)] == ["graph/tsp"]


def test_shipped_declarations() -> None:
    for family in families():
        evaluation = family.evaluation
        assert evaluation.headline in evaluation.metric_names, family.name
        assert set(family.training_flags) <= set(family.metric_keys)
    assert "if_over_length_cap" in training_flags()
    assert lower_is_better("graph/tsp/missing_rate/small") and not lower_is_better("graph/tsp/optimal_rate")


# A throwaway family: answers are letters; a "hit" is an answer containing the row's letter.

NAME = "zz_declared"
PREFIX = "zz-declared/"


def _score(
    response: SplitResponse, ground_truth: str, extra_info: Mapping[str, Any] | None = None, *, zz_strict: bool
) -> dict[str, float]:
    letter = json.loads(ground_truth)
    answer = response.answer if zz_strict else response.answer.lower()
    hit = float(letter in answer)
    return {"score": hit, "acc": hit, "zz_hit": hit, "zz_shouted": float(answer.isupper())}


def _normalize(raw: Any, *, where: str) -> str:
    if not isinstance(raw, str) or len(raw) != 1:
        raise ValueError(f"{where}: ground truth must be one letter, got {raw!r}")
    return json.dumps(raw)


def _check(ground_truth: str, extra_info: Mapping[str, Any] | None) -> None:
    _normalize(json.loads(ground_truth), where="reward_model.ground_truth")


def _metrics(records: Records) -> dict[str, Any]:
    return {
        "hit_rate": mean(r.get("zz_hit", 0.0) for r in records),
        "shout_rate": mean(r.get("zz_shouted", 0.0) for r in records),
        "answers": len(records),
    }


def _details(
    response: SplitResponse, ground_truth: str, scores: Mapping[str, Any], params: Mapping[str, Any], *, where: str
) -> dict[str, Any]:
    return {"zz_letters": sorted(set(response.answer)), "zz_strict": params["zz_strict"]}


FAMILY = TaskFamily(
    name=NAME,
    prefixes=(PREFIX,),
    ability="zz_letters",
    metric_keys=("zz_hit", "zz_shouted"),
    options={"zz_strict": False},
    score=_score,
    normalize_ground_truth=_normalize,
    check_ground_truth=_check,
    evaluation=Evaluation(
        metrics=(
            Metric("hit_rate", "mean over samples of zz_hit"),
            Metric("shout_rate", "mean over samples of zz_shouted", lower_is_better=True),
        ),
        headline="hit_rate",
        compute=_metrics,
        counts=("answers",),
        record_fields=("bucket",),
        groupings=(Grouping(field="bucket", key="by_bucket", label="bucket"),),
        source_mean=SourceMean(key="zz_mean_over_sources", prefix="zz-declared", label="mean over zz"),
        sample_details=_details,
        options={"zz_strict": True},
        title="Letters",
        layout=Layout.GROUPS,
    ),
    training_flags=("zz_shouted",),
)


@pytest.fixture
def family() -> Iterator[TaskFamily]:
    with registered(FAMILY) as added:
        yield added
    assert find_family(PREFIX + "a") is None and "zz_hit" not in metric_keys()


def _row(source: str, item_id: str, letter: str, bucket: str) -> dict[str, Any]:
    return {
        "data_source": source,
        "prompt": [{"role": "user", "content": f"Say a word with {letter}."}],
        "ability": "zz_letters",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(letter)},
        "extra_info": {"split": "test", "index": 0, "item_id": item_id, "bucket": bucket},
    }


def test_a_family_declared_in_its_own_module_is_evaluated_and_logged(family: TaskFamily, tmp_path: Path) -> None:
    rows = [_row(PREFIX + "one", "one:0", "a", "short"), _row(PREFIX + "two", "two:0", "b", "long")]
    responses = [
        {"id": "one:0", "response": "cat"},
        {"id": "one:0", "response": "DOG"},
        {"id": "two:0", "response": "<think>b?</think>bee"},
        {"id": "two:0", "response": "BEE"},
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "eval.parquet")
    (tmp_path / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses), encoding="utf-8")
    out = tmp_path / "out"
    args = ["score", "--responses", str(tmp_path / "responses.jsonl"), "--eval-file", str(tmp_path / "eval.parquet")]
    assert main([*args, "--out", str(out)]) == 0

    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["reward_options"]["zz_strict"] is True  # the family's evaluation default
    one = metrics["sources"][PREFIX + "one"]
    assert (one["hit_rate"], one["shout_rate"], one["answers"]) == (0.5, 0.5, 2)
    assert one["by_bucket"] == {"short": {"hit_rate": 0.5, "shout_rate": 0.5, "answers": 2}}
    assert metrics["zz_mean_over_sources"]["hit_rate"] == 0.5 and metrics["zz_mean_over_sources"]["sources"] == 2
    flat = metrics["metrics"]
    assert flat[f"{PREFIX}two/hit_rate/long"] == 0.5 and "zz-declared/hit_rate" in flat
    assert not any(key.endswith("/answers") or "/answers/" in key for key in flat)
    assert lower_is_better(f"{PREFIX}one/shout_rate") and not lower_is_better(f"{PREFIX}one/hit_rate")

    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert samples[0]["bucket"] == "short" and samples[0]["zz_letters"] == ["a", "c", "t"]
    assert samples[3]["zz_strict"] is True and samples[3]["zz_hit"] == 0.0  # strict: "BEE" lacks "b"

    tables = (out / "metrics.md").read_text(encoding="utf-8")
    assert "## Letters\n\n| source | bucket | hit_rate | shout_rate |" in tables
    assert "| mean over zz | all | 0.5000 | 0.5000 |" in tables

    verl = pytest.importorskip("verl")
    del verl
    from rlif.verl_glue.hooks import reward_flag_metrics

    assert "zz_shouted" in training_flags()
    extras = [{"reward_extra_info": {"zz_shouted": 1.0}}, {"reward_extra_info": {"zz_shouted": 0.0}}]
    assert reward_flag_metrics([PREFIX + "one"] * 2, extras) == {f"train/{PREFIX}one/zz_shouted": 0.5}


def test_registered_families_are_the_shipped_ones_again() -> None:
    assert {f.name for f in rewards.registry.families()} == {
        "if",
        "logicif",
        "graph",
        "grapharena",
        "graphwiz",
        "math",
        "math_choice",
        "reasoning_gym",
        "judge",
    }


def test_every_headline_declares_its_units() -> None:
    """A headline without units gets no interval in metrics.json, is no default of ``compare`` and cannot be a
    chain's criterion: each family's headline is the number those read."""
    for family in families():
        headline = next(m for m in family.evaluation.metrics if m.name == family.evaluation.headline)
        assert headline.units is not None, family.name
