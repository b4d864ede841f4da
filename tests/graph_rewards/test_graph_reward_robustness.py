"""Any text is scored without raising, quickly, and within the variant's documented range."""

from __future__ import annotations

import random
import time

from graph_reward_instances import (
    molecule_truth,
    random_molecule,
    random_social,
    random_tsp,
    social_truth,
    tsp_truth,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from rewards import compute_score
from rewards.graph.variants import SHAPES

_rng = random.Random(3)
_names, _edges = random_social(_rng, 12, 0.3)
_codes, _weights = random_tsp(_rng, 7)
_mol_a, _mol_b, _mol_c = random_molecule(_rng, 6), random_molecule(_rng, 6), random_molecule(_rng, 5)
TRUTHS = {
    "mcp": social_truth("mcp", _names, _edges),
    "mis": social_truth("mis", _names, _edges),
    "mvc": social_truth("mvc", _names, _edges),
    "tsp": tsp_truth(_codes, _weights),
    "ged": molecule_truth("ged", _mol_a, _mol_b, optimum=None),
    "mcs": molecule_truth("mcs", _mol_a, _mol_c),
}

# Text that looks like answers: brackets, names, codes, numbers and thinking tags mixed with anything.
_pieces = st.sampled_from(
    ["[", "]", ", ", "<think>\n", "</think>", "<think>", " ", "\n", "0", "1", "17", "999999999999", *_names[:4],
     *_codes[:4], "abc", "ß", "'", '"']
)  # fmt: skip
answer_like = st.lists(st.one_of(_pieces, st.text(max_size=8)), max_size=60).map("".join)
any_text = st.one_of(st.text(max_size=300), answer_like)


@settings(max_examples=150, deadline=None)
@given(text=any_text, task=st.sampled_from(sorted(TRUTHS)), variant=st.sampled_from(sorted(SHAPES)))
def test_any_text_scores_in_range_quickly(text, task, variant):
    start = time.process_time()
    out = compute_score(f"graph/{task}", text, TRUTHS[task], None, graph_reward=variant)
    elapsed = time.process_time() - start
    assert out["reward_error"] == 0
    low, high = SHAPES[variant].bounds()
    assert low <= out["score"] <= high
    assert 0.0 <= out["graph_quality"] <= 1.0
    assert out["acc"] in (0.0, 1.0)
    assert elapsed < 0.02 * 5  # 20 ms budget in CPU time, x5 margin


@settings(max_examples=25, deadline=None)
@given(filler=st.text(min_size=1, max_size=40), task=st.sampled_from(sorted(TRUTHS)))
def test_long_responses_stay_under_20_ms(filler, task):
    text = "<think>\n" + (filler * (24_000 // len(filler) + 1))[:24_000] + "\n</think>\n[0, 1], [1, 0]"
    compute_score(f"graph/{task}", text, TRUTHS[task], None, graph_reward="complicated")
    best = min(_timed(task, text) for _ in range(3))
    assert best < 0.02 * 2  # the loop detector included; about 2-5 ms measured


def _timed(task: str, text: str) -> float:
    start = time.process_time()
    compute_score(f"graph/{task}", text, TRUTHS[task], None, graph_reward="complicated")
    return time.process_time() - start
