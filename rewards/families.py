"""Imports each task family module so that it registers itself; the list is the single place families are named."""

import rewards.graph  # noqa: F401
import rewards.instruction_following  # noqa: F401
import rewards.logicif  # noqa: F401
