"""Test-suite settings shared by every directory.

Hypothesis profiles: the default explores new random examples on every run (how the suite finds new bugs during
development); ``ci`` (``.ci/run`` passes ``--hypothesis-profile=ci``) derandomizes, so CI runs the same examples on
every machine and a result does not depend on luck. A bug found locally becomes an ``@example`` in its test.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
