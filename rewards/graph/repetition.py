"""Find a degenerate loop in a response: a block of >= 20 characters written >= 5 times back to back.

NPG-Muse penalises responses in which ``string-repetition``'s ``StringRepetitionDetector(min_length=20,
min_repeats=5)`` finds such a loop. That detector is pure Python, far too slow to run on every long response, and,
because it binary-searches the block length (a predicate that is not monotone), misses loops in the middle of a text.
This module decides the same property exactly, anywhere in the text, in O(n log n) vectorised numpy work. The log
factor is the number of period bands, which grows slowly with the length, so the cost per character is flat in
practice (``docs/np-graph-rewards.md`` has the measurements).

Definition (the reference's): the text contains a *tandem repeat* of period ``p >= min_period`` with at least
``min_repeats`` copies, i.e. a position ``i`` with ``text[i : i + r*p]`` equal to one ``p``-block written ``r`` times.
Equivalently, ``text[x] == text[x + p]`` for every ``x`` in a window of ``(r - 1) * p`` consecutive positions.
A block that is itself periodic counts too ("ab" * 50 holds the 20-block "ab" * 10 five times), as in the reference.

Why sampling the text at a few anchors is complete:

* Group periods in bands ``p`` in ``[P, 2P)`` with ``P = min_period * 2**k``. For each band, hash every
  length-``P`` window and take *anchors* at the multiples of ``P``.
* A loop of period ``p`` in band ``P`` satisfies ``text[x] == text[x + p]`` on ``[i, i + (r-1)p)``, so the window at
  every anchor ``a`` in ``[i, i + (r-1)p - P]`` equals the window at ``a + p``. That interval has length
  ``(r-1)p - P >= (r-2)P``, so it holds at least ``g = r - 2`` consecutive anchors (3 for r = 5), all agreeing
  on the same shift ``p``. Conversely, a shift on which fewer than ``g`` consecutive anchors agree cannot be a loop,
  which prunes ordinary prose to almost no candidates.
* For every surviving candidate (the first anchor ``a`` of ``g`` agreeing ones, shift ``p``), a vectorised binary
  search on substring hashes measures how far ``text[x] == text[x + p]`` extends before and after ``a``. The loop's
  first anchor is such a candidate, and its extensions add up to at least ``(r-1)p``.
* A candidate whose extensions reach ``(r-1)p`` is confirmed by comparing the characters of that window.

Hashes (polynomial, wrapping modulo 2**64, so no slow integer modulo) only propose candidates. Equal strings always
hash equal, so no loop is ever missed; a collision can only overstate an extension, and the exact comparison then
rejects it. Comparing all anchors of a band with all shifts ``[P, 2P)`` is one reshape of the window-hash array
(``m`` anchors x ``P`` shifts = about ``n`` comparisons), so each band is O(n), plus O(K log n) for its K
candidates, and there are ``log2(n / (r * min_period))`` bands.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MIN_PERIOD = 20
"""Shortest repeated block that counts as a loop (the reference's ``min_length``)."""

MIN_REPEATS = 5
"""Fewest back-to-back copies that count as a loop (the reference's ``min_repeats``)."""

_BASE = 0x9E3779B97F4A7C15
"""Odd hash base (so it is invertible modulo 2**64); hashes wrap modulo 2**64 in uint64 arithmetic."""

_MASK = (1 << 64) - 1

_CANDIDATE_CHUNK = 512
"""Candidates measured per vectorised pass (prose has a handful; a periodic text has one per anchor and shift)."""

_PAD = np.uint64(0x5851F42D4C957F2D)
"""Filler for shifts past the end of the text. Should a real window hash equal it, the exact check rejects it."""


@dataclass(frozen=True)
class TandemRepeat:
    """A loop found in a text.

    Attributes:
        start: index of the loop's first character.
        period: length of the repeated block.
        repeats: whole back-to-back copies confirmed from ``start``: at least ``min_repeats``, and possibly fewer than
            the loop really has, because the search stops once ``min_repeats`` copies are proven.
    """

    start: int
    period: int
    repeats: int


def has_repetition(text: str, min_period: int = MIN_PERIOD, min_repeats: int = MIN_REPEATS) -> bool:
    """Whether ``text`` holds a block of ``>= min_period`` characters written ``>= min_repeats`` times in a row.

    Args:
        text: any string (a whole response, thinking included).
        min_period: shortest block length that counts (>= 1).
        min_repeats: fewest copies that count (>= 3; the anchor argument needs ``min_repeats - 2 >= 1``).

    Returns:
        True when such a loop exists anywhere in ``text``.

    Raises:
        ValueError: ``min_period < 1`` or ``min_repeats < 3``.
    """
    return find_tandem_repeat(text, min_period, min_repeats) is not None


def find_tandem_repeat(text: str, min_period: int = MIN_PERIOD, min_repeats: int = MIN_REPEATS) -> TandemRepeat | None:
    """Return one loop of ``text`` (shortest period band first), or None when there is none.

    Args:
        text: any string.
        min_period: shortest block length that counts (>= 1).
        min_repeats: fewest copies that count (>= 3).

    Returns:
        A loop, or None.

    Raises:
        ValueError: ``min_period < 1`` or ``min_repeats < 3``.
    """
    if min_period < 1:
        raise ValueError(f"min_period must be >= 1, got {min_period}")
    if min_repeats < 3:
        raise ValueError(f"min_repeats must be >= 3, got {min_repeats}")
    n = len(text)
    if n < min_period * min_repeats:
        return None
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    prefix = _prefix_hashes(codes)
    window_hash = _window_hashes(prefix, min_period)
    width = min_period
    while True:
        found = _search_band(codes, prefix, window_hash, width, min_repeats)
        if found is not None:
            return found
        if 2 * width * min_repeats > n:
            return None
        # hash(j, 2P) = hash(j, P) + B**P * hash(j + P, P), with hash(j, L) = sum_k text[j + k] * B**k.
        window_hash = window_hash[:-width] + window_hash[width:] * np.uint64(pow(_BASE, width, 1 << 64))
        width *= 2


@lru_cache(maxsize=8)
def _powers(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``B**j`` and ``B**-j`` modulo 2**64 for ``j < size`` (read-only; cached per power-of-two size)."""
    capacity = 1 << max(size - 1, 1).bit_length()
    if capacity != size:
        return _powers(capacity)
    forward = np.ones(capacity, dtype=np.uint64)
    backward = np.ones(capacity, dtype=np.uint64)
    filled = 1
    step_forward, step_backward = _BASE, pow(_BASE, -1, 1 << 64)
    while filled < capacity:
        # Doubling: powers [filled, 2*filled) are powers [0, filled) times B**filled.
        forward[filled : 2 * filled] = forward[:filled] * np.uint64(step_forward)
        backward[filled : 2 * filled] = backward[:filled] * np.uint64(step_backward)
        step_forward = step_forward * step_forward & _MASK
        step_backward = step_backward * step_backward & _MASK
        filled *= 2
    forward.flags.writeable = False
    backward.flags.writeable = False
    return forward, backward


def _prefix_hashes(codes: np.ndarray) -> np.ndarray:
    """``prefix[k] = sum_{j < k} codes[j] * B**j`` (mod 2**64); a substring's hash is a difference of two entries."""
    forward, _ = _powers(len(codes) + 1)
    prefix = np.zeros(len(codes) + 1, dtype=np.uint64)
    np.cumsum(codes * forward[: len(codes)], out=prefix[1:])
    return prefix


def _window_hashes(prefix: np.ndarray, width: int) -> np.ndarray:
    """``sum_k text[j + k] * B**k`` (mod 2**64) for every window ``[j, j + width)``."""
    _, backward = _powers(len(prefix))
    spans = prefix[width:] - prefix[:-width]
    return spans * backward[: len(spans)]


def _search_band(
    codes: np.ndarray, prefix: np.ndarray, window_hash: np.ndarray, width: int, min_repeats: int
) -> TandemRepeat | None:
    """Look for a loop with period in the band ``[width, 2*width)``, given the hashes of all length-``width``
    windows."""
    group = min_repeats - 2
    anchors = (len(window_hash) + width - 1) // width
    if anchors < group:
        return None
    # Pad so that anchor t's shifts [width, 2*width) are row t of one reshaped view.
    padded = np.full((anchors + 2) * width, _PAD, dtype=np.uint64)
    padded[: len(window_hash)] = window_hash
    agree = padded[width : (anchors + 1) * width].reshape(anchors, width) == padded[: anchors * width : width, None]
    together = agree[: anchors - group + 1].copy()
    for offset in range(1, group):
        together &= agree[offset : anchors - group + 1 + offset]
    rows, shifts = np.nonzero(together)
    if len(rows) == 0:
        return None
    # Every candidate (anchor a, period p): measure how far text[x] == text[x + p] extends around a, by hash.
    # Candidates go in chunks, stopping at the first confirmed loop: a highly periodic text ("a" * 24000) makes every
    # anchor and shift a candidate, and measuring all of them costs far more than the first chunk, which already
    # confirms it.
    all_start = rows.astype(np.int64) * width
    all_period = shifts.astype(np.int64) + width
    n = len(codes)
    for chunk in range(0, len(all_start), _CANDIDATE_CHUNK):
        start = all_start[chunk : chunk + _CANDIDATE_CHUNK]
        period = all_period[chunk : chunk + _CANDIDATE_CHUNK]
        need = (min_repeats - 1) * period
        ahead = _extension(prefix, start, period, np.minimum(n - start - period, need), forward=True)
        behind = _extension(prefix, start, period, np.minimum(start, need), forward=False)
        for k in np.flatnonzero(ahead + behind >= need).tolist():
            lo = int(start[k] - behind[k])
            found = _exact_run(codes, lo, int(start[k] + ahead[k]), int(period[k]), min_repeats)
            if found is not None:
                return found
    return None


def _extension(
    prefix: np.ndarray, start: np.ndarray, period: np.ndarray, limit: np.ndarray, forward: bool
) -> np.ndarray:
    """Per candidate, the largest ``L <= limit`` with ``text[x] == text[x + period]`` on ``L`` positions next to start.

    ``forward`` measures ``[start, start + L)``, otherwise ``[start - L, start)``. It is a vectorised binary search on
    hash equality. Equal strings always hash equal, so the result is never below the true extension; a hash
    collision can only overstate it, which the caller's exact check then rejects.
    """
    _, backward = _powers(len(prefix))
    lo = np.zeros_like(limit)
    hi = limit.copy()
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi + 1) // 2
        left = start if forward else start - mid
        right = left + period
        same = (prefix[left + mid] - prefix[left]) * backward[left] == (prefix[right + mid] - prefix[right]) * backward[
            right
        ]
        lo = np.where(active & same, mid, lo)
        hi = np.where(active & ~same, mid - 1, hi)


def _exact_run(codes: np.ndarray, lo: int, hi: int, period: int, min_repeats: int) -> TandemRepeat | None:
    """Exact check: a run of ``(min_repeats - 1) * period`` positions ``x`` in ``[lo, hi)`` with equal x, x+period."""
    need = (min_repeats - 1) * period
    if hi - lo < need:
        return None
    equal = np.empty(hi - lo + 2, dtype=np.int8)
    equal[0] = equal[-1] = 0
    equal[1:-1] = codes[lo:hi] == codes[lo + period : hi + period]
    edges = np.flatnonzero(np.diff(equal))
    run_starts, run_ends = edges[0::2], edges[1::2]
    long_runs = np.flatnonzero(run_ends - run_starts >= need)
    if len(long_runs) == 0:
        return None
    k = int(long_runs[0])
    start = lo + int(run_starts[k])
    return TandemRepeat(start=start, period=period, repeats=(int(run_ends[k] - run_starts[k]) + period) // period)
