"""What evaluation reports about instruction following (IFEval, IFBench), with lm-eval's metric names.

Prompt-level accuracy is the share of answers that follow all their instructions; instruction-level accuracy is
followed / total over all instructions (the official micro average). Each sample's record carries its
per-instruction verdicts, from which the per-instruction accuracy table is built.

The official harnesses check answers of any length, so evaluation sets ``if_max_answer_chars=0`` unless the user
sets it; training caps the length to bound the reward's cost.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from rewards.instruction_following.ground_truth import parse_canonical
from rewards.instruction_following.scoring import verdicts
from rewards.registry import Detail, Evaluation, Metric, PromptMean, Records, mean, per_prompt
from rewards.thinking import SplitResponse


class InstructionUnits:
    """``units`` of instruction-level accuracy: per prompt, the instructions followed and checked over its samples
    (the official micro average is their ratio of sums)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __call__(self, records: Records) -> dict[str, tuple[float, float]]:
        out = {}
        for unit, samples in per_prompt(records).items():
            marks = [item[self.mode] for r in samples for item in r.get("instructions", ())]
            out[unit] = (float(sum(marks)), float(len(marks)))
        return out


METRICS = (
    Metric(
        "prompt_level_strict_acc",
        "mean over prompts of the prompt's mean if_prompt_strict (every instruction followed)",
        units=PromptMean("if_prompt_strict"),
    ),
    Metric(
        "inst_level_strict_acc",
        "instructions followed strictly / all instructions, over all samples",
        units=InstructionUnits("strict"),
    ),
    Metric(
        "prompt_level_loose_acc",
        "mean over prompts of the prompt's mean if_prompt_loose (every instruction followed loosely)",
        units=PromptMean("if_prompt_loose"),
    ),
    Metric(
        "inst_level_loose_acc",
        "instructions followed loosely / all instructions, over all samples",
        units=InstructionUnits("loose"),
    ),
)


def if_metrics(records: Records) -> dict[str, Any]:
    """IFEval/IFBench prompt- and instruction-level accuracy, strict and loose, and per-instruction accuracy."""
    out: dict[str, Any] = {}
    per_instruction: dict[str, dict[str, int]] = defaultdict(lambda: {"count": 0, "strict": 0, "loose": 0})
    for mode in ("strict", "loose"):
        followed = total = 0
        for record in records:
            marks = [item[mode] for item in record.get("instructions", ())]
            followed += sum(marks)
            total += len(marks)
        out[f"prompt_level_{mode}_acc"] = mean(r.get(f"if_prompt_{mode}", 0.0) for r in records)
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
    return {key: out[key] for key in (*(m.name for m in METRICS), "per_instruction")}


def instruction_verdicts(
    response: SplitResponse, ground_truth: str, scores: Mapping[str, Any], params: Mapping[str, Any], *, where: str
) -> dict[str, Any]:
    """``instructions``: one ``{"id", "strict", "loose"}`` per instruction, which per-instruction accuracy needs and
    the reward's aggregate keys do not carry.

    The verdicts come from the same ``verdicts`` function the scorer calls, and are cross-checked against its
    counts on every sample.

    Raises:
        RuntimeError: the verdicts disagree with ``scores`` (a scoring bug); the message starts with ``where``.
    """
    strict, loose = verdicts(response.answer, ground_truth, params["if_max_answer_chars"])
    if sum(strict) != scores["if_inst_followed_strict"] or sum(loose) != scores["if_inst_followed_loose"]:
        raise RuntimeError(f"{where}: per-instruction verdicts disagree with compute_score (a scoring bug)")
    ids = [instruction_id for instruction_id, _ in parse_canonical(ground_truth)]
    return {"instructions": [{"id": i, "strict": s, "loose": lo} for i, s, lo in zip(ids, strict, loose, strict=True)]}


EVALUATION = Evaluation(
    metrics=METRICS,
    headline="prompt_level_strict_acc",
    compute=if_metrics,
    details=(
        Detail(
            key="per_instruction",
            title="per-instruction accuracy",
            head=("instruction", "n", "strict", "loose"),
            fields=("count", "strict_acc", "loose_acc"),
        ),
    ),
    sample_details=instruction_verdicts,
    options={"if_max_answer_chars": 0},
    title="Instruction following",
    table_order=10,
)
