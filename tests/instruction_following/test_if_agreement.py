"""Agreement with the official IFEval/IFEvalG checkers: >= 99.5% of (instruction, response) verdicts, in CI.

``benchmarks/ifeval_agreement.py`` ran the official code (an optional oracle, never a dependency) on every case of
``if_corpus`` and stored its strict and loose verdicts in ``tests/instruction_following/data/
ifeval_oracle_verdicts.json.gz``, keyed by instruction id, kwargs and the sha256 of the response. The replay tests
rebuild the same cases, score each through the real reward entry ``rewards.compute_score`` (one instruction per
ground truth, so ``if_prompt_strict``/``if_prompt_loose`` are that instruction's verdicts; the thinking split and
answer handling are included) and compare with the stored verdicts. They need only ``shared/data``.

To regenerate the stored verdicts after a corpus change, or to check them against the oracle (the slow test
below, skipped unless ``RLIF_IF_ORACLE`` points at the official code), see docs/instruction-following.md,
"Agreement". Every known disagreement class is listed in ``KNOWN_DISAGREEMENTS`` and in the docs.
"""

from __future__ import annotations

import os
from pathlib import Path

import if_corpus
import pytest

from benchmarks.ifeval_agreement import (
    AGREEMENT_TARGET,
    DATASETS,
    KNOWN_DISAGREEMENTS,
    VERDICTS,
    Case,
    cases,
    compare,
    load_verdicts,
    lookup,
    oracle_verdicts,
    rlif_verdicts,
)

pytestmark = pytest.mark.skipif(
    not if_corpus.IFEVAL_ROWS.is_file() or not if_corpus.SAMPLE_RESPONSES.is_file(),
    reason=f"shared data not found at {if_corpus.DATA}",
)

ORACLE_DIR = os.environ.get("RLIF_IF_ORACLE")


@pytest.fixture(scope="module")
def stored() -> dict:
    return load_verdicts()


@pytest.fixture(scope="module")
def corpus() -> dict[str, list[Case]]:
    return {dataset: cases(dataset) for dataset in DATASETS}


def test_stored_verdicts_cover_exactly_the_corpus(stored: dict, corpus: dict[str, list[Case]]) -> None:
    # A corpus change (shared data, if_corpus.py) must come with regenerated verdicts (docs, "Agreement").
    assert VERDICTS.stat().st_size < 2_000_000
    for dataset, items in corpus.items():
        reference, unused = lookup(stored, dataset, items)
        missing = [case.group for case, ref in zip(items, reference, strict=True) if ref is None]
        assert not missing, f"{dataset}: {len(missing)} cases have no stored verdict, e.g. {missing[:3]}"
        assert unused == 0, f"{dataset}: {unused} stored verdicts match no case"
        assert stored["datasets"][dataset]["pairs"] == len(items)
        assert not any(stored["oracle"]["oracle_raised"][dataset].values())


@pytest.mark.parametrize("dataset", DATASETS)
def test_compute_score_agrees_with_the_stored_oracle_verdicts(
    dataset: str, stored: dict, corpus: dict[str, list[Case]]
) -> None:
    items = corpus[dataset]
    reference, _ = lookup(stored, dataset, items)
    summary = compare(items, rlif_verdicts(dataset, items), reference)
    assert summary["missing"] == 0
    for mode in ("strict", "loose"):
        assert summary[mode]["compared"] == len(items)
        assert summary[mode]["agreement"] >= AGREEMENT_TARGET, (mode, summary[mode])
        unexplained = {
            iid: n for iid, n in summary[mode]["disagreements_by_id"].items() if iid not in KNOWN_DISAGREEMENTS
        }
        assert not unexplained, (mode, unexplained)


@pytest.mark.slow
@pytest.mark.skipif(not ORACLE_DIR, reason="RLIF_IF_ORACLE (official IFEval/IFEvalG code) not set")
def test_stored_verdicts_are_the_oracles(stored: dict, corpus: dict[str, list[Case]]) -> None:
    # The oracle is seeded (docs, "Agreement"), so a rerun must reproduce the committed file.
    nltk_data = Path(os.environ.get("NLTK_DATA", Path(str(ORACLE_DIR)) / "llama_index/core/_static/nltk_cache"))
    site = os.environ.get("RLIF_IF_ORACLE_SITE")
    for dataset, items in corpus.items():
        table, _, _ = oracle_verdicts(dataset, items, Path(str(ORACLE_DIR)), Path(site) if site else None, nltk_data)
        assert table == stored["datasets"][dataset]["verdicts"], dataset
