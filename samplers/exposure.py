"""Exposure accounting: what each source contributed to training, per step and since the start.

A sampler that changes the mix changes exposure too: more prompts of a source, more repeats of its rows, more tokens,
more truncated responses. An arm that wins may win on "more of source X" rather than on being adaptive, so these
counts are logged beside the rewards (``exposure/...``) and summarised at the end of a run:

- ``exposure/prompt_share/<group>`` and ``exposure/cum_prompt_share/<group>``: share of prompts (GRPO groups) per
  source group (the policy's ``groups``; each source its own group when it has none);
- ``exposure/prompts/<source>``, ``exposure/cum_prompts/<source>``: prompts trained;
- ``exposure/first_exposure_share/<source>``: share of the step's prompts that were their row's first draw;
- ``exposure/tokens/<source>``, ``exposure/cum_tokens/<source>``: response tokens generated (where the trainer
  reports response lengths);
- ``exposure/truncated_share/<source>`` and ``.../<source>/<interval>`` (step), ``exposure/cum_truncated_share/...``
  (since the start): share of responses that reached the length cap, which a reward reads as "cannot solve";
- ``exposure/unique_prompts/<source>``, ``exposure/draws_per_row/<source>/<interval>``,
  ``exposure/max_draws_per_row/<source>/<interval>``: from the rows' draw counts (``row_draw_metrics``);
- ``exposure/overlong_dropped/<source>/<interval>``: rows dropped at load as overlong prompts (constant per run).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from samplers.base import Pool, Record


class ExposureLedger:
    """Per-step and cumulative exposure counts from the records of each step.

    Args:
        group_of: source -> source group; sources not listed are their own group.
        dropped: rows dropped as overlong prompts per pool (reported unchanged every step).
    """

    def __init__(self, group_of: Mapping[str, str] | None = None, dropped: Mapping[Pool, int] | None = None) -> None:
        self.group_of = dict(group_of or {})
        self.dropped = dict(dropped or {})
        self.prompts: dict[str, int] = defaultdict(int)
        self.tokens: dict[str, int] = defaultdict(int)
        self.responses: dict[Pool, int] = defaultdict(int)
        self.truncated: dict[Pool, int] = defaultdict(int)

    def observe(self, records: Sequence[Record]) -> dict[str, float]:
        """Count one step's records; return its ``exposure/...`` metrics (step and cumulative)."""
        groups: dict[str, set[str]] = defaultdict(set)
        first: dict[str, set[str]] = defaultdict(set)
        tokens: dict[str, int] = defaultdict(int)
        responses: dict[Pool, int] = defaultdict(int)
        truncated: dict[Pool, int] = defaultdict(int)
        for index, record in enumerate(records):
            key = record.group or f"#{index}"
            groups[record.source].add(key)
            if record.exposure == 0:
                first[record.source].add(key)
            if record.response_tokens is not None:
                tokens[record.source] += int(record.response_tokens)
            if record.truncated is not None:
                pool = (record.source, record.interval)
                responses[pool] += 1
                truncated[pool] += bool(record.truncated)
        metrics: dict[str, float] = {}
        for source, keys in sorted(groups.items()):
            self.prompts[source] += len(keys)
            metrics[f"exposure/prompts/{source}"] = float(len(keys))
            metrics[f"exposure/first_exposure_share/{source}"] = len(first[source]) / len(keys)
        for source, count in sorted(tokens.items()):
            self.tokens[source] += count
            metrics[f"exposure/tokens/{source}"] = float(count)
        for pool, count in responses.items():
            self.responses[pool] += count
            self.truncated[pool] += truncated[pool]
        by_group: dict[str, int] = defaultdict(int)
        for source, keys in groups.items():
            by_group[self._group(source)] += len(keys)
        total = sum(by_group.values())
        for group, count in sorted(by_group.items()):
            metrics[f"exposure/prompt_share/{group}"] = count / total
        metrics.update(self._truncated_shares(responses, truncated, "exposure/truncated_share"))
        metrics.update(self.cumulative())
        return metrics

    def _group(self, source: str) -> str:
        return self.group_of.get(source, source)

    def cumulative(self) -> dict[str, float]:
        """The since-the-start metrics (``cum_...``, and the overlong rows dropped at load)."""
        metrics: dict[str, float] = {}
        for source, count in sorted(self.prompts.items()):
            metrics[f"exposure/cum_prompts/{source}"] = float(count)
        for source, count in sorted(self.tokens.items()):
            metrics[f"exposure/cum_tokens/{source}"] = float(count)
        by_group: dict[str, int] = defaultdict(int)
        for source, count in self.prompts.items():
            by_group[self._group(source)] += count
        total = sum(by_group.values())
        for group, count in sorted(by_group.items()):
            metrics[f"exposure/cum_prompt_share/{group}"] = count / total if total else 0.0
        metrics.update(self._truncated_shares(self.responses, self.truncated, "exposure/cum_truncated_share"))
        for (source, interval), count in sorted(self.dropped.items()):
            metrics[f"exposure/overlong_dropped/{source}/{interval}"] = float(count)
        return metrics

    @staticmethod
    def _truncated_shares(responses: Mapping[Pool, int], truncated: Mapping[Pool, int], name: str) -> dict[str, float]:
        metrics: dict[str, float] = {}
        per_source: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for (source, interval), count in sorted(responses.items()):
            if count:
                metrics[f"{name}/{source}/{interval}"] = truncated.get((source, interval), 0) / count
                per_source[source][0] += truncated.get((source, interval), 0)
                per_source[source][1] += count
        for source, (cut, count) in sorted(per_source.items()):
            metrics[f"{name}/{source}"] = cut / count
        return metrics

    def state(self) -> dict[str, Any]:
        """The cumulative counts as plain values."""
        return {
            "prompts": dict(self.prompts),
            "tokens": dict(self.tokens),
            "truncated": [[s, i, self.responses[(s, i)], self.truncated[(s, i)]] for s, i in sorted(self.responses)],
        }

    def load(self, state: Mapping[str, Any]) -> None:
        """Restore ``state()``."""
        self.prompts = defaultdict(int, {str(k): int(v) for k, v in state.get("prompts", {}).items()})
        self.tokens = defaultdict(int, {str(k): int(v) for k, v in state.get("tokens", {}).items()})
        self.responses = defaultdict(int)
        self.truncated = defaultdict(int)
        for source, interval, count, cut in state.get("truncated", []):
            self.responses[(str(source), int(interval))] = int(count)
            self.truncated[(str(source), int(interval))] = int(cut)


def row_draw_metrics(row_draws: Sequence[int], row_pool: Sequence[Pool]) -> dict[str, float]:
    """Unique rows drawn per source, and mean and largest draws per row per pool, from each row's draw count.

    Args:
        row_draws: draws of each row since the start.
        row_pool: each row's (source, interval), same order.
    """
    draws: dict[Pool, list[int]] = defaultdict(lambda: [0, 0, 0])  # rows, draws, largest
    unique: dict[str, int] = defaultdict(int)
    for count, pool in zip(row_draws, row_pool, strict=True):
        entry = draws[pool]
        entry[0] += 1
        entry[1] += count
        entry[2] = max(entry[2], count)
        unique[pool[0]] += count > 0
    metrics: dict[str, float] = {}
    for source, count in sorted(unique.items()):
        metrics[f"exposure/unique_prompts/{source}"] = float(count)
    for (source, interval), (rows, total, largest) in sorted(draws.items()):
        metrics[f"exposure/draws_per_row/{source}/{interval}"] = total / rows
        metrics[f"exposure/max_draws_per_row/{source}/{interval}"] = float(largest)
    return metrics
