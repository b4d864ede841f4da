"""The reward entry and the dataset import with no verl V1 package and no TransferQueue (verl's ``neo`` branch drops
TransferQueue; a verl without V1 must still run rlif on its legacy trainer)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("verl")

REPO = Path(__file__).resolve().parents[2]

BLOCKED = ("verl.trainer.ppo.v1", "transfer_queue")


def run_without_v1(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where importing a ``BLOCKED`` module fails as if it were not installed."""
    prelude = textwrap.dedent(
        f"""
        import importlib.abc
        import sys

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if any(name == b or name.startswith(b + ".") for b in {BLOCKED!r}):
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, Block())
        """
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_reward_entry_and_dataset_import_without_v1() -> None:
    result = run_without_v1(
        """
        from rlif.verl_glue.hooks import PolicySampledDataset, compute_score
        from verl.utils.dataset.rl_dataset import RLHFDataset

        assert issubclass(PolicySampledDataset, RLHFDataset) and callable(compute_score)
        assert hasattr(PolicySampledDataset, "on_batch_end")
        leaked = sorted(m for m in sys.modules if m.startswith(("verl.trainer.ppo.v1", "transfer_queue")))
        assert not leaked, leaked
        print("ok")
        """
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")


def test_the_block_is_real() -> None:
    result = run_without_v1("import rlif.verl_glue.v1_feedback\n")
    assert result.returncode != 0
    assert "No module named 'verl.trainer.ppo.v1" in result.stderr
