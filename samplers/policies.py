"""Imports each policy module so it registers itself; the list is the single place policies are named."""

import samplers.uniform  # noqa: F401
