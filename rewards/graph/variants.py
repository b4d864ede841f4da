"""The five NPG-Muse reward variants, reproduced with the hardened verdicts of ``checks.py``.

The option ``graph_reward`` selects the graph reward variant by name.

| variant | answer part A | format | repeat | range |
|---|---|---|---|---|
| binary | 1 if optimal else 0 | - | - | {0, 1} |
| binary_format | 1 if optimal else 0 | +0.5 fmt | - | [0, 1.5] |
| binary_format_repeat | 1 if optimal else 0 | +0.5 fmt | -0.5 rep | [-0.5, 1.5] |
| ratio_quality_format_repeat | 1 if optimal; 0.5 q if feasible with v > 0; else 0 | +0.5 fmt | -0.5 rep | [-0.5, 1.5] |
| complicated | 2 if optimal; 0.5 q (TSP: 0.5 q^2) if feasible with v > 0; else -1 | +1 fmt | -1 rep | [-2, 3] |

``q`` is the capped quality ``min(v, E)/E`` or ``E/max(v, E)`` in [0, 1] (NPG-Muse uses the uncapped ratio, which
exploits push above 1). ``v > 0`` copies NPG-Muse's ``res > 0``: an empty ``[]`` clique or set is feasible but
earns nothing, and under ``complicated`` it is punished like an infeasible answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from rewards.graph.checks import Category, Verdict
from rewards.graph.tasks import TASKS
from rewards.lookup import look_up


@dataclass(frozen=True)
class RewardVariant:
    """Weights of one reward variant (see the module table).

    Attributes:
        optimal: answer part of an optimal answer.
        quality: weight of ``q`` for a feasible, non-optimal answer with positive objective (0: no partial credit).
        failure: answer part of every other answer (suboptimal without partial credit, infeasible, missing).
        format_bonus: added when the response starts with ``<think>\\n``.
        repeat_penalty: subtracted when the response holds a loop (``rewards/graph/repetition.py``); 0 skips detection.
        square_quality: square ``q`` for the tasks whose registry entry asks for it (``GraphTask.squared_quality``:
            TSP, as NPG-Muse's ``complicated`` does).
    """

    optimal: float
    quality: float
    failure: float
    format_bonus: float
    repeat_penalty: float
    square_quality: bool = False

    def answer_part(self, task: str, verdict: Verdict) -> float:
        """The answer term ``A`` for ``verdict`` on ``task``."""
        if verdict.category is Category.OPTIMAL:
            return self.optimal
        if self.quality and verdict.value is not None and verdict.value > 0:
            q = verdict.quality**2 if self.square_quality and TASKS[task].squared_quality else verdict.quality
            return self.quality * q
        return self.failure

    def bounds(self) -> tuple[float, float]:
        """The lowest and highest reward this variant can give."""
        low = min(self.failure, 0.0) - self.repeat_penalty
        return low, self.optimal + self.format_bonus


VARIANTS: dict[str, RewardVariant] = {
    "binary": RewardVariant(optimal=1.0, quality=0.0, failure=0.0, format_bonus=0.0, repeat_penalty=0.0),
    "binary_format": RewardVariant(optimal=1.0, quality=0.0, failure=0.0, format_bonus=0.5, repeat_penalty=0.0),
    "binary_format_repeat": RewardVariant(optimal=1.0, quality=0.0, failure=0.0, format_bonus=0.5, repeat_penalty=0.5),
    "ratio_quality_format_repeat": RewardVariant(
        optimal=1.0, quality=0.5, failure=0.0, format_bonus=0.5, repeat_penalty=0.5
    ),
    "complicated": RewardVariant(
        optimal=2.0, quality=0.5, failure=-1.0, format_bonus=1.0, repeat_penalty=1.0, square_quality=True
    ),
}
"""Variant name -> weights; ``binary`` is the default."""

DEFAULT_VARIANT = "binary"


def variant_named(name: str) -> RewardVariant:
    """The variant called ``name``.

    Raises:
        ValueError: unknown name; the message lists the known ones.
    """
    return look_up(VARIANTS, name, "variant", where="graph_reward", known=sorted(VARIANTS))
