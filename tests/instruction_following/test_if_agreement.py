"""Agreement with the official checkers (optional oracle, slow): >= 99.5% of (instruction, response) verdicts.

The oracle is never a dependency. To run this test, put the reference code on ``sys.path`` and point
``RLIF_IF_ORACLE`` at that directory (docs/instruction-following.md, "Agreement", gives the commands):

- ``lm_eval/tasks/ifeval/`` from the lm-eval wheel (a copy of google-research ``instruction_following_eval``),
- ``open_instruct/IFEvalG/`` from allenai/open-instruct,
- nltk's ``punkt_tab`` data in ``NLTK_DATA`` (the references load the trained English Punkt model).

Without it the test is skipped. Every known disagreement class is listed in ``KNOWN_DISAGREEMENTS`` and in the docs.
"""

from __future__ import annotations

import collections
import importlib
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

import if_corpus
import pytest

from rewards.instruction_following import normalize_ground_truth
from rewards.instruction_following.scoring import loose_variants, verdicts

ORACLE_DIR = os.environ.get("RLIF_IF_ORACLE")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not ORACLE_DIR, reason="RLIF_IF_ORACLE (official IFEval/IFEvalG code) not set"),
]

KNOWN_DISAGREEMENTS = {
    # The reference swaps a non a-z `letter` for a random letter; IFEval keys 1122 and 1129 ask for "#" and "!".
    "keywords:letter_frequency": "random letter for '#' in the reference",
    # The reference replaces n_start=0 with a random index.
    "new:copy_span_idx": "random start for n_start=0 in the reference",
}

MIN_AGREEMENT = 0.995


def _registry(module: str) -> Mapping[str, Any]:
    if ORACLE_DIR not in sys.path:
        sys.path.insert(0, ORACLE_DIR)
    import langdetect

    langdetect.DetectorFactory.seed = 0  # the references never seed; rlif does, so seed both
    return importlib.import_module(module).INSTRUCTION_DICT


def _oracle(registry: Mapping[str, Any], instruction_id: str, kwargs: dict[str, Any], prompt: str) -> Callable:
    instruction = registry[instruction_id](instruction_id)
    instruction.build_description(**kwargs)
    args = instruction.get_instruction_args()
    if args and "prompt" in args:
        instruction.build_description(prompt=prompt)

    def follows(text: str) -> bool:
        try:
            return bool(text.strip() and instruction.check_following(text))
        except Exception:  # the reference raising counts as "not followed"
            return False

    return follows


def _compare(cases: list[tuple[str, dict[str, Any], str, str]], registry: Mapping[str, Any]) -> collections.Counter:
    """Count pairs and disagreements per (instruction id, mode)."""
    counts: collections.Counter = collections.Counter()
    for instruction_id, kwargs, prompt, response in cases:
        canonical = normalize_ground_truth({"instruction_ids": [instruction_id], "kwargs": [kwargs]}, where="case")
        strict, loose = verdicts(response, canonical)
        follows = _oracle(registry, instruction_id, kwargs, prompt)
        reference_strict = follows(response)
        reference_loose = reference_strict or any(follows(v) for v in loose_variants(response))
        counts["pairs"] += 1
        counts[(instruction_id, "strict")] += strict[0] != reference_strict
        counts[(instruction_id, "loose")] += loose[0] != reference_loose
    return counts


def _check(counts: collections.Counter) -> None:
    for mode in ("strict", "loose"):
        disagreements = sum(v for k, v in counts.items() if isinstance(k, tuple) and k[1] == mode)
        assert 1 - disagreements / counts["pairs"] >= MIN_AGREEMENT, (mode, counts)
        unexplained = {
            k: v for k, v in counts.items() if isinstance(k, tuple) and v and k[0] not in KNOWN_DISAGREEMENTS
        }
        assert not unexplained, unexplained


def test_ifeval_agreement() -> None:
    registry = _registry("lm_eval.tasks.ifeval.instructions_registry")
    cases = []
    for row, response in if_corpus.ifeval_cases():
        for instruction_id, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
            present = {name: value for name, value in kwargs.items() if value is not None}
            cases.append((instruction_id, present, row["prompt"], response))
    _check(_compare(cases, registry))


def test_ifevalg_agreement() -> None:
    registry = _registry("open_instruct.IFEvalG.instructions_registry")
    cases = [(iid, kwargs, "", response) for iid, kwargs, response in if_corpus.ifevalg_cases()]
    _check(_compare(cases, registry))
