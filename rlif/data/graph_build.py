"""Build the graph-task parquet files: ``python -m rlif.data.graph_build --count N --out DIR [options]``.

Work is cut into shards of consecutive item indices per (task, size). Each shard is generated and solved by a
worker (Ray tasks when a Ray cluster is reachable, else local processes; see ``resolve_ray_mode``) and written by
the driver as one JSONL file,
atomically (temporary file + rename), so an interrupted build resumes where it stopped: a rerun skips every
shard file that exists. Once all shards exist the driver assembles the outputs:

* ``train_mixed.parquet``: every train row, shuffled (seeded);
* ``train_level_<k>.parquet``: curriculum level k (each task's train rows ranked by difficulty and cut into
  ``--levels`` equal parts), rows in mixed order;
* ``val_easy.parquet`` / ``val_hard.parquet``: the ``small`` / ``large`` validation rows;
* ``manifest.json``: the configuration, row counts per file and task, and each level's difficulty range.

Items ``0..val_per_size-1`` of every (task, size) are validation items and the next ``count`` are training
items, so the validation set does not change when ``--count`` grows. See docs/np-graph-data.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import signal
import socket
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rlif.atomic_files import write_lines_atomic, write_text_atomic
from rlif.data.cli import DefaultsHelpFormatter
from rlif.data.files import write_rows_atomic
from rlif.data.graph_rows import item_row
from rlif.graphs.items import SIZES, check_task_size, make_item
from rlif.graphs.tasks import TASKS

logger = logging.getLogger(__name__)

GENERATOR_VERSION = 2
"""Bump when generation changes, so old shards are not mixed with new ones (it names the shard folder)."""

RAY_MODES = ("off", "auto", "local")
DEFAULT_RAY_MODE = "auto"
"""The default detects a reachable cluster and falls back to local processes, so a build started on a Ray cluster
spreads over it without a flag, and one started elsewhere never starts Ray."""
RAY_PROBE_TIMEOUT_S = 2.0
"""How long ``ray_cluster_reachable`` waits for the cluster's GCS port before calling a recorded address stale."""
VAL_FILES = {"small": "val_easy.parquet", "large": "val_hard.parquet"}


@dataclass(frozen=True)
class BuildConfig:
    """What to build.

    Attributes:
        out: output folder (shards go to ``out/shards/...``).
        tasks: tasks to build, ids of ``rlif.graphs.tasks.TASKS``.
        sizes: sizes to build, from ``SIZES``.
        count: training items per task and size.
        val_per_size: validation items per task and size.
        levels: number of curriculum levels.
        seed: base seed; item ``i`` of (task, size) is reproducible from it alone.
        workers: local worker processes (1 = in this process).
        ray: ``auto`` (default) = use the Ray cluster named by ``RAY_ADDRESS`` or started with ``ray start`` when
            it answers (see ``resolve_ray_mode``), else local processes; ``off`` = local processes only;
            ``local`` = start a private local Ray instance with ``workers`` CPUs.
        shard_size: items per shard file.
    """

    out: Path
    tasks: tuple[str, ...] = tuple(TASKS)
    sizes: tuple[str, ...] = SIZES
    count: int = 1000
    val_per_size: int = 50
    levels: int = 5
    seed: int = 0
    workers: int = 1
    ray: str = DEFAULT_RAY_MODE
    shard_size: int = 32

    def __post_init__(self) -> None:
        for task in self.tasks:
            for size in self.sizes:
                check_task_size(task, size)
        if not self.tasks or not self.sizes:
            raise ValueError("tasks/sizes: need at least one task and one size")
        if len(set(self.tasks)) != len(self.tasks) or len(set(self.sizes)) != len(self.sizes):
            raise ValueError("tasks/sizes: duplicates")
        if self.count < 0 or self.val_per_size < 0 or self.count + self.val_per_size == 0:
            raise ValueError("count/val_per_size: must be >= 0 and not both 0")
        if self.levels < 1 or self.workers < 1 or self.shard_size < 1:
            raise ValueError("levels/workers/shard_size: must be >= 1")
        if self.ray not in RAY_MODES:
            raise ValueError(f"ray: expected one of {RAY_MODES}, got {self.ray!r}")

    @property
    def shard_dir(self) -> Path:
        """Shard folder; its name holds everything a shard's content depends on besides its own range."""
        return self.out / "shards" / f"v{GENERATOR_VERSION}-seed{self.seed}-val{self.val_per_size}"


@dataclass(frozen=True)
class ShardSpec:
    """Items ``start..stop-1`` of one (task, size); picklable, so it can travel to a process or a Ray worker."""

    task: str
    size: str
    seed: int
    start: int
    stop: int
    val_per_size: int

    @property
    def file_name(self) -> str:
        """The shard's file name inside the shard folder."""
        return f"{self.task}-{self.size}-{self.start:07d}-{self.stop:07d}.jsonl"


def plan_shards(config: BuildConfig) -> list[ShardSpec]:
    """Every shard the configuration needs, in (task, size, start) order."""
    total = config.val_per_size + config.count
    return [
        ShardSpec(task, size, config.seed, start, min(start + config.shard_size, total), config.val_per_size)
        for task in config.tasks
        for size in config.sizes
        for start in range(0, total, config.shard_size)
    ]


def build_shard(spec: ShardSpec) -> list[dict[str, Any]]:
    """Generate and solve the shard's items; returns their rows (``index``/``level`` unset)."""
    rows = []
    for index in range(spec.start, spec.stop):
        item = make_item(spec.task, spec.size, spec.seed, index)
        rows.append(item_row(item, "val" if index < spec.val_per_size else "train"))
    return rows


def write_shard(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write one shard as JSONL, atomically."""
    write_lines_atomic(path, (json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def read_shard(path: Path) -> list[dict[str, Any]]:
    """Read a shard file back."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _worker_init() -> None:
    """Leave stopping to the driver: workers ignore SIGINT (Ctrl-C reaches the whole process group; the driver
    then terminates them itself, without a traceback from every worker) and take SIGTERM's default action, not
    the driver's handler (``main``) that the fork would otherwise inherit."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel queued shards and end the running workers now (``shutdown`` alone waits for running tasks)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join()


def _run_local(pending: Sequence[ShardSpec], workers: int, done: Callable[[ShardSpec, list], None]) -> None:
    if workers == 1:
        for spec in pending:
            done(spec, build_shard(spec))
        return
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init)
    try:
        futures = {pool.submit(build_shard, spec): spec for spec in pending}
        for future in as_completed(futures):
            done(futures[future], future.result())
    except BaseException:  # SIGINT/SIGTERM (see ``main``) or a failed shard: no worker may outlive the build
        _stop_pool(pool)
        raise
    pool.shutdown()


def ray_address_record() -> Path:
    """Where ``ray start`` records the current cluster: ``<RAY_TMPDIR, TMPDIR or /tmp>/ray/ray_current_cluster``.

    This is the file Ray's own ``ray.init(address="auto")`` reads first (``ray._common.utils.get_ray_address_file``);
    ``ray stop`` deletes it.
    """
    temp_root = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    return Path(temp_root) / "ray" / "ray_current_cluster"


def ray_cluster_address() -> str | None:
    """The address of a Ray cluster meant to be shared, or None.

    That is ``RAY_ADDRESS`` if set (Ray jobs and ``ray submit`` set it), else the address ``ray start`` records in
    ``ray_address_record()``. ``RAY_ADDRESS=auto`` defers to that record, and ``RAY_ADDRESS=local`` (Ray's "start
    a new instance") names no cluster. Unlike Ray's own ``address="auto"`` this does not scan the process table,
    which would also find another program's private ``ray.init()`` instance.
    """
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env == "local":
        return None
    if env and env != "auto":
        return env
    record = ray_address_record()
    try:
        address = record.read_text().strip()
    except OSError:  # no record (no ``ray start`` on this machine, or ``ray stop`` removed it) or unreadable
        return None
    return address or None


def ray_cluster_reachable(address: str, timeout: float = RAY_PROBE_TIMEOUT_S) -> bool:
    """Whether ``address`` (``host:port`` or ``ray://host:port``) accepts a TCP connection within ``timeout``.

    A record left behind by a cluster that died without ``ray stop`` (a killed container, a reboot with a kept
    temp folder) would otherwise make ``ray.init`` fail or hang; a connect probe catches that without starting Ray.
    An address this cannot parse is assumed reachable, so Ray itself reports what is wrong with it.
    """
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return True
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return True
    except OSError:
        return False


def resolve_ray_mode(mode: str, workers: int) -> tuple[str, str | None]:
    """Decide where shards run, and log the choice: ``("cluster", address)``, ``("local", None)`` (a private Ray
    instance) or ``("off", None)`` (local processes).

    ``auto`` picks the cluster of ``ray_cluster_address`` when ``ray_cluster_reachable`` says it answers, else local
    processes; it never starts a Ray instance. ``off`` and ``local`` are taken as given.
    """
    if mode == "local":
        logger.info("starting a private local Ray instance with %d CPU(s)", workers)
        return "local", None
    if mode == "auto":
        address = ray_cluster_address()
        if address is None:
            logger.info(
                "no Ray cluster reachable (no RAY_ADDRESS, no %s); using %d local worker process(es)",
                ray_address_record(),
                workers,
            )
            return "off", None
        if not ray_cluster_reachable(address):
            logger.info(
                "no Ray cluster reachable (%s does not answer; stale record?); using %d local worker process(es)",
                address,
                workers,
            )
            return "off", None
        logger.info("using the Ray cluster at %s", address)
        return "cluster", address
    logger.info("Ray off; using %d local worker process(es)", workers)
    return "off", None


def _run_ray(
    pending: Sequence[ShardSpec], address: str | None, workers: int, done: Callable[[ShardSpec, list], None]
) -> None:
    """Run shards as Ray tasks on the cluster at ``address``, or on a private local instance when it is None.

    The ``rlif`` package travels to the workers through ``runtime_env.py_modules``, so cluster nodes need only
    the dependencies (networkx, numpy, highspy, fast-tsp), not this checkout.
    """
    import ray

    import rlif

    runtime_env = {"py_modules": [str(Path(rlif.__file__).parent)]}
    if address is not None:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    else:
        ray.init(
            num_cpus=workers,
            runtime_env=runtime_env,
            include_dashboard=False,
            object_store_memory=100 * 1024 * 1024,
            log_to_driver=False,
        )
    try:
        remote = ray.remote(num_cpus=1)(build_shard)
        futures = {remote.remote(spec): spec for spec in pending}
        while futures:
            ready, _ = ray.wait(list(futures), num_returns=1)
            for ref in ready:
                done(futures.pop(ref), ray.get(ref))
    finally:
        ray.shutdown()


def build_shards(config: BuildConfig) -> list[ShardSpec]:
    """Build every missing shard (skipping finished ones); returns the full shard plan.

    Raises:
        ValueError: an item could not be generated (see ``make_item``).
    """
    plan = plan_shards(config)
    pending = [spec for spec in plan if not (config.shard_dir / spec.file_name).exists()]
    logger.info("%d of %d shards to build in %s", len(pending), len(plan), config.shard_dir)
    if pending:
        runner, address = resolve_ray_mode(config.ray, config.workers)
        with tqdm(total=sum(s.stop - s.start for s in pending), unit="item", desc="graph items") as bar:

            def done(spec: ShardSpec, rows: list) -> None:
                write_shard(config.shard_dir / spec.file_name, rows)
                bar.update(len(rows))

            if runner == "off":
                _run_local(pending, config.workers, done)
            else:
                _run_ray(pending, address, config.workers, done)
    return plan


def assign_levels(rows: Iterable[dict[str, Any]], levels: int) -> dict[str, list[tuple[int, int]]]:
    """Set ``extra_info.level`` in place; returns each task's (min, max) difficulty per level.

    Train rows of a task are ranked by (difficulty, item id) and cut into ``levels`` parts of equal size, as the
    NPG-Muse curriculum uses equal-volume levels. A validation row gets the lowest level whose train rows reach
    its difficulty (the last level if none does; level 0 if the task has no train rows).
    """
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    val_rows: list[dict[str, Any]] = []
    for row in rows:
        info = row["extra_info"]
        (by_task[info["task"]] if info["split"] == "train" else val_rows).append(row)
    ranges: dict[str, list[tuple[int, int]]] = {}
    for task, task_rows in by_task.items():
        task_rows.sort(key=lambda r: (r["extra_info"]["difficulty"], r["extra_info"]["item_id"]))
        ranges[task] = []
        for level in range(levels):
            part = task_rows[len(task_rows) * level // levels : len(task_rows) * (level + 1) // levels]
            for row in part:
                row["extra_info"]["level"] = level
            if part:
                ranges[task].append((part[0]["extra_info"]["difficulty"], part[-1]["extra_info"]["difficulty"]))
    for row in val_rows:
        info = row["extra_info"]
        levels_of_task = ranges.get(info["task"], [])
        reach = [k for k, (_, hi) in enumerate(levels_of_task) if hi >= info["difficulty"]]
        info["level"] = reach[0] if reach else max(len(levels_of_task) - 1, 0)
    return ranges


OUTPUT_PATTERNS = ("train_mixed.parquet", "train_level_*.parquet", "val_easy.parquet", "val_hard.parquet")
"""Every data file an assembly may write; one that the current set does not contain is stale and removed."""
MANIFEST = "manifest.json"
ASSEMBLY_PREFIX = ".assemble-"
"""Hidden folder in ``--out`` where one assembly writes its whole set before committing it."""


def _with_index(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    for position, row in enumerate(rows):
        row["extra_info"]["index"] = position
    return list(rows)


def assemble(config: BuildConfig, plan: Sequence[ShardSpec]) -> dict[str, Any]:
    """Read all shards of the plan and write the parquet files and the manifest; returns the manifest as written.

    Raises:
        ValueError: a shard of the plan is missing.
    """
    rows: list[dict[str, Any]] = []
    for spec in plan:
        path = config.shard_dir / spec.file_name
        if not path.exists():
            raise ValueError(f"{path}: shard missing; run the build again")
        rows.extend(read_shard(path))
    ranges = assign_levels(rows, config.levels)
    train = [r for r in rows if r["extra_info"]["split"] == "train"]
    random.Random(config.seed).shuffle(train)
    outputs: dict[str, list[dict[str, Any]]] = {"train_mixed.parquet": _with_index(train)}
    for level in range(config.levels):
        outputs[f"train_level_{level}.parquet"] = [r for r in train if r["extra_info"]["level"] == level]
    for size, name in VAL_FILES.items():
        outputs[name] = _with_index(
            [r for r in rows if r["extra_info"]["split"] == "val" and r["extra_info"]["size"] == size]
        )
    for stale in config.out.glob(f"{ASSEMBLY_PREFIX}*"):  # left by an assembly that was killed
        shutil.rmtree(stale, ignore_errors=True)
    staging = config.out / f"{ASSEMBLY_PREFIX}{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=True)
    try:
        files: dict[str, dict[str, int]] = {}
        for name, file_rows in outputs.items():
            if file_rows:
                write_rows_atomic(file_rows, staging / name, schema=None)
                files[name] = dict(sorted(Counter(r["extra_info"]["task"] for r in file_rows).items()))
        manifest = {
            "generator_version": GENERATOR_VERSION,
            "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
            "files": files,
            "level_difficulty_ranges": ranges,
        }
        text = json.dumps(manifest, indent=2) + "\n"
        write_text_atomic(staging / MANIFEST, text)
        commit_outputs(staging, config.out, list(files))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return json.loads(text)


def commit_outputs(staging: Path, out: Path, names: Sequence[str]) -> None:
    """Move a fully written set of outputs from ``staging`` into ``out``: manifest out first, back in last.

    Several files cannot be renamed in one step, so the manifest marks a complete set: the old one is removed
    before the first new file lands and the new one is renamed in after the last, once stale files of an earlier
    configuration (e.g. ``train_level_7`` after ``--levels 5``) are gone. A build stopped in between leaves a
    folder with no manifest, never new data files beside the old manifest; running it again completes the set
    (every shard is kept, so that takes seconds).
    """
    (out / MANIFEST).unlink(missing_ok=True)
    for name in names:
        os.replace(staging / name, out / name)
    keep = set(names)
    for pattern in OUTPUT_PATTERNS:
        for old in out.glob(pattern):
            if old.name not in keep:
                old.unlink()
    os.replace(staging / MANIFEST, out / MANIFEST)


def build(config: BuildConfig) -> dict[str, Any]:
    """Build missing shards, then assemble the outputs; returns the manifest."""
    return assemble(config, build_shards(config))


def _csv(choices: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    def parse(text: str) -> tuple[str, ...]:
        values = tuple(v.strip() for v in text.split(",") if v.strip())
        unknown = [v for v in values if v not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {list(choices)}")
        return values

    return parse


def count_for_volume(volume: int, tasks: int, sizes: int) -> int:
    """Training items per task and size for ``volume`` training rows in all, split evenly over every pair.

    Args:
        volume: training rows in all (``--volume``).
        tasks: how many tasks are built (all of ``TASKS`` unless ``--tasks`` picks fewer).
        sizes: how many size classes are built.

    Raises:
        ValueError: ``volume`` is not a positive multiple of ``tasks`` x ``sizes``; the message states the rule
            with these numbers and names the nearest volumes that are.
    """
    cells = tasks * sizes
    if volume > 0 and volume % cells == 0:
        return volume // cells
    below = volume - volume % cells
    nearest = [v for v in (below, below + cells) if v > 0]
    raise ValueError(
        f"--volume {volume}: the training rows are split evenly over every task and size, so the volume must be a "
        f"positive multiple of tasks x sizes = {tasks} x {sizes} = {cells}; nearest valid: "
        + " or ".join(str(v) for v in nearest)
    )


def parse_args(argv: Sequence[str] | None = None) -> BuildConfig:
    """Parse the command line into a ``BuildConfig``."""
    parser = argparse.ArgumentParser(
        prog="python -m rlif.data.graph_build",
        description=__doc__.split("\n")[0],
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--tasks", type=_csv(tuple(TASKS)), default=tuple(TASKS), help="comma-separated tasks")
    parser.add_argument("--sizes", type=_csv(SIZES), default=SIZES, help="comma-separated sizes (small = easy)")
    amount = parser.add_mutually_exclusive_group(required=True)
    amount.add_argument("--count", type=int, help="training items per task and size")
    amount.add_argument(
        "--volume",
        type=int,
        help="training rows in all (the recipes' data volume); split evenly, so a multiple of tasks x sizes",
    )
    parser.add_argument("--val-per-size", type=int, default=50, help="validation items per task and size")
    parser.add_argument("--levels", type=int, default=5, help="curriculum levels")
    parser.add_argument("--seed", type=int, default=0, help="base seed of every item")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="local worker processes (this machine's cores)"
    )
    parser.add_argument(
        "--ray",
        choices=RAY_MODES,
        default=DEFAULT_RAY_MODE,
        help="auto: a reachable Ray cluster (RAY_ADDRESS or `ray start`), else local processes; "
        "off: local processes; local: a private Ray instance",
    )
    parser.add_argument("--shard-size", type=int, default=32, help="items per shard file")
    args = parser.parse_args(argv)
    count = args.count
    if args.volume is not None:
        try:
            count = count_for_volume(args.volume, len(args.tasks), len(args.sizes))
        except ValueError as err:
            parser.error(str(err))
    try:
        return BuildConfig(
            out=args.out,
            tasks=args.tasks,
            sizes=args.sizes,
            count=count,
            val_per_size=args.val_per_size,
            levels=args.levels,
            seed=args.seed,
            workers=args.workers,
            ray=args.ray,
            shard_size=args.shard_size,
        )
    except ValueError as err:
        parser.error(str(err))


def _stop_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM (``kill``, Slurm's ``scancel``) unwinds like Ctrl-C, so the pool's workers are stopped too."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; exit status 130 when stopped by SIGINT or SIGTERM (finished shards are kept)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    config = parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        manifest = build(config)
    except KeyboardInterrupt:
        print(
            f"stopped: finished shards are kept in {config.shard_dir}; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    for name, counts in manifest["files"].items():
        print(f"{config.out / name}: {sum(counts.values())} rows {counts}")
    print(f"manifest: {config.out / MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
