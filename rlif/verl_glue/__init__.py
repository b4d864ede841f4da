"""The only rlif modules that import verl: the hooks verl loads by pkg:// path (see hooks.py)."""
