"""Source groups: the families a source-weighting rule weighs, each made of one or more ``data_source`` values.

Users think in families (IF, LogicIF, graph), while rows carry finer ``data_source`` values (``iftrain``,
``ifeval``, ``ifbench``; ``graph/tsp``, ...). Weighting raw sources would make "1:1 IF:LogicIF" over a mix of
iftrain, ifeval and logicif give LogicIF a third. A rule therefore weighs groups, and within a group a source is
drawn in proportion to its rows (as if the group's rows were one pool). Without ``groups`` every source is its own
group. A member is an exact name or a prefix ending in ``/`` (``graph/``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from samplers.drawing import WeightedChoice
from samplers.intervals import matches_sources

LOG = logging.getLogger("rlif.samplers")


def check_groups(groups: Mapping[str, Sequence[str]] | None) -> dict[str, list[str]] | None:
    """Validate the ``groups`` parameter: a mapping from group name to a non-empty list of sources.

    Raises:
        ValueError: not a mapping, an empty or non-list member list, or a non-string member.
    """
    if groups is None:
        return None
    if not isinstance(groups, Mapping) or not groups:
        raise ValueError(f"groups must map group names to lists of data_source values, got {groups!r}")
    checked: dict[str, list[str]] = {}
    for name, members in groups.items():
        if isinstance(members, str) or not isinstance(members, Sequence) or not members:
            raise ValueError(f"groups.{name} must be a non-empty list of data_source values, got {members!r}")
        if not all(isinstance(member, str) and member for member in members):
            raise ValueError(f"groups.{name} members must be non-empty strings, got {list(members)}")
        checked[str(name)] = [str(member) for member in members]
    return checked


class SourceGroups:
    """The resolved groups of one training set.

    Args:
        groups: checked ``groups`` (None: every source is its own group).
        source_rows: rows per source in the data.

    Raises:
        ValueError: a group none of whose members is in the data, a source in two groups, or a source in none.
            A member absent from the data (ifbench in a mix without it) is logged, not raised.
    """

    def __init__(self, groups: Mapping[str, Sequence[str]] | None, source_rows: Mapping[str, int]) -> None:
        sources = sorted(source_rows)
        if groups is None:
            members = {source: [source] for source in sources}
        else:
            members = {}
            for name, patterns in groups.items():
                members[name] = [source for source in sources if matches_sources(source, patterns)]
                if not members[name]:
                    raise ValueError(
                        f"groups.{name}: {list(patterns)} match no data_source in the training data (sources: "
                        f"{sources}); the group would get its share of prompts from nowhere. Fix the names or remove "
                        "the group"
                    )
                absent = [p for p in patterns if not any(matches_sources(source, [p]) for source in sources)]
                if absent:
                    LOG.warning(
                        "groups.%s: %s match no data_source in the training data (sources: %s)", name, absent, sources
                    )
            owners: dict[str, list[str]] = {}
            for name, listed in members.items():
                for source in listed:
                    owners.setdefault(source, []).append(name)
            doubled = {source: names for source, names in owners.items() if len(names) > 1}
            if doubled:
                raise ValueError(f"groups: each data_source belongs to one group, but {doubled}")
            orphans = [source for source in sources if source not in owners]
            if orphans:
                raise ValueError(
                    f"groups: data_source {orphans} is in no group of {sorted(members)}; add it to one, so that its "
                    "share is stated"
                )
        self.members: dict[str, list[str]] = members
        self.group_of: dict[str, str] = {source: name for name, listed in members.items() for source in listed}
        self._choice = {
            name: WeightedChoice(listed, [float(source_rows[source]) for source in listed])
            for name, listed in members.items()
        }

    @property
    def names(self) -> list[str]:
        """Group names, sorted."""
        return sorted(self.members)

    def choice(self, group: str) -> WeightedChoice[str]:
        """The within-group draw of a source (in proportion to rows)."""
        return self._choice[group]

    def shares(self, group: str) -> dict[str, float]:
        """Each member source's share within ``group``."""
        return self._choice[group].probabilities()

    def means(self, source_sums: Mapping[str, tuple[float, int]]) -> dict[str, float]:
        """Mean reward per group from per-source (sum, count), each response weighing the same."""
        totals: dict[str, list[float]] = {}
        for source, (total, count) in source_sums.items():
            group = self.group_of.get(source)
            if group is None or count == 0:
                continue
            entry = totals.setdefault(group, [0.0, 0.0])
            entry[0] += total
            entry[1] += count
        return {group: total / count for group, (total, count) in totals.items()}
