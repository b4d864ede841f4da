"""Block until a Ray cluster has all its nodes and GPUs, or fail fast; used by every generated sbatch script.

Fixed ``sleep``s (verl's example) either waste minutes or start the trainer before the workers have joined, after
which verl places its worker groups on too few GPUs. This polls the cluster instead, and stops at once when one
of the script's ``srun`` steps (a Ray node) has died, so a broken node costs seconds, not the whole timeout.

Usage: ``python -m rlif.recipes.ray_wait --address HOST:PORT --nodes N --gpus G [--timeout S] [--pids PID ...]``.
Exit status 0 when ready, 1 on timeout or a dead step.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ClusterState:
    """What the cluster reports at one poll.

    Attributes:
        nodes: alive nodes.
        gpus: total GPU resource of the alive nodes.
    """

    nodes: int
    gpus: float


def pid_alive(pid: int) -> bool:
    """True when process ``pid`` exists (signal 0 checks without signalling)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_for_cluster(
    poll: Callable[[], ClusterState | None],
    nodes: int,
    gpus: float,
    timeout: float,
    *,
    pids: Sequence[int] = (),
    interval: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Poll until the cluster is complete.

    Args:
        poll: returns the current state, or None when the head cannot be reached yet.
        nodes: nodes required.
        gpus: GPUs required.
        timeout: seconds before giving up.
        pids: processes that must stay alive (the ``srun`` steps running Ray).
        interval: seconds between polls.
        clock: monotonic clock (injected in tests).
        sleep: sleep function (injected in tests).

    Returns:
        An empty string when ready, else the reason it is not.
    """
    deadline = clock() + timeout
    state: ClusterState | None = None
    while True:
        dead = [pid for pid in pids if not pid_alive(pid)]
        if dead:
            return f"Ray node step(s) {dead} exited before the cluster was complete"
        state = poll()
        if state is not None and state.nodes >= nodes and state.gpus >= gpus:
            return ""
        if clock() >= deadline:
            seen = "head unreachable" if state is None else f"{state.nodes} node(s), {state.gpus:g} GPU(s)"
            return f"timed out after {timeout:g} s waiting for {nodes} node(s) and {gpus:g} GPU(s); saw {seen}"
        sleep(interval)


def ray_poller(address: str) -> Callable[[], ClusterState | None]:
    """A ``poll`` function backed by ``ray.init(address)`` (connects on first success, then queries the GCS)."""
    import ray

    def poll() -> ClusterState | None:
        if not ray.is_initialized():
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError):
                return None
        alive = [n for n in ray.nodes() if n.get("Alive")]
        return ClusterState(nodes=len(alive), gpus=sum(n.get("Resources", {}).get("GPU", 0.0) for n in alive))

    return poll


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m rlif.recipes.ray_wait", description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True, help="HOST:PORT of the Ray head")
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--gpus", type=float, required=True)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--pids", type=int, nargs="*", default=[])
    args = parser.parse_args(argv)
    started = time.monotonic()
    reason = wait_for_cluster(ray_poller(args.address), args.nodes, args.gpus, args.timeout, pids=args.pids)
    if reason:
        print(f"ray_wait: {reason}", file=sys.stderr)
        return 1
    print(f"ray_wait: {args.nodes} node(s), {args.gpus:g} GPU(s) ready after {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
