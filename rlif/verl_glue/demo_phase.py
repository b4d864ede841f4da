"""One training phase of the CPU demo: verl 0.9.1's V1 or legacy trainer on a private local Ray cluster.

``rlif.cpu_demo`` starts ``python -m rlif.verl_glue.demo_phase SPEC`` in a child process with the CPU environment
(``rlif.verl_glue.cpu_support``), so the demo's front end never imports verl and never patches anything itself.
SPEC is the JSON object ``{"overrides": [...], "metrics_file": path}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rlif.verl_glue.config import compose
from rlif.verl_glue.cpu_support import cpu_env


def train_phase(overrides: Sequence[str], metrics_file: Path) -> None:
    """Run verl's trainer in this process (which must have the CPU environment): V1, or the legacy trainer when
    the overrides set ``trainer.use_v1=false``, chosen as verl's ``main_ppo`` chooses.

    Args:
        overrides: the run's Hydra overrides, composed and validated as ``main_ppo`` does.
        metrics_file: where verl's file logger writes the step metrics (JSON lines).
    """
    import ray
    from verl.trainer.constants_ppo import get_ppo_ray_runtime_env
    from verl.trainer.main_ppo import run_ppo

    config = compose(overrides)
    runtime_env = get_ppo_ray_runtime_env(config)
    env_vars = dict(runtime_env.get("env_vars", {}))
    env_vars.update(cpu_env())
    env_vars["VERL_FILE_LOGGER_PATH"] = str(metrics_file.resolve())
    if config.trainer.use_v1 or config.transfer_queue.enable:
        env_vars["TRANSFER_QUEUE_ENABLE"] = "1"
    runtime_env["env_vars"] = env_vars
    # A private local cluster with a fake GPU: verl's resource pools need one "GPU" per trainer rank.
    ray.init(address="local", num_cpus=8, num_gpus=1, include_dashboard=False, runtime_env=runtime_env)
    try:
        run_ppo(config, task_runner_class=_task_runner(bool(config.trainer.use_v1)))
    finally:
        ray.shutdown()


def _task_runner(use_v1: bool) -> type:
    """verl's task runner for the trainer; only the chosen one's module is imported (V1's needs TransferQueue)."""
    if use_v1:
        from verl.trainer.main_ppo import TaskRunnerV1

        return TaskRunnerV1
    from verl.trainer.main_ppo_v0 import TaskRunner

    return TaskRunner


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry of the child process the demo starts for each phase."""
    parser = argparse.ArgumentParser(prog="python -m rlif.verl_glue.demo_phase", description=__doc__.splitlines()[0])
    parser.add_argument("spec", help='JSON: {"overrides": [...], "metrics_file": path}')
    args = parser.parse_args(argv)
    spec = json.loads(args.spec)
    train_phase(spec["overrides"], Path(spec["metrics_file"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
