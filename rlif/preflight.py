"""Preflight: a run's inputs and a node's resources are checked before a job queues and before Ray starts.

A missing data file, a model that is not in the local Hub cache, a GPU that is smaller or busier than planned, a full
checkpoint disk or a wrong verl/vLLM/flash-attn build would otherwise show up minutes (or hours) into a job, deep in a
Ray worker's traceback. Each check here answers in seconds with one line naming the file or setting at fault.

Two places call it:

- generation (``generate_train_recipes.py``, ``rlif.recipes.generate``): every run's data files exist, have rlif's
  columns and rows, and its first rows validate; the model resolves to a local directory or a Hub-cache snapshot.
- every job, on every node, before Ray starts (``python -m rlif.preflight job ...`` in the generated script): data,
  model snapshot (the job runs with ``HF_HUB_OFFLINE=1``, so nothing may need the network), GPU count and memory,
  NVIDIA driver version, free disk for the checkpoints an attempt holds at once, and the pinned package versions. On
  success it prints the resolved model directory on stdout (the script trains from it), and one summary line per
  node on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from rlif.envfile import hub_cache
from rlif.hub.checkpoints import TOKENIZER_FILES

REPO_ROOT = Path(__file__).resolve().parents[1]


CHAT_TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")
"""Where a chat template lives when ``tokenizer_config.json`` has no ``chat_template`` key."""

SAMPLE_ROWS = 32
"""Rows of each data file validated at preflight (the whole file is validated when it is built or downloaded)."""

PINNED_PACKAGES = ("verl", "vllm", "flash-attn")
"""Distributions whose exact versions the GPU stack needs; their pins are read from pyproject.toml."""

GPU_MEMORY_TOLERANCE = 0.95
"""A GPU sold as 80 GB reports 79.6 GiB: accept this fraction of the planned ``slurm.gpu_memory_gb``."""

GPU_BUSY_FRACTION = 0.05
"""A GPU with more than this fraction of its memory in use before the job starts is shared with another process."""

CHECKPOINT_BYTES_PER_PARAM = 12
"""One verl checkpoint of a full fine-tune: fp32 master weights (4 B) and AdamW's two fp32 moments (8 B) per
parameter (``save_contents`` model + optimizer; the extra state is small)."""

CHECKPOINT_BYTES_PER_PARAM_LORA = 4
"""With LoRA the optimizer state is the adapters' only; the saved fp32 model weights dominate."""


MIN_DRIVER_MAJOR = 580
"""The CUDA 13 builds of torch and vLLM the recipes pin need an NVIDIA driver of branch 580 or newer; an older
driver fails inside a Ray worker at the first CUDA call, minutes into the job."""


class PreflightError(ValueError):
    """One or more preflight checks failed; ``lines`` holds one self-contained line per failure."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))


# ---- locations ------------------------------------------------------------------------------------------------------


def hub_cache_dir(environ: Mapping[str, str | None]) -> Path:
    """The Hugging Face Hub cache the job reads, as the downloads fill it (``rlif.envfile.hub_cache``:
    ``HF_CACHE_DIR``, which the generated scripts export as ``HF_HUB_CACHE``; ``HF_HUB_CACHE``/``HF_HOME`` alone;
    a relative path from the repository root).

    Raises:
        ValueError: two of those variables name different caches.
    """
    return hub_cache(environ)[0]


def is_repo_id(model: str) -> bool:
    """``owner/name`` with Hub-legal characters, and not an existing local path."""
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+", model)) and not Path(model).expanduser().exists()


# ---- data ---------------------------------------------------------------------------------------------------------


def check_data_file(path: Path, *, sample_rows: int = SAMPLE_ROWS) -> str:
    """Check one verl parquet file cheaply: it exists, its footer reads, it has rlif's five columns, at least one
    row, and its first ``sample_rows`` rows validate (structure and ground truth, ``rlif.data.schema``).

    Returns:
        An empty string when fine, else one line naming the file (and row and field) and what to do.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rlif.data.schema import validate_row, validate_table_schema

    if not path.exists():
        return f"{path}: no such file (download: python hf_data_download.py; or build: python -m rlif.data)"
    if not path.is_file():
        return f"{path}: not a file"
    try:
        parquet = pq.ParquetFile(path)
        validate_table_schema(parquet.schema_arrow, where=str(path))
        if parquet.metadata.num_rows == 0:
            return f"{path}: has no rows"
        for i, row in enumerate(parquet.iter_batches(batch_size=sample_rows).__next__().to_pylist()):
            validate_row(row, where=f"{path}: row {i}")
    except (OSError, pa.ArrowException) as err:
        return f"{path}: not a readable parquet file ({err})"
    except ValueError as err:
        return f"{err} (check the whole file with `python -m rlif.data validate {path}`)"
    return ""


# ---- model --------------------------------------------------------------------------------------------------------


def snapshot_problem(directory: Path) -> str:
    """What is missing from a model directory: its config, or a weight file (a broken symlink in a Hub snapshot is an
    interrupted download). Empty when complete."""
    if not (directory / "config.json").is_file():
        return f"{directory} has no config.json (not a model directory)"
    index = directory / "model.safetensors.index.json"
    if index.exists():
        try:
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError) as err:
            return f"{index}: unreadable weight index ({err})"
        missing = [s for s in shards if not (directory / s).is_file()]
        if missing:
            return f"{directory}: weight shard(s) {', '.join(missing)} missing (an interrupted download?)"
        return ""
    else:
        weights = [p for p in directory.iterdir() if p.suffix in {".safetensors", ".bin"}]
        if not weights or not all(p.is_file() for p in weights):
            return f"{directory}: no complete weight file (*.safetensors) (an interrupted download?)"
    return tokenizer_problem(directory)


def tokenizer_problem(directory: Path) -> str:
    """What a model directory lacks to tokenize chat prompts: a tokenizer file, or a chat template. Empty when fine.

    verl builds its prompts with the tokenizer's chat template; a directory without tokenizer files loads as a
    1-token tokenizer and fails deep in the job, one without a template fails at the first prompt.
    """
    if not any((directory / name).is_file() for name in TOKENIZER_FILES):
        return (
            f"{directory}: no tokenizer files ({', '.join(TOKENIZER_FILES)}); copy them from the base model "
            "(its Hub snapshot) or download the model again"
        )
    config = directory / "tokenizer_config.json"
    try:
        has_template = config.is_file() and bool(json.loads(config.read_text(encoding="utf-8")).get("chat_template"))
    except (OSError, ValueError, AttributeError) as err:
        return f"{config}: unreadable ({err})"
    if not has_template and not any((directory / name).is_file() for name in CHAT_TEMPLATE_FILES):
        return (
            f"{directory}: no chat template (tokenizer_config.json has no chat_template and there is no "
            "chat_template.jinja); copy the base model's tokenizer files"
        )
    return ""


def data_steps_problem(train_files: Sequence[Path], batch_size: int) -> str:
    """Training files with fewer rows than one batch (verl drops the last partial batch: zero steps). Empty when
    fine or when a file is not at hand (its own check reports that)."""
    import pyarrow.parquet as pq

    rows = 0
    for path in train_files:
        try:
            rows += pq.ParquetFile(path).metadata.num_rows
        except Exception:  # missing or unreadable: check_data_file says why
            return ""
    if rows >= batch_size:
        return ""
    names = ", ".join(str(p) for p in train_files)
    return (
        f"{names}: {rows} training rows, fewer than one batch (train.train_batch_size={batch_size}), so verl would "
        "train 0 steps; use more data or a smaller train_batch_size in recipe/matrix.yaml"
    )


def resolve_model(model: str, hub_cache: Path, cache_source: str = "") -> Path:
    """The local directory verl should load ``model`` from.

    A local path must be a complete model directory. A repo id must be in the Hub cache: the snapshot ``refs/main``
    names, else the only snapshot there (a download pinned to a commit writes no ``refs/main``).

    Raises:
        ValueError: one line naming the model, the cache and the command that fetches it.
    """
    label = f" ({cache_source})" if cache_source else ""
    if not is_repo_id(model):
        directory = Path(model).expanduser()
        if not directory.exists():
            raise ValueError(f"model {model}: no such directory")
        problem = snapshot_problem(directory)
        if problem:
            raise ValueError(f"model {model}: {problem}")
        return directory.resolve()
    repo = hub_cache / ("models--" + model.replace("/", "--"))
    fetch = f"run `python hf_model_download.py {model}`, which fills {hub_cache}"
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    if ref.is_file():
        candidates = [snapshots / ref.read_text(encoding="utf-8").strip()]
    else:
        candidates = (
            sorted(p for p in snapshots.glob("*") if (p / "config.json").is_file()) if snapshots.is_dir() else []
        )
    if not candidates:
        raise ValueError(f"model {model}: not in the Hub cache {hub_cache}{label}; {fetch}")
    if len(candidates) > 1:
        names = ", ".join(p.name[:12] for p in candidates)
        raise ValueError(
            f"model {model}: {len(candidates)} snapshots in {repo} ({names}) and no refs/main to choose one; "
            "set the run's model to a snapshot directory or re-run the download"
        )
    problem = snapshot_problem(candidates[0]) if candidates[0].is_dir() else f"{candidates[0]} does not exist"
    if problem:
        raise ValueError(f"model {model}: {problem}; {fetch}")
    return candidates[0]


# ---- node resources --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gpu:
    """One GPU as ``nvidia-smi`` reports it (memory in MiB)."""

    index: str
    uuid: str
    name: str
    total_mib: float
    used_mib: float
    driver: str = ""


NVIDIA_SMI_QUERY = [
    "--query-gpu=index,uuid,name,memory.total,memory.used,driver_version",
    "--format=csv,noheader,nounits",
]


def query_gpus(environ: Mapping[str, str]) -> list[Gpu]:
    """The GPUs this process may use: ``nvidia-smi``'s list, narrowed to ``CUDA_VISIBLE_DEVICES`` when set.

    Raises:
        ValueError: no ``nvidia-smi`` or it fails (one line with its own message).
    """
    binary = shutil.which("nvidia-smi", path=environ.get("PATH"))
    if binary is None:
        raise ValueError(
            "nvidia-smi not found: no NVIDIA driver is visible here (inside a container: "
            "pyxis needs the image's NVIDIA_VISIBLE_DEVICES, Apptainer needs --nv)"
        )
    try:
        proc = subprocess.run([binary, *NVIDIA_SMI_QUERY], capture_output=True, text=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        raise ValueError("nvidia-smi did not answer within 30 s (driver problem on this node)") from None
    if proc.returncode != 0:
        reason = (proc.stderr or proc.stdout).strip().splitlines()
        raise ValueError(f"nvidia-smi failed: {reason[0] if reason else f'exit {proc.returncode}'}")
    gpus = []
    for line in proc.stdout.strip().splitlines():
        fields = [f.strip() for f in line.split(",")]
        try:
            gpus.append(Gpu(fields[0], fields[1], fields[2], float(fields[3]), float(fields[4]), fields[5]))
        except (IndexError, ValueError):
            raise ValueError(f"nvidia-smi printed an unexpected line: {line!r}") from None
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:  # set but empty hides every GPU from CUDA
        wanted = {v.strip() for v in visible.split(",") if v.strip()}
        gpus = [g for g in gpus if g.index in wanted or g.uuid in wanted]
    return gpus


def gpu_problems(
    gpus: Sequence[Gpu], need: int, memory_gib: float, environ: Mapping[str, str] | None = None
) -> list[str]:
    """Too few GPUs, smaller ones than the run was planned for, or ones another process already holds memory on.
    ``environ`` is the environment ``gpus`` were queried in (default: this process's)."""
    environ = os.environ if environ is None else environ
    problems = []
    if len(gpus) < need:
        visible = environ.get("CUDA_VISIBLE_DEVICES")
        problems.append(
            f"GPUs: {len(gpus)} visible, the run needs {need} per node (slurm.gpus_per_node; "
            f"CUDA_VISIBLE_DEVICES={'unset' if visible is None else repr(visible)})"
        )
    for gpu in gpus:
        total_gib = gpu.total_mib / 1024
        if total_gib < GPU_MEMORY_TOLERANCE * memory_gib:
            problems.append(
                f"GPU {gpu.index} ({gpu.name}): {total_gib:.1f} GiB, the run was planned for {memory_gib:g} GiB "
                "(regenerate with --gpu-memory-gb or RLIF_GPU_MEMORY_GB in .env)"
            )
        if gpu.used_mib > GPU_BUSY_FRACTION * gpu.total_mib:
            problems.append(
                f"GPU {gpu.index} ({gpu.name}): {gpu.used_mib / 1024:.1f} GiB already in use by another process"
            )
    return problems


def driver_problem(gpus: Sequence[Gpu]) -> str:
    """The node's NVIDIA driver is older than the CUDA 13 stack needs (empty when it is new enough)."""
    for gpu in gpus:
        match = re.match(r"(\d+)", gpu.driver)
        if match is None:
            return f"NVIDIA driver: nvidia-smi reports version {gpu.driver!r}, need {MIN_DRIVER_MAJOR} or newer"
        if int(match[1]) < MIN_DRIVER_MAJOR:
            return (
                f"NVIDIA driver {gpu.driver} on this node; the pinned CUDA 13 torch/vLLM need {MIN_DRIVER_MAJOR} or "
                "newer (ask for nodes with a newer driver, or a partition that has them)"
            )
    return ""


def checkpoint_bytes(params: int, lora_rank: int) -> int:
    """Size of one checkpoint verl saves for a model of ``params`` parameters."""
    per_param = CHECKPOINT_BYTES_PER_PARAM_LORA if lora_rank > 0 else CHECKPOINT_BYTES_PER_PARAM
    return params * per_param


def free_bytes(directory: Path) -> tuple[Path, int]:
    """Free bytes on the file system that holds (or will hold) ``directory``, and the existing path measured."""
    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe, shutil.disk_usage(probe).free


def disk_problem(directory: Path, one_bytes: int, count: int = 1) -> str:
    """Not enough free space on ``directory``'s file system for the ``count`` checkpoints of ``one_bytes`` each
    that this job attempt may hold at once (empty when there is). verl writes the next checkpoint before it deletes
    the oldest beyond ``max_ckpt_to_keep``, and never deletes an earlier attempt's, so an attempt needs keep + 1
    checkpoints' room of its own."""
    probe, free = free_bytes(directory)
    need_bytes = one_bytes * count
    if free < need_bytes:
        return (
            f"checkpoints: {free / 2**30:.1f} GiB free on {probe}, {count} checkpoint(s) of "
            f"{one_bytes / 2**30:.1f} GiB need {need_bytes / 2**30:.1f} GiB (train.max_ckpt_to_keep kept + the next; "
            "free space there, or lower train.max_ckpt_to_keep)"
        )
    return ""


def pinned_versions(pyproject: Path = REPO_ROOT / "pyproject.toml") -> dict[str, str]:
    """``{distribution: version}`` for the exact pins of ``PINNED_PACKAGES`` in pyproject.toml (dependencies and
    the ``gpu`` extra): the one place the GPU stack's versions are written down."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    requirements = [*data["dependencies"], *data.get("optional-dependencies", {}).get("gpu", [])]
    pins = {}
    for requirement in requirements:
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s;]+)\s*", requirement)
        if match and match[1].lower() in PINNED_PACKAGES:
            pins[match[1].lower()] = match[2]
    return pins


def version_problems(pins: Mapping[str, str]) -> list[str]:
    """Installed versions that differ from the pins (or are missing)."""
    problems = []
    for name, wanted in pins.items():
        try:
            found = metadata.version(name)
        except metadata.PackageNotFoundError:
            found = None
        if found != wanted:
            have = f"{found} is installed" if found else "is not installed"
            problems.append(
                f"package {name}: {have}, the recipes need {wanted} (python: {sys.executable}; "
                "build the environment with scripts/setup_gpu_env.sh or run in the rlif image, docs/cluster.md)"
            )
    return problems


# ---- the two entry points ------------------------------------------------------------------------------------------


def generation_problems(
    data_files: Iterable[Path],
    model: str,
    environ: Mapping[str, str | None],
    *,
    cache: dict[str, str] | None = None,
    train_files: Sequence[Path] = (),
    batch_size: int = 0,
) -> list[tuple[str, str]]:
    """The generation-time checks of one run: ``[(setting, message), ...]``, empty when ready.

    Args:
        data_files: the run's train and validation files (absolute).
        model: the run's model (repo id or local path).
        environ: the environment with ``.env`` filled in (for the Hub cache location).
        cache: results by file/model, shared across runs so that each file is read once.
        train_files: the training files alone (absolute), for the one-batch check.
        batch_size: ``train.train_batch_size``; 0 skips the one-batch check.
    """
    cache = {} if cache is None else cache
    problems = []
    for path in data_files:
        key = f"data:{path}"
        if key not in cache:
            cache[key] = check_data_file(path)
        if cache[key]:
            problems.append(("data", cache[key]))
    if batch_size > 0:
        problem = data_steps_problem(train_files, batch_size)
        if problem:
            problems.append(("data", problem))
    key = f"model:{model}"
    if key not in cache:
        try:
            resolve_model(model, *hub_cache(environ))
            cache[key] = ""
        except ValueError as err:
            cache[key] = str(err)
    if cache[key]:
        problems.append(("model", cache[key]))
    return problems


@dataclass(frozen=True)
class JobRequest:
    """What one node must provide for a run (the generated script passes these).

    Attributes:
        model: repo id or local directory.
        data_files: train and validation files.
        gpus: GPUs per node (0: CPU test mode, no GPU checks).
        gpu_memory_gb: planned memory of one GPU (GiB).
        checkpoint_dir: where checkpoints go.
        checkpoint_gib: size of one checkpoint (0: no disk check).
        checkpoints: checkpoints the job attempt may hold at once (``rlif.runs.planner.checkpoints_on_disk``).
        check_versions: compare the pinned packages.
    """

    model: str
    data_files: tuple[Path, ...]
    gpus: int
    gpu_memory_gb: float
    checkpoint_dir: Path
    checkpoint_gib: float
    check_versions: bool
    checkpoints: int = 1


def job_preflight(request: JobRequest, environ: Mapping[str, str]) -> tuple[Path, str]:
    """Every node check of a job.

    Returns:
        The model directory to train from, and a one-line summary of what was checked.

    Raises:
        PreflightError: one line per failure.
    """
    failures = [line for line in (check_data_file(p) for p in request.data_files) if line]
    model_dir = None
    try:
        model_dir = resolve_model(request.model, *hub_cache(environ))
    except ValueError as err:
        failures.append(str(err))
    summary = [f"{len(request.data_files)} data file(s)"]
    if request.gpus > 0:
        try:
            gpus = query_gpus(environ)
            failures += gpu_problems(gpus, request.gpus, request.gpu_memory_gb, environ)
            failures += [line for line in (driver_problem(gpus),) if line]
            if gpus:
                summary.append(
                    f"{len(gpus)} x {gpus[0].name} ({gpus[0].total_mib / 1024:.1f} GiB, driver {gpus[0].driver})"
                )
        except ValueError as err:
            failures.append(str(err))
    if request.checkpoint_gib > 0:
        problem = disk_problem(request.checkpoint_dir, int(request.checkpoint_gib * 2**30), request.checkpoints)
        if problem:
            failures.append(problem)
        free = free_bytes(request.checkpoint_dir)[1] / 2**30
        summary.append(f"{free:.0f} GiB free for {request.checkpoints} x {request.checkpoint_gib:.0f} GiB checkpoints")
    if request.check_versions:
        pins = pinned_versions()
        failures += version_problems(pins)
        summary.append(" ".join(f"{name} {version}" for name, version in pins.items()))
    if failures:
        raise PreflightError(failures)
    summary.append(f"model {model_dir}")
    return model_dir or Path(request.model), ", ".join(summary)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rlif.preflight job ...``: exit 0 and print the model directory, or 1 with one line per failure;
    ``python -m rlif.preflight versions``: the package pins alone (scripts/setup_gpu_env.sh ends with it)."""
    parser = argparse.ArgumentParser(prog="python -m rlif.preflight", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    job = sub.add_parser("job", help="check this node for a run (the generated scripts call this before Ray starts)")
    job.add_argument("--model", required=True, help="repo id or local model directory")
    job.add_argument("--data", nargs="+", type=Path, required=True, help="train and validation parquet files")
    job.add_argument("--gpus", type=int, default=0, help="GPUs per node (default: %(default)s, no GPU checks)")
    job.add_argument("--gpu-memory-gb", type=float, default=0.0, help="planned GiB per GPU (default: %(default)s)")
    job.add_argument("--checkpoint-dir", type=Path, required=True)
    job.add_argument("--checkpoint-gib", type=float, default=0.0, help="one checkpoint's size (default: %(default)s)")
    job.add_argument(
        "--checkpoints", type=int, default=1, help="checkpoints held at once: kept + the next (default: %(default)s)"
    )
    job.add_argument("--check-versions", action="store_true", help="compare verl/vLLM/flash-attn with the pins")
    sub.add_parser("versions", help="compare this environment's verl, vLLM and flash-attn with pyproject.toml's pins")
    args = parser.parse_args(argv)
    if args.command == "versions":
        pins = pinned_versions()
        problems = version_problems(pins)
        for line in problems:
            print(f"preflight: error: {line}", file=sys.stderr)
        if not problems:
            print("preflight: ok: " + ", ".join(f"{name} {version}" for name, version in pins.items()))
        return 1 if problems else 0
    request = JobRequest(
        model=args.model,
        data_files=tuple(args.data),
        gpus=args.gpus,
        gpu_memory_gb=args.gpu_memory_gb,
        checkpoint_dir=args.checkpoint_dir,
        checkpoint_gib=args.checkpoint_gib,
        check_versions=args.check_versions,
        checkpoints=args.checkpoints,
    )
    host = socket.gethostname()
    try:
        model_dir, summary = job_preflight(request, os.environ)
    except PreflightError as err:
        for line in err.lines:
            print(f"preflight {host}: error: {line}", file=sys.stderr)
        return 1
    print(f"preflight {host}: ok: {summary}", file=sys.stderr)
    print(model_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
