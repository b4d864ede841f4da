"""The CPU-only support module: backend collapsing, installation, and the platform verl picks with it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlif.verl_glue import cpu_support


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("cpu:gloo,cpu:gloo", "gloo"),
        ("cpu:gloo,cuda:nccl", "cpu:gloo,cuda:nccl"),
        ("nccl", "nccl"),
        (None, None),
    ],
)
def test_collapse_backend(given: str | None, expected: str | None) -> None:
    assert cpu_support.collapse_backend(given) == expected


def test_install_writes_start_up_hook_and_vllm_record(tmp_path: Path) -> None:
    written = cpu_support.install(tmp_path)
    pth = tmp_path / cpu_support.PTH_NAME
    assert pth in written
    line = pth.read_text()
    assert line.startswith("import ") and cpu_support.CPU_MODE_ENV in line
    metadata = (tmp_path / f"vllm-{cpu_support.VLLM_CPU_VERSION}.dist-info" / "METADATA").read_text()
    assert "Name: vllm" in metadata and "cpu" in cpu_support.VLLM_CPU_VERSION
    assert f"__import__('{cpu_support.__name__}')" in line


@pytest.mark.parametrize("cpu_mode", [True, False])
def test_start_up_hook_activates_the_patches_in_cpu_mode_only(tmp_path: Path, cpu_mode: bool) -> None:
    """The hook line as Python's site module runs it."""
    cpu_support.install(tmp_path)
    line = (tmp_path / cpu_support.PTH_NAME).read_text().strip()
    code = f"{line}\nimport sys\nprint(any(type(f).__name__ == '_PostImportFinder' for f in sys.meta_path))\n"
    env = {k: v for k, v in os.environ.items() if k != cpu_support.CPU_MODE_ENV}
    if cpu_mode:
        env[cpu_support.CPU_MODE_ENV] = "1"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(cpu_mode)


def test_env_and_overrides_cover_the_known_obstacles() -> None:
    env = cpu_support.cpu_env()
    assert env["VERL_PLATFORM"] == "cpu" and env["VERL_ENGINE_DEVICE"] == "cuda" and env["RLIF_CPU_MODE"] == "1"
    overrides = cpu_support.cpu_overrides()
    assert "trainer.device=cpu" in overrides
    assert "+actor_rollout_ref.rollout.enable_sleep_mode=False" in overrides
    assert "transfer_queue.backend.SimpleStorage.num_data_storage_units=1" in overrides


def test_cli_prints_env_and_overrides(capsys: pytest.CaptureFixture[str]) -> None:
    cpu_support.main(["env"])
    assert "export VERL_PLATFORM=cpu" in capsys.readouterr().out
    cpu_support.main(["overrides"])
    assert "trainer.device=cpu" in capsys.readouterr().out.splitlines()


def test_verl_selects_the_cpu_platform_in_a_fresh_process() -> None:
    pytest.importorskip("verl")
    if not cpu_support.is_installed():
        pytest.skip("start-up hook not installed in this environment (python -m rlif.verl_glue.cpu_support install)")
    code = (
        "from verl.plugin.platform import get_platform\n"
        "from verl.utils.device import get_device_name, get_torch_device\n"
        "import torch.distributed as dist\n"
        "p = get_platform()\n"
        "print(type(p).__name__, get_device_name(), get_torch_device().current_device(),"
        " p.communication_backend_name(), dist.init_process_group._rlif_cpu)\n"
    )
    env = {**os.environ, **cpu_support.cpu_env()}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split()[-5:] == ["PlatformCPU", "cpu", "cpu", "gloo", "True"]


def test_nothing_is_patched_without_cpu_mode() -> None:
    code = "import sys, torch.distributed as d; print(hasattr(d.init_process_group, '_rlif_cpu'))"
    env = {k: v for k, v in os.environ.items() if k != cpu_support.CPU_MODE_ENV}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("cpu_mode", [True, False])
def test_reference_offload_never_pins_in_cpu_mode_only(cpu_mode: bool) -> None:
    """verl builds the fsdp2 reference with ``CPUOffloadPolicy(pin_memory=True)``; pinning needs an accelerator."""
    pytest.importorskip("verl")
    if cpu_mode and not cpu_support.is_installed():
        pytest.skip("start-up hook not installed in this environment (python -m rlif.verl_glue.cpu_support install)")
    code = (
        "from torch.distributed.fsdp import CPUOffloadPolicy\n"
        "from verl.workers.engine.fsdp import transformer_impl\n"
        "policy = transformer_impl.CPUOffloadPolicy(pin_memory=True)\n"
        "print(isinstance(policy, CPUOffloadPolicy), policy.pin_memory)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != cpu_support.CPU_MODE_ENV}
    if cpu_mode:
        env.update(cpu_support.cpu_env())
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split()[-2:] == ["True", str(not cpu_mode)]
