"""Benchmark metrics from scored samples, named as the papers that define them name them.

Input: the per-sample records of ``rlif.eval.scoring`` (or the ``samples.jsonl`` they were written to), grouped by
``data_source``. With several samples per prompt every rate below is the mean over all samples (each sample counts
as one answer to its prompt), which equals the paper's definition at one sample per prompt.

- Every source: ``score`` and ``acc`` means, ``truncated_rate`` (share of samples that hit the generation limit;
  only for generated samples, which record vLLM's ``finish_reason``), and pass@k for every k up to the smallest
  number of samples per prompt (unbiased estimator, ``rlif.eval.pass_at_k``; a sample is correct when its family's
  ``acc`` is 1: IF prompt-level strict, LogicIF output-and-stats, graph optimal, math verified).
- IF (IFEval, IFBench; lm-eval's names): ``prompt_level_strict_acc`` and ``prompt_level_loose_acc`` (share of
  answers following all their instructions), ``inst_level_strict_acc`` and ``inst_level_loose_acc`` (followed /
  total over all instructions: the official micro average), and ``per_instruction`` accuracy.
- LogicIF (LogicIFEval): case-level ``output_acc``, ``stats_acc``, ``both_acc`` and question-level
  ``question_*_acc`` (a function counts only if all its test cases are right; with several samples, the expected
  value of that event when each case's samples are drawn independently: the product of the cases' rates, which is
  the official 0/1 at one sample), overall and ``by_difficulty``.
- Graph tasks (GraphArena): ``feasible_rate``, ``optimal_rate`` (GraphArena's accuracy), ``hallucination_rate``
  (parsed but infeasible), ``missing_rate`` and ``mean_quality_ratio`` (NPG-Muse's capped ratio, 0 unless
  feasible), overall and ``by_size``; and ``graph_mean_over_tasks`` (GraphArena's table rows are means over
  tasks). Feasibility is rlif's checker, stricter than GraphArena's (duplicates and unknown names are infeasible).
- Mathematics: ``accuracy`` (math-verify) and ``parsed_rate`` (an answer could be extracted).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from rewards.registry import find_family
from rlif.eval.pass_at_k import mean_pass_at_k

Record = Mapping[str, Any]

IF_METRICS = ("prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc")
LOGICIF_METRICS = ("both_acc", "output_acc", "stats_acc", "question_both_acc", "question_output_acc",
                   "question_stats_acc")  # fmt: skip
GRAPH_METRICS = ("feasible_rate", "optimal_rate", "mean_quality_ratio", "hallucination_rate", "missing_rate")
LOWER_IS_BETTER = ("hallucination_rate", "missing_rate", "think_unclosed_rate", "reward_errors", "truncated_rate")
"""Metric names (the part of a flat key after the source, before any group) for which smaller values win."""
UNKNOWN_GROUP = "unknown"
"""Group name of records that lack the grouping field (a LogicIF row without ``difficulty_level``)."""


def lower_is_better(key: str) -> bool:
    """Whether smaller values of the flat metric ``key`` (``graph/tsp/missing_rate/small``) are better."""
    return any(f"/{name}" in f"/{key}" for name in LOWER_IS_BETTER)


def compute_metrics(records: Iterable[Record]) -> dict[str, Any]:
    """All metrics of a set of scored samples.

    Returns:
        ``{"sources": {data_source: {...}}, "graph_mean_over_tasks": {...} (only with graph sources),
        "metrics": {flat name: value}}``; flat names are ``<source>/<metric>[/<group>]`` and
        ``<source>/pass@<k>``, the keys the comparison report and the ablation chain read.
    """
    by_source: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_source[record["data_source"]].append(record)
    sources = {source: source_metrics(source, by_source[source]) for source in sorted(by_source)}
    out: dict[str, Any] = {"sources": sources}
    graph = {source: values for source, values in sources.items() if _family(source) == "graph"}
    if graph:
        out["graph_mean_over_tasks"] = _mean_over_tasks(graph)
    out["metrics"] = flatten(out)
    return out


def source_metrics(source: str, records: Sequence[Record]) -> dict[str, Any]:
    """The metrics of one ``data_source`` (see the module docstring)."""
    per_prompt = _per_prompt(records)
    sizes = [len(samples) for samples in per_prompt.values()]
    out: dict[str, Any] = {
        "prompts": len(per_prompt),
        "samples": len(records),
        "samples_per_prompt": {"min": min(sizes), "max": max(sizes)},
        "score": _mean(r.get("score", 0.0) for r in records),
        "acc": _mean(r.get("acc", 0.0) for r in records),
        "reward_errors": int(sum(r.get("reward_error", 0.0) for r in records)),
        "think_unclosed_rate": _mean(r.get("think_unclosed", 0.0) for r in records),
        "pass@k": {str(k): v for k, v in pass_at_k_of(per_prompt).items()},
    }
    if any("finish_reason" in r for r in records):
        out["truncated_rate"] = _mean(float(r.get("finish_reason") == "length") for r in records)
    family = _family(source)
    if family == "if":
        out.update(if_metrics(records))
    elif family == "logicif":
        out.update(logicif_metrics(records))
        out["by_difficulty"] = _by_group(records, "difficulty_level", logicif_metrics)
    elif family == "graph":
        out.update(graph_metrics(records))
        out["by_size"] = _by_group(records, "size", graph_metrics)
    elif family == "math":
        out.update(math_metrics(records))
    return out


def pass_at_k_of(per_prompt: Mapping[str, Sequence[Record]]) -> dict[int, float]:
    """pass@k for every k up to the smallest sample count; a sample is correct when its ``acc`` is 1."""
    counts = [(len(samples), sum(r.get("acc", 0.0) == 1.0 for r in samples)) for samples in per_prompt.values()]
    return mean_pass_at_k(counts)


def if_metrics(records: Sequence[Record]) -> dict[str, Any]:
    """IFEval/IFBench prompt- and instruction-level accuracy, strict and loose, and per-instruction accuracy."""
    out: dict[str, Any] = {}
    per_instruction: dict[str, dict[str, int]] = defaultdict(lambda: {"count": 0, "strict": 0, "loose": 0})
    for mode in ("strict", "loose"):
        followed = total = 0
        for record in records:
            verdicts = [item[mode] for item in record.get("instructions", ())]
            followed += sum(verdicts)
            total += len(verdicts)
        out[f"prompt_level_{mode}_acc"] = _mean(r.get(f"if_prompt_{mode}", 0.0) for r in records)
        out[f"inst_level_{mode}_acc"] = followed / total if total else math.nan
    for record in records:
        for item in record.get("instructions", ()):
            counts = per_instruction[item["id"]]
            counts["count"] += 1
            counts["strict"] += item["strict"]
            counts["loose"] += item["loose"]
    out["per_instruction"] = {
        iid: {"count": c["count"], "strict_acc": c["strict"] / c["count"], "loose_acc": c["loose"] / c["count"]}
        for iid, c in sorted(per_instruction.items())
    }
    return {key: out[key] for key in (*IF_METRICS, "per_instruction")}


def logicif_metrics(records: Sequence[Record]) -> dict[str, Any]:
    """LogicIFEval case-level and question-level (function-level) accuracy of output, stats and both."""
    out: dict[str, Any] = {"cases": len({r["id"] for r in records}), "functions": 0}
    cases = _per_prompt(records)
    functions: dict[str, list[str]] = defaultdict(list)
    for item_id, samples in cases.items():
        functions[str(samples[0].get("task_id", item_id))].append(item_id)
    out["functions"] = len(functions)
    for part in ("both", "output", "stats"):
        key = f"logicif_{part}"
        out[f"{part}_acc"] = _mean(r.get(key, 0.0) for r in records)
        rate = {item_id: _mean(r.get(key, 0.0) for r in samples) for item_id, samples in cases.items()}
        out[f"question_{part}_acc"] = _mean(math.prod(rate[i] for i in ids) for ids in functions.values())
    return out


def graph_metrics(records: Sequence[Record]) -> dict[str, float]:
    """GraphArena's rates (rlif's checker) and NPG-Muse's mean quality ratio."""
    return {
        "feasible_rate": _mean(r.get("graph_feasible", 0.0) for r in records),
        "optimal_rate": _mean(r.get("graph_optimal", 0.0) for r in records),
        "mean_quality_ratio": _mean(r.get("graph_quality", 0.0) for r in records),
        "hallucination_rate": _mean(
            float(not r.get("graph_feasible", 0.0) and not r.get("graph_missing", 0.0)) for r in records
        ),
        "missing_rate": _mean(r.get("graph_missing", 0.0) for r in records),
        "samples": len(records),
    }


def math_metrics(records: Sequence[Record]) -> dict[str, float]:
    """math-verify accuracy and the share of answers from which an answer could be extracted."""
    return {
        "accuracy": _mean(r.get("acc", 0.0) for r in records),
        "parsed_rate": _mean(r.get("math_parsed", 0.0) for r in records),
    }


def flatten(metrics: Mapping[str, Any]) -> dict[str, float]:
    """``<source>/<metric>[/<group>]`` -> value for every number of ``compute_metrics``' nested result."""
    flat: dict[str, float] = {}
    for source, values in metrics["sources"].items():
        _flatten_into(flat, source, values)
    if "graph_mean_over_tasks" in metrics:
        _flatten_into(flat, "graph", metrics["graph_mean_over_tasks"])
    return flat


def _flatten_into(flat: dict[str, float], prefix: str, values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        if key in ("prompts", "samples", "samples_per_prompt", "per_instruction", "cases", "functions", "tasks"):
            continue
        if key == "pass@k":
            flat.update({f"{prefix}/pass@{k}": v for k, v in value.items()})
        elif key in ("by_difficulty", "by_size"):
            for group, group_values in value.items():
                for name, number in group_values.items():
                    if name not in ("samples", "cases", "functions"):
                        flat[f"{prefix}/{name}/{group}"] = number
        elif isinstance(value, int | float):
            flat[f"{prefix}/{key}"] = float(value)


def _mean_over_tasks(graph: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Each graph rate averaged over tasks (each task weighs the same), overall and per size class."""
    out: dict[str, Any] = {name: _mean(values[name] for values in graph.values()) for name in GRAPH_METRICS}
    out["tasks"] = len(graph)
    sizes = sorted({size for values in graph.values() for size in values["by_size"]})
    out["by_size"] = {
        size: {
            name: _mean(values["by_size"][size][name] for values in graph.values() if size in values["by_size"])
            for name in GRAPH_METRICS
        }
        for size in sizes
    }
    return out


def _by_group(
    records: Sequence[Record], field: str, metric_fn: Callable[[Sequence[Record]], dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        groups[str(record.get(field, UNKNOWN_GROUP))].append(record)
    return {group: metric_fn(groups[group]) for group in sorted(groups)}


def _per_prompt(records: Iterable[Record]) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        out[record["id"]].append(record)
    return out


def _family(source: str) -> str | None:
    family = find_family(source)
    return None if family is None else family.name


def _mean(values: Iterable[float]) -> float:
    items = [float(v) for v in values]
    return sum(items) / len(items) if items else math.nan
