"""Lets tests import the small shared helper modules that sit next to them (``*_testkit.py``)."""

import sys
from pathlib import Path

for helper_dir in {p.parent for p in Path(__file__).parent.rglob("*_testkit.py")}:
    if str(helper_dir) not in sys.path:
        sys.path.insert(0, str(helper_dir))
