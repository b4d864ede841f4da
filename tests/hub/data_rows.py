"""The data tests' fixture rows (``tests/data/data_fixtures.py``), loaded by file path for the hub tests.

The test folders are not packages (and a dependency in the verl venv installs a top-level ``tests`` package that
would shadow ours), so the hub tests cannot import ``tests.data``; loading the one file by path keeps a single
definition of the fixture rows without touching ``sys.path``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "data" / "data_fixtures.py"
_SPEC = importlib.util.spec_from_file_location("rlif_test_data_fixtures", _PATH)
if _SPEC is None or _SPEC.loader is None:
    raise ImportError(f"cannot load {_PATH}")
fixtures = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fixtures)

IFBENCH_FILE = fixtures.IFBENCH_FILE
IFEVAL_FILE = fixtures.IFEVAL_FILE
head_jsonl = fixtures.head_jsonl
if_train_fixture_row = fixtures.if_train_fixture_row
rlif_format_if_row = fixtures.rlif_format_if_row
rlif_format_logicif_row = fixtures.rlif_format_logicif_row
write_rlif_format_parquet = fixtures.write_rlif_format_parquet
logicif_fixture_row = fixtures.logicif_fixture_row
write_jsonl = fixtures.write_jsonl
