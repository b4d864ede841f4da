"""What ``--model`` names: a Hugging Face model folder, a verl checkpoint, or a Hub model id.

A verl checkpoint (``global_step_N/actor``, ``global_step_N``, or a run directory whose latest complete step is
taken) holds FSDP shards that vLLM cannot load; it is merged with the project's merger (``rlif.hub.merge``: verl's
own model merger) into ``--merged-dir``, by default ``global_step_N/hf_merged`` when the checkpoint folder is
writable and a folder under the user's cache when it is not (``rlif.hub.merge.merged_dir_for``). An earlier merge is
reused while the shards are unchanged, so evaluating the same checkpoint twice merges once. Locating and loading
are separate steps: a re-run whose responses are all on disk neither merges nor starts vLLM. A name that is no local
path but looks like ``owner/name`` is a Hub model id, loaded by vLLM from the local Hugging Face cache
(``python hf_model_download.py``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from rlif.hub.checkpoints import STEP_DIR, Checkpoint, pick_checkpoint
from rlif.hub.merge import merge_checkpoint

HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class ModelSource:
    """The model an evaluation loads.

    Attributes:
        name: what ``--model`` said.
        identity: what makes two evaluations the same model: the absolute path of the model folder or the
            checkpoint step, or the Hub id (recorded with the responses; a resumed run must match it).
        checkpoint: the verl checkpoint to merge, if any.
        description: one line for the log and the results.
    """

    name: str
    identity: str
    checkpoint: Checkpoint | None
    description: str


def checkpoint_of(path: Path, step: int | None) -> Checkpoint | None:
    """The verl checkpoint ``path`` names (``.../global_step_N/actor``, ``.../global_step_N`` or a run
    directory), or None when it names none.

    Raises:
        ValueError: ``--step`` with a path that already names a step, or a run whose chosen step is missing or
            incomplete (``rlif.hub.checkpoints.pick_checkpoint``'s message).
    """
    path = Path(path)
    if path.name == "actor" and STEP_DIR.match(path.parent.name):
        path = path.parent
    match = STEP_DIR.match(path.name)
    if match:
        if step is not None and step != int(match.group(1)):
            raise ValueError(f"--step {step}: {path} is already global_step_{match.group(1)}")
        return pick_checkpoint(path.parent, int(match.group(1)))
    if path.is_dir() and any(STEP_DIR.match(child.name) and child.is_dir() for child in path.iterdir()):
        return pick_checkpoint(path, step)
    return None


def locate_model(name: str, *, step: int | None = None) -> ModelSource:
    """Work out what ``--model`` names without loading or merging anything.

    Raises:
        ValueError: the path exists but is neither a model folder (``config.json``) nor a checkpoint, a run has
            no complete checkpoint, ``--step`` is given for a model folder or Hub id, or the name is neither a
            path nor a Hub id.
    """
    path = Path(name)
    if path.exists():
        checkpoint = checkpoint_of(path, step)
        if checkpoint is not None:
            where = checkpoint.step_dir.resolve()
            return ModelSource(name, str(where), checkpoint, f"verl checkpoint {checkpoint.step_dir}")
        if step is not None:
            raise ValueError(f"--step {step}: {path} is a model folder, not a run with global_step_N checkpoints")
        if (path / "config.json").is_file():
            return ModelSource(name, str(path.resolve()), None, f"model folder {path}")
        raise ValueError(
            f"--model {name}: no config.json and no global_step_N checkpoint here "
            "(give a Hugging Face model folder, a run directory or global_step_N[/actor])"
        )
    if HUB_ID.match(name):
        if step is not None:
            raise ValueError(f"--step {step}: {name} is a Hub model id, not a run with checkpoints")
        return ModelSource(name, name, None, f"Hub model {name} (from the local Hugging Face cache)")
    raise ValueError(f"--model {name}: no such file or directory, and not a Hub model id (owner/name)")


def loadable_model(source: ModelSource, *, python: str = sys.executable, merged_dir: Path | None = None) -> str:
    """What vLLM and the tokenizer load: the folder or Hub id, or a checkpoint merged into ``merged_dir``
    (default: see the module docstring; an up-to-date earlier merge is reused).

    Raises:
        RuntimeError: verl's merger failed (its message carries the merger's last lines).
    """
    if source.checkpoint is None:
        return source.name
    merged = merge_checkpoint(source.checkpoint, target_dir=merged_dir, python=python)
    if merged.reused:
        print(f"[rlif eval] reusing the merged model {merged.target_dir}", file=sys.stderr)
    return str(merged.target_dir)
