"""The 58 IFBench out-of-distribution instruction checkers (allenai/IFBench), registered under their official ids.

Importing this module registers every checker with ``rewards.instruction_following.registry`` (benchmark
``"ifbench"``). The checkers live in four modules by id family:

- ``ifbench_counting``: ``count:*`` (9) and ``ratio:*`` (5)
- ``ifbench_words``: ``words:*`` (13) and ``sentence:*`` (3)
- ``ifbench_format``: ``format:*`` (14)
- ``ifbench_custom``: ``custom:*`` (11) and ``repeat:*`` (3)

Semantics, quirks kept for comparability, and the measured agreement with the reference are in docs/ifbench.md.
Nothing heavy is imported here: nltk, the Punkt tables, ``emoji`` and ``syllapy`` load on first use.
"""

from __future__ import annotations

from rewards.instruction_following import (  # noqa: F401  (importing registers the checkers)
    ifbench_counting,
    ifbench_custom,
    ifbench_format,
    ifbench_words,
)

IFBENCH_INSTRUCTION_COUNT = 58
"""How many instruction ids IFBench defines besides the 25 IFEval ones it re-exports."""
