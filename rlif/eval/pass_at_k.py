"""pass@k by the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on Code").

With n samples of a problem of which c are correct, the probability that at least one of k samples drawn without
replacement is correct is 1 - C(n - c, k) / C(n, k). The binomials overflow floats for the n used in practice
(n = 64 gives C(64, 32) ~ 1.8e18), so it is computed in HumanEval's product form
1 - prod_{i = n - c + 1}^{n} (1 - k / i), which is exactly 1 when n - c < k. The benchmark value is the mean over
problems; as in HumanEval it exists only for k no larger than the smallest n.
"""

from __future__ import annotations

from collections.abc import Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one problem with ``n`` samples, ``c`` of them correct.

    Raises:
        ValueError: not ``0 <= c <= n`` or not ``1 <= k <= n``.
    """
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def mean_pass_at_k(counts: Sequence[tuple[int, int]]) -> dict[int, float]:
    """``{k: mean pass@k over problems}`` for every k from 1 to the smallest n, given ``(n, c)`` per problem.

    Problems may have different n; each uses its own. No problems gives an empty dict.
    """
    if not counts:
        return {}
    smallest = min(n for n, _ in counts)
    return {k: sum(pass_at_k(n, c, k) for n, c in counts) / len(counts) for k in range(1, smallest + 1)}
