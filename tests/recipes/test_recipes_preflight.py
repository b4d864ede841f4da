"""Preflight checks (rlif/preflight.py): each failure is one line naming the file or setting, found in seconds.

Fixtures: tiny valid parquet files (the demo's rows), a 0-row file, a non-parquet file, a model directory and a
Hub-cache layout (with and without ``refs/main``, with a broken weight symlink), and a fake ``nvidia-smi`` on PATH.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlif import preflight
from rlif.data.files import write_rows_atomic
from rlif.demo_assets import demo_rows
from rlif.preflight import (
    Gpu,
    JobRequest,
    PreflightError,
    check_data_file,
    gpu_problems,
    job_preflight,
    pinned_versions,
    query_gpus,
    resolve_model,
    version_problems,
)
from rlif.recipes.generate import REPO_ROOT

# ---- fixtures ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_rows_atomic(demo_rows("train"), tmp_path_factory.mktemp("data") / "train.parquet")


def make_model(directory: Path, weights: bool = True, tokenizer: bool = True) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text('{"model_type": "qwen3"}', encoding="utf-8")
    if weights:
        (directory / "model.safetensors").write_bytes(b"x" * 16)
    if tokenizer:
        (directory / "tokenizer.json").write_text("{}", encoding="utf-8")
        (directory / "tokenizer_config.json").write_text('{"chat_template": "{{ messages }}"}', encoding="utf-8")
    return directory


def make_cached_model(cache: Path, repo_id: str, sha: str = "a" * 40, *, ref: bool = True) -> Path:
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    blobs = repo / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    (blobs / "cfg").write_text("{}", encoding="utf-8")
    (blobs / "w").write_bytes(b"x")
    snapshot = repo / "snapshots" / sha
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").symlink_to("../../blobs/cfg")
    (snapshot / "model.safetensors").symlink_to("../../blobs/w")
    (snapshot / "tokenizer.json").write_text("{}", encoding="utf-8")
    (snapshot / "tokenizer_config.json").write_text('{"chat_template": "{{ messages }}"}', encoding="utf-8")
    if ref:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(sha, encoding="utf-8")
    return snapshot


def fake_nvidia_smi(bin_dir: Path, output: str, code: int = 0) -> Path:
    """An executable ``nvidia-smi`` that prints ``output`` (CSV, as for ``--query-gpu``) and exits ``code``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "nvidia-smi"
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}\nEOF\nexit {code}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir


H100 = "\n".join(f"{i}, GPU-{i:04d}, NVIDIA H100 80GB HBM3, 81559, 1, 580.82.07" for i in range(8))


# ---- data ---------------------------------------------------------------------------------------------------------


def test_valid_data_file_passes(data_file: Path) -> None:
    assert check_data_file(data_file) == ""


def test_missing_data_file_names_it_and_the_fix(tmp_path: Path) -> None:
    message = check_data_file(tmp_path / "verl_data" / "if8000_logicif0.parquet")
    assert message.startswith(f"{tmp_path}/verl_data/if8000_logicif0.parquet: no such file")
    assert "hf_data_download.py" in message and "\n" not in message


def test_empty_unreadable_and_foreign_files(tmp_path: Path, data_file: Path) -> None:
    empty = tmp_path / "empty.parquet"
    pq.write_table(pq.read_table(data_file).slice(0, 0), empty)
    assert check_data_file(empty) == f"{empty}: has no rows"
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not parquet at all")
    assert check_data_file(garbage).startswith(f"{garbage}: not a readable parquet file")
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"prompt": ["hi"], "answer": ["x"]}), foreign)
    assert check_data_file(foreign).startswith(f"{foreign}: column data_source missing")


def test_a_bad_row_names_file_row_and_field(tmp_path: Path) -> None:
    rows = demo_rows("train")
    rows[1] = {**rows[1], "ability": ""}
    path = write_rows_atomic(rows, tmp_path / "bad.parquet")
    message = check_data_file(path)
    assert message.startswith(f"{path}: row 1: field ability:")
    assert f"python -m rlif.data validate {path}" in message


# ---- model --------------------------------------------------------------------------------------------------------


def test_local_model_directory(tmp_path: Path) -> None:
    model = make_model(tmp_path / "m")
    assert resolve_model(str(model), tmp_path / "cache") == model.resolve()
    bare = make_model(tmp_path / "bare", weights=False)
    with pytest.raises(ValueError, match=r"no complete weight file"):
        resolve_model(str(bare), tmp_path / "cache")
    with pytest.raises(ValueError, match=r"has no config.json"):
        resolve_model(str(tmp_path), tmp_path)
    with pytest.raises(ValueError, match=r"no such directory"):
        resolve_model(str(tmp_path / "nope"), tmp_path)


def test_repo_id_resolves_through_refs_main(tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    snapshot = make_cached_model(cache, "Qwen/Qwen3-0.6B")
    make_cached_model(cache, "Qwen/Qwen3-0.6B", sha="b" * 40, ref=False)  # an older pinned download beside it
    assert resolve_model("Qwen/Qwen3-0.6B", cache) == snapshot


def test_pinned_download_without_refs_main_resolves_when_unambiguous(tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    snapshot = make_cached_model(cache, "Qwen/Qwen3-0.6B", ref=False)
    assert resolve_model("Qwen/Qwen3-0.6B", cache) == snapshot
    make_cached_model(cache, "Qwen/Qwen3-0.6B", sha="c" * 40, ref=False)
    with pytest.raises(ValueError, match=r"2 snapshots .* no refs/main"):
        resolve_model("Qwen/Qwen3-0.6B", cache)


def test_uncached_or_broken_model_names_the_cache_and_the_download(tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    with pytest.raises(ValueError) as info:
        resolve_model("Qwen/Qwen3-8B", cache)
    assert str(info.value) == (
        f"model Qwen/Qwen3-8B: not in the Hub cache {cache}; "
        f"run `python hf_model_download.py Qwen/Qwen3-8B`, which fills {cache}"
    )
    snapshot = make_cached_model(cache, "Qwen/Qwen3-1.7B")
    (cache / "models--Qwen--Qwen3-1.7B" / "blobs" / "w").unlink()  # interrupted download: dangling symlink
    with pytest.raises(ValueError, match=rf"{snapshot}: no complete weight file"):
        resolve_model("Qwen/Qwen3-1.7B", cache)


def test_sharded_model_with_a_missing_shard(tmp_path: Path) -> None:
    model = make_model(tmp_path / "m", weights=False)
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (model / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    (model / "model-00001-of-00002.safetensors").write_bytes(b"x")
    with pytest.raises(ValueError, match=r"weight shard\(s\) model-00002-of-00002.safetensors missing"):
        resolve_model(str(model), tmp_path)


def test_hub_cache_location_order(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"HF_CACHE_DIR=/b and HF_HUB_CACHE=/a name different Hub caches"):
        preflight.hub_cache_dir({"HF_HUB_CACHE": "/a", "HF_CACHE_DIR": "/b"})
    assert preflight.hub_cache_dir({"HF_HUB_CACHE": "/a", "HF_CACHE_DIR": "/a/"}) == Path("/a")
    assert preflight.hub_cache_dir({"HF_CACHE_DIR": "cache"}) == preflight.REPO_ROOT / "cache"
    assert preflight.hub_cache_dir({"HF_CACHE_DIR": "/b", "HF_HOME": "/h"}) == Path("/b")  # HF_HUB_CACHE wins in jobs
    assert preflight.hub_cache_dir({"HF_HUB_CACHE": "", "HF_CACHE_DIR": "/b"}) == Path("/b")
    assert preflight.hub_cache_dir({"HF_HOME": "/h"}) == Path("/h/hub")


# ---- GPUs, disk, versions -------------------------------------------------------------------------------------------


def test_fake_nvidia_smi_eight_h100s_pass(tmp_path: Path) -> None:
    path = str(fake_nvidia_smi(tmp_path / "bin", H100))
    gpus = query_gpus({"PATH": path})
    assert len(gpus) == 8 and gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert gpu_problems(gpus, 8, 80) == []


def test_too_few_small_or_busy_gpus(tmp_path: Path) -> None:
    path = str(fake_nvidia_smi(tmp_path / "bin", H100))
    gpus = query_gpus({"PATH": path, "CUDA_VISIBLE_DEVICES": "0,1,GPU-0003"})
    assert [g.index for g in gpus] == ["0", "1", "3"]
    assert gpu_problems(gpus, 8, 80)[0].startswith("GPUs: 3 visible, the run needs 8 per node (slurm.gpus_per_node")
    small = [Gpu("0", "u", "NVIDIA A100-SXM4-40GB", 40960, 0)]
    assert gpu_problems(small, 1, 80) == [
        "GPU 0 (NVIDIA A100-SXM4-40GB): 40.0 GiB, the run was planned for 80 GiB "
        "(regenerate with --gpu-memory-gb or RLIF_GPU_MEMORY_GB in .env)"
    ]
    busy = [Gpu("2", "u", "H100", 81559, 30000)]
    assert gpu_problems(busy, 1, 80) == ["GPU 2 (H100): 29.3 GiB already in use by another process"]


def test_an_empty_cuda_visible_devices_hides_every_gpu(tmp_path: Path) -> None:
    """CUDA reads ``CUDA_VISIBLE_DEVICES=""`` as no device at all, and the message shows the value it read."""
    environ = {"PATH": str(fake_nvidia_smi(tmp_path / "bin", H100)), "CUDA_VISIBLE_DEVICES": ""}
    gpus = query_gpus(environ)
    assert gpus == []
    assert gpu_problems(gpus, 8, 80, environ) == [
        "GPUs: 0 visible, the run needs 8 per node (slurm.gpus_per_node; CUDA_VISIBLE_DEVICES='')"
    ]


def test_no_driver_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^nvidia-smi not found: no NVIDIA driver is visible here"):
        query_gpus({"PATH": str(tmp_path)})
    failing = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    path = str(fake_nvidia_smi(tmp_path / "bin", failing, code=9))
    with pytest.raises(ValueError) as info:
        query_gpus({"PATH": path})
    assert str(info.value) == f"nvidia-smi failed: {failing}"


def test_driver_older_than_580_fails_in_one_line(tmp_path: Path) -> None:
    gpus = query_gpus({"PATH": str(fake_nvidia_smi(tmp_path / "bin", H100))})
    assert gpus[0].driver == "580.82.07" and preflight.driver_problem(gpus) == ""
    old = [Gpu("0", "u", "H100", 81559, 0, "570.133.20")]
    message = preflight.driver_problem(old)
    assert message.startswith("NVIDIA driver 570.133.20 on this node; the pinned CUDA 13 torch/vLLM need 580")
    assert "\n" not in message
    assert "need 580 or newer" in preflight.driver_problem([Gpu("0", "u", "H100", 81559, 0, "[N/A]")])


def test_disk_needs_room_for_the_kept_checkpoints_and_the_next(tmp_path: Path) -> None:
    target = tmp_path / "checkpoints" / "rlif" / "run"  # not created yet: its existing parent is measured
    assert preflight.disk_problem(target, 1) == ""
    message = preflight.disk_problem(target, 2**60)
    assert message.startswith("checkpoints: ") and f"free on {tmp_path}," in message
    assert "1 checkpoint(s) of 1073741824.0 GiB need 1073741824.0 GiB" in message
    free = preflight.free_bytes(target)[1]
    # one fits, but verl keeps 2 and writes the third before deleting the oldest
    assert preflight.disk_problem(target, free // 2, 1) == ""
    assert "3 checkpoint(s)" in preflight.disk_problem(target, free // 2, 3)


def test_checkpoint_size_of_qwen3_8b() -> None:
    from rlif.runs.shapes import model_shape

    size = preflight.checkpoint_bytes(model_shape("Qwen/Qwen3-8B").params, lora_rank=0)
    assert 90 < size / 2**30 < 95  # 8.2 B parameters x 12 B (fp32 weights + two Adam moments)


def test_pins_come_from_pyproject() -> None:
    assert pinned_versions(REPO_ROOT / "pyproject.toml") == {"verl": "0.9.1", "vllm": "0.24.0", "flash-attn": "2.8.3"}


def test_version_mismatch_and_missing_package() -> None:
    from importlib import metadata

    problems = version_problems({"pyyaml": "0.0.1", "rlif-no-such-package": "1.0"})
    assert problems[0].startswith(f"package pyyaml: {metadata.version('pyyaml')} is installed, the recipes need 0.0.1")
    assert "scripts/setup_gpu_env.sh" in problems[0]
    assert problems[1].startswith("package rlif-no-such-package: is not installed, the recipes need 1.0")


# ---- the job command -----------------------------------------------------------------------------------------------


def test_job_preflight_collects_every_failure(tmp_path: Path, data_file: Path) -> None:
    request = JobRequest(
        model="Qwen/Qwen3-8B",
        data_files=(data_file, tmp_path / "missing.parquet"),
        gpus=8,
        gpu_memory_gb=80,
        checkpoint_dir=tmp_path,
        checkpoint_gib=2**30,
        check_versions=False,
    )
    with pytest.raises(PreflightError) as info:
        job_preflight(request, {"PATH": str(tmp_path), "HF_HUB_CACHE": str(tmp_path / "hub")})
    lines = info.value.lines
    assert [line.split(":")[0] for line in lines] == [
        f"{tmp_path}/missing.parquet",
        "model Qwen/Qwen3-8B",
        "nvidia-smi not found",
        "checkpoints",
    ]


def test_job_command_on_a_ready_node(tmp_path: Path, data_file: Path) -> None:
    """The command the generated scripts run: the model directory on stdout, a summary on stderr, in seconds."""
    bin_dir = fake_nvidia_smi(tmp_path / "bin", H100)
    cache = tmp_path / "hub"
    snapshot = make_cached_model(cache, "Qwen/Qwen3-0.6B")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HF_HUB_CACHE": str(cache),
        "PYTHONPATH": str(REPO_ROOT),
    }
    command = [sys.executable, "-m", "rlif.preflight", "job", "--model", "Qwen/Qwen3-0.6B", "--data", str(data_file)]
    command += [
        "--gpus",
        "8",
        "--gpu-memory-gb",
        "80",
        "--checkpoint-dir",
        str(tmp_path / "ck"),
        "--checkpoint-gib",
        "1",
        "--checkpoints",
        "3",
    ]
    start = time.monotonic()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{snapshot}\n"
    assert ": ok: 1 data file(s), 8 x NVIDIA H100 80GB HBM3 (79.6 GiB, driver 580.82.07)" in proc.stderr
    assert " GiB free for 3 x 1 GiB checkpoints" in proc.stderr
    failing = [*command[:-10], "--gpus", "8", "--checkpoint-dir", str(tmp_path), "--check-versions"]
    failing[failing.index("Qwen/Qwen3-0.6B")] = "Qwen/Qwen3-4B"
    proc = subprocess.run(failing, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert all(" error: " in line and line.startswith("preflight ") for line in lines), lines
    assert any("model Qwen/Qwen3-4B: not in the Hub cache" in line for line in lines)
    assert time.monotonic() - start < 30


def test_versions_command_names_each_mismatch():
    """This machine has vLLM's CPU build and no flash-attn: two lines, exit 1 (a GPU environment prints ok)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-m", "rlif.preflight", "versions"]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and proc.stdout == ""
    assert [line.split(":")[2].strip() for line in lines] == ["package vllm", "package flash-attn"]


def test_a_model_without_tokenizer_or_chat_template_is_refused(tmp_path: Path) -> None:
    """transformers would build a 1-token tokenizer from a folder without tokenizer files, and verl fail deep in
    the job; without a chat template the first prompt fails."""
    model = make_model(tmp_path / "m", tokenizer=False)
    with pytest.raises(ValueError) as info:
        resolve_model(str(model), tmp_path / "hub")
    assert str(info.value) == (
        f"model {model}: {model}: no tokenizer files (tokenizer.json, tokenizer.model, vocab.json, vocab.txt); copy "
        "them from the base model (its Hub snapshot) or download the model again"
    )
    (model / "tokenizer.json").write_text("{}", encoding="utf-8")
    (model / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        resolve_model(str(model), tmp_path / "hub")
    assert str(info.value) == (
        f"model {model}: {model}: no chat template (tokenizer_config.json has no chat_template and there is no "
        "chat_template.jinja); copy the base model's tokenizer files"
    )
    (model / "chat_template.jinja").write_text("{{ messages }}", encoding="utf-8")
    assert resolve_model(str(model), tmp_path / "hub") == model.resolve()


def test_training_data_smaller_than_one_batch_is_refused(data_file: Path) -> None:
    rows = pq.ParquetFile(data_file).metadata.num_rows
    assert preflight.data_steps_problem([data_file], rows) == ""
    assert preflight.data_steps_problem([data_file], 512) == (
        f"{data_file}: {rows} training rows, fewer than one batch (train.train_batch_size=512), so verl would train "
        "0 steps; use more data or a smaller train_batch_size in recipe/matrix.yaml"
    )
