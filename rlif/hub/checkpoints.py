"""Find verl training runs and their FSDP checkpoints, and pick the one to publish.

verl 0.9.1 saves ``<trainer.default_local_dir>/global_step_N/actor/`` with one ``model_world_size_W_rank_r.pt``
shard per rank, ``fsdp_config.json`` (holding ``world_size``) and ``huggingface/`` (config and tokenizer). A run
directory is any directory with ``global_step_N`` children. A checkpoint still being written (or cut off by a
preemption) lacks shards or has a shard cut short, so "latest" means the highest step whose actor directory is
complete; an explicitly chosen step must be complete too.

A shard is ``torch.save`` output, a zip archive whose directory is written last: a shard cut off at any point
has no end-of-directory record, which ``zipfile`` detects by reading the end of the file, without loading the
multi-GB tensors (and without torch). The merger would otherwise fail minutes later with ``OSError: [Errno 22]``
naming no file.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

STEP_DIR = re.compile(r"^global_step_(\d+)$")
SHARD_NAME = "model_world_size_{world_size}_rank_{rank}.pt"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt")
"""Any one of these is a tokenizer transformers can load; without one it builds a useless 1-token tokenizer (verl's
model merger then saves that one, and it would be uploaded)."""


@dataclass(frozen=True)
class Checkpoint:
    """One ``global_step_N`` of a run.

    Attributes:
        run_dir: the run directory (verl's ``trainer.default_local_dir``).
        step: N.
    """

    run_dir: Path
    step: int

    @property
    def step_dir(self) -> Path:
        """``<run_dir>/global_step_N``."""
        return self.run_dir / f"global_step_{self.step}"

    @property
    def actor_dir(self) -> Path:
        """``<run_dir>/global_step_N/actor``: what verl's model merger reads."""
        return self.step_dir / "actor"


def find_runs(root: Path) -> list[Path]:
    """Every directory under ``root`` (``root`` included) that has ``global_step_N`` children, sorted.

    The walk does not descend into ``global_step_N`` directories themselves.
    """
    runs = []
    for dirpath, dirnames, _ in os.walk(root):
        steps = [d for d in dirnames if STEP_DIR.match(d)]
        if steps:
            runs.append(Path(dirpath))
        dirnames[:] = sorted(d for d in dirnames if not STEP_DIR.match(d) and not d.startswith("."))
    return sorted(runs)


def list_checkpoints(run_dir: Path) -> list[Checkpoint]:
    """All ``global_step_N`` directories of a run, complete or not, by step."""
    steps = []
    for child in Path(run_dir).iterdir():
        match = STEP_DIR.match(child.name)
        if match and child.is_dir():
            steps.append(int(match.group(1)))
    return [Checkpoint(Path(run_dir), s) for s in sorted(steps)]


def checkpoint_problems(checkpoint: Checkpoint) -> list[str]:
    """What keeps a checkpoint from being merged (empty when it is complete)."""
    actor = checkpoint.actor_dir
    if not actor.is_dir():
        return [f"{actor}: missing"]
    config_path = actor / "fsdp_config.json"
    try:
        world_size = json.loads(config_path.read_text())["world_size"]
    except FileNotFoundError:
        return [f"{config_path}: missing"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return [f"{config_path}: no world_size"]
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        return [f"{config_path}: world_size {world_size!r} is not a positive integer"]
    problems = []
    for rank in range(world_size):
        shard = actor / SHARD_NAME.format(world_size=world_size, rank=rank)
        problem = shard_problem(shard)
        if problem:
            problems.append(f"{shard}: {problem}")
    if not (actor / "huggingface" / "config.json").is_file():
        problems.append(f"{actor / 'huggingface' / 'config.json'}: missing")
    elif not any((actor / "huggingface" / name).is_file() for name in TOKENIZER_FILES):
        # The merger would otherwise write an empty tokenizer of its own making, and that would be uploaded.
        problems.append(
            f"{actor / 'huggingface'}: no tokenizer files ({', '.join(TOKENIZER_FILES)}); verl saves the base "
            "model's tokenizer there: copy the base model's tokenizer files into it"
        )
    return problems


def shard_problem(shard: Path) -> str | None:
    """Why ``shard`` is not a whole ``torch.save`` archive (missing, empty, cut short, not torch), or None.

    Reads only the archive's directory at the end of the file, and checks that every member it lists lies inside
    the file.
    """
    if not shard.is_file():
        return "missing"
    size = shard.stat().st_size
    if size == 0:
        return "empty"
    try:
        with zipfile.ZipFile(shard) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as err:
        return f"truncated or corrupt ({size} bytes, no complete torch archive directory: {err})"
    if not any(m.filename.endswith("data.pkl") for m in members):
        return f"not a torch checkpoint ({size} bytes, no data.pkl in the archive)"
    beyond = [m.filename for m in members if m.header_offset + m.compress_size > size]
    if beyond:
        return f"truncated or corrupt ({size} bytes, member {beyond[0]} extends past the end)"
    return None


def skipped_steps(run_dir: Path, chosen: Checkpoint) -> list[str]:
    """One line per checkpoint newer than ``chosen`` that is incomplete: why it was not the one published."""
    newer = [c for c in list_checkpoints(run_dir) if c.step > chosen.step]
    return [f"global_step_{c.step} is incomplete ({'; '.join(p)})" for c in newer if (p := checkpoint_problems(c))]


def pick_checkpoint(run_dir: Path, step: int | None = None) -> Checkpoint:
    """Return the chosen step, or the latest complete one.

    Args:
        run_dir: the run directory.
        step: a ``global_step`` to publish; None picks the highest complete one.

    Raises:
        ValueError: the run has no checkpoint, the chosen step does not exist or is incomplete, or no step is
            complete (the message lists what is missing).
    """
    checkpoints = list_checkpoints(run_dir)
    if not checkpoints:
        raise ValueError(f"{run_dir}: no global_step_N checkpoint")
    if step is not None:
        chosen = Checkpoint(Path(run_dir), step)
        if chosen not in checkpoints:
            raise ValueError(f"{run_dir}: no global_step_{step} (have {[c.step for c in checkpoints]})")
        problems = checkpoint_problems(chosen)
        if problems:
            raise ValueError(f"global_step_{step} is incomplete:\n  " + "\n  ".join(problems))
        return chosen
    for candidate in reversed(checkpoints):
        if not checkpoint_problems(candidate):
            return candidate
    details = "\n  ".join(p for c in checkpoints for p in checkpoint_problems(c))
    raise ValueError(f"{run_dir}: no complete checkpoint:\n  {details}")
