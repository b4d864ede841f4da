"""A requeued job logs to wandb without losing the steps it redoes: each attempt is its own wandb run, grouped under
the run's name, set by the launcher's ``wandb_attempt`` and read by verl's own ``wandb.init``.

wandb's offline mode (no server): attempt 0 logs steps 1-6 and is requeued; attempt 1 resumes from the checkpoint at
step 4 and logs step 4 (verl's validation on resume) and steps 5-8. Both offline run files are read back. Slow: verl's
``Tracking`` import and ``wandb.init`` in two processes: 24 s of CPU, 82 s on a loaded 2-core machine.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlif.recipes.generate import REPO_ROOT
from rlif.recipes.render import LAUNCHER

pytestmark = pytest.mark.slow

RUN = "stage2_qwen17b_think_ema_rewardCurriculum_decay_s1"
JOB = "4242"
CHECKPOINT_STEP = 4

ATTEMPT = """
import json, sys
from verl.utils.tracking import Tracking

tracker = Tracking(project_name="rlif", experiment_name=sys.argv[2], default_backend=["wandb"], config={"trainer": {}})
for step, metrics in json.loads(sys.argv[1]):
    tracker.log(metrics, step=step)
tracker.finish()
"""
"""One attempt, a process of its own as each job attempt is, calling the tracker as verl's trainer does: ``Tracking``
(``wandb.init`` with the project and the run's name only), ``log(data, step=global_steps)``, ``finish``."""


def attempt_env(restart: int) -> dict[str, str]:
    """The wandb settings ``wandb_attempt`` exports for restart ``restart`` of job ``JOB``, with a ``.env`` that asks
    to resume (the setting the launcher drops)."""
    script = (
        f'source "{REPO_ROOT / LAUNCHER}"; RUN_NAME={RUN}; SLURM_JOB_ID={JOB}; SLURM_RESTART_COUNT={restart}; '
        "export WANDB_RESUME=allow; wandb_attempt; "
        'printf "%s\\n" "$WANDB_RUN_ID" "$WANDB_RUN_GROUP" "${WANDB_RESUME-unset}"'
    )
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    run_id, group, resume = proc.stdout.splitlines()
    assert resume == "unset"
    return {"WANDB_RUN_ID": run_id, "WANDB_RUN_GROUP": group}


def wandb_records(path: Path) -> Iterator[bytes]:
    """The serialised ``Record`` messages of a ``.wandb`` transaction log: a 7-byte header (``:W&B``, magic 0xBEE1,
    version 0), then LevelDB-log blocks of 32 KiB whose chunks (checksum, length, type: full, first, middle, last)
    carry the records; a block's tail shorter than a chunk header is padding."""
    data = path.read_bytes()
    assert struct.unpack("<4sHB", data[:7]) == (b":W&B", 0xBEE1, 0), f"{path}: not a wandb transaction log"
    pos, block, pending = 7, 32768, b""
    while pos + 7 <= len(data):
        left = block - pos % block
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if left < 7 or (length == 0 and kind == 0):
            pos += left
            continue
        payload, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        if kind == 1:
            yield payload
        elif kind == 2:
            pending = payload
        elif kind == 3:
            pending += payload
        elif kind == 4:
            yield pending + payload


def read_offline_run(path: Path) -> tuple[dict[str, str], dict[int, dict[str, float]]]:
    """(run id and group, {step: the metrics logged at it}) from one offline run's ``.wandb`` file."""
    from wandb.proto import wandb_internal_pb2 as pb

    run: dict[str, str] = {}
    history: dict[int, dict[str, float]] = {}
    for raw in wandb_records(path):
        record = pb.Record()
        record.ParseFromString(raw)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            run = {"id": record.run.run_id, "group": record.run.run_group}
        elif kind == "history":
            items = {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
            step = items.pop("_step")
            history.setdefault(step, {}).update({k: v for k, v in items.items() if not k.startswith("_")})
    return run, history


def test_a_requeued_attempt_keeps_the_steps_it_redoes(tmp_path: Path):
    pytest.importorskip("verl")
    pytest.importorskip("wandb")
    first = [(step, {"score": step / 10}) for step in range(1, 7)]
    # verl validates on resume at the checkpoint's step, then trains from the step after it
    second = [(CHECKPOINT_STEP, {"val/score": 0.4})] + [(step, {"score": 10 + step}) for step in range(5, 9)]
    base = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    base.update(WANDB_MODE="offline", WANDB_DIR=str(tmp_path), WANDB_SILENT="true")
    for restart, logs in enumerate((first, second)):
        env = {**base, **attempt_env(restart)}
        command = [sys.executable, "-c", ATTEMPT, json.dumps(logs), RUN]
        subprocess.run(command, env=env, cwd=tmp_path, check=True, timeout=300)

    files = sorted((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))
    by_id = {path.stem.removeprefix("run-"): read_offline_run(path) for path in files}
    assert len(files) == 2 == len(by_id)  # two attempts, two wandb runs
    ids = [f"{JOB}-0-{RUN[:44]}", f"{JOB}-1-{RUN[:44]}"]
    assert sorted(by_id) == ids
    for run_id in ids:
        assert by_id[run_id][0] == {"id": run_id, "group": RUN}  # one group: the run's name
    assert by_id[ids[0]][1] == {step: {"score": step / 10} for step in range(1, 7)}
    redone = by_id[ids[1]][1]
    assert sorted(redone) == [CHECKPOINT_STEP, 5, 6, 7, 8]
    assert {step: redone[step]["score"] for step in (5, 6, 7, 8)} == {5: 15, 6: 16, 7: 17, 8: 18}
    assert redone[CHECKPOINT_STEP] == {"val/score": 0.4}
