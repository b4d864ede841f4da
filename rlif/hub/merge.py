"""Merge a checkpoint's FSDP shards into a Hugging Face model folder with verl's own model merger.

The merger is verl's (``python -m verl.model_merger merge --backend fsdp``), run as a child process of the
interpreter that has verl installed: it loads every shard into memory, so a separate process also returns that
memory as soon as it ends. The output goes to the folder the caller names, else to ``global_step_N/hf_merged``
when the checkpoint folder is writable, else (a read-only checkpoint store, a colleague's run) to a per-checkpoint
folder under the user's cache (``merged_dir_for``), always through a temporary sibling directory renamed into
place, so a merge cut short never looks finished. The merger's output is streamed to stderr as it
runs (a multi-GB merge takes minutes), and its last lines go into the error when it fails. A marker file records
the shards the folder was made from (names, sizes, modification times); a re-run with the same shards reuses the
folder instead of merging again, and changed shards force a fresh merge.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlif.hub.checkpoints import Checkpoint

MARKER = ".rlif_merge.json"
"""Written into the merged folder; excluded from uploads."""

MERGED_DIR_NAME = "hf_merged"

CACHE_SUBDIR = Path("rlif") / "merged"
"""Under ``$XDG_CACHE_HOME`` (default ``~/.cache``): where merges of read-only checkpoints go."""

Runner = Callable[[Sequence[str]], subprocess.CompletedProcess]


@dataclass(frozen=True)
class MergeResult:
    """Where the merged model is and whether an earlier merge was reused.

    Attributes:
        target_dir: the Hugging Face model folder.
        reused: True when the folder already matched the shards and nothing was merged.
    """

    target_dir: Path
    reused: bool


def shard_fingerprint(actor_dir: Path) -> dict[str, list[int]]:
    """``{file name: [size, mtime_ns]}`` for the shards and ``fsdp_config.json``: what a merge depends on."""
    names = sorted(p.name for p in actor_dir.iterdir() if p.suffix == ".pt" or p.name == "fsdp_config.json")
    return {n: [(actor_dir / n).stat().st_size, (actor_dir / n).stat().st_mtime_ns] for n in names}


def writable(directory: Path) -> bool:
    """Whether a file can be created in ``directory``, found by creating one: permission bits say nothing about a
    read-only mount, and root passes every permission check."""
    try:
        fd, name = tempfile.mkstemp(prefix=".rlif_write_check.", dir=directory)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def cache_merged_dir(checkpoint: Checkpoint) -> Path:
    """The checkpoint's merge folder under the user's cache: ``<cache>/rlif/merged/<run>-global_step_N-<hash>``,
    the hash of the step folder's absolute path keeping two runs of the same name apart."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / CACHE_SUBDIR
    step_dir = checkpoint.step_dir.resolve()
    digest = hashlib.sha256(str(step_dir).encode()).hexdigest()[:12]
    return root / f"{step_dir.parent.name}-{step_dir.name}-{digest}"


def merged_dir_for(checkpoint: Checkpoint, merged_dir: Path | None = None) -> Path:
    """Where ``checkpoint``'s merged model goes: ``merged_dir`` when given; else ``global_step_N/hf_merged`` when
    it already holds an up-to-date merge or the step folder is writable; else ``cache_merged_dir`` (which
    ``merge_checkpoint`` reuses when its merge is up to date)."""
    if merged_dir is not None:
        return Path(merged_dir)
    inside = checkpoint.step_dir / MERGED_DIR_NAME
    if _matches(inside, shard_fingerprint(checkpoint.actor_dir)) or writable(checkpoint.step_dir):
        return inside
    return cache_merged_dir(checkpoint)


def merge_command(actor_dir: Path, target_dir: Path, python: str) -> list[str]:
    """The verl merger command line (verl.md section 11; identical from verl 0.5.0 to 0.9.1)."""
    return [
        python,
        "-m",
        "verl.model_merger",
        "merge",
        "--backend",
        "fsdp",
        "--local_dir",
        str(actor_dir),
        "--target_dir",
        str(target_dir),
    ]


TAIL_LINES = 30
"""Lines of merger output kept for the error message (the whole output was already shown live)."""

HEARTBEAT_SECONDS = 60.0
"""After this long without merger output, say it is still running (loading one multi-GB shard prints nothing)."""


def _say(message: str) -> None:
    """Progress goes to stderr so that stdout keeps only the result lines scripts may parse."""
    print(message, file=sys.stderr, flush=True)


def _run(command: Sequence[str]) -> subprocess.CompletedProcess:
    """Run the merger with its output streamed live, line by line, keeping the last lines for a failure report.

    A merge of an 8B model takes minutes; capturing its output silently looked like a hang. stdout and stderr are
    merged into one pipe (so lines keep their order), each line is echoed to stderr with a ``[merge]`` prefix as it
    arrives, and a heartbeat line says the merger is still running when it has been quiet for a while.
    """
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    started = time.monotonic()
    quiet_since = [started]  # last output or heartbeat; shared with the heartbeat thread
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(HEARTBEAT_SECONDS / 4):
            now = time.monotonic()
            if now - quiet_since[0] >= HEARTBEAT_SECONDS:
                _say(f"[merge] still running ({now - started:.0f} s so far)")
                quiet_since[0] = now

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the child's prints arrive when made, not when a buffer fills
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", env=env
    ) as process:
        thread = threading.Thread(target=heartbeat, daemon=True)
        thread.start()
        try:
            for line in process.stdout or ():
                quiet_since[0] = time.monotonic()
                tail.append(line)
                sys.stderr.write(f"[merge] {line.rstrip(chr(10))}\n")
                sys.stderr.flush()
            returncode = process.wait()
        except BaseException:  # Ctrl-C or SIGTERM (see merge_checkpoint): the merger must not outlive us
            _stop_child(process)
            raise
        finally:
            stop.set()
            thread.join()
    return subprocess.CompletedProcess(list(command), returncode, stdout="".join(tail), stderr="")


def _stop_child(process: subprocess.Popen) -> None:
    """Terminate the merger, then kill it if it has not exited within a few seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class _TerminatedError(BaseException):
    """SIGTERM arrived during a merge (``kill``, Slurm's time limit): unwinds like Ctrl-C so cleanups run."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _TerminatedError(f"stopped by signal {signum} during the merge; the partial merge was removed")


def remove_stale_partials(target: Path) -> list[Path]:
    """Delete partial merges next to ``target`` left by a merge whose process no longer exists (killed with
    SIGKILL, or a crashed node); a partial of a running process is kept."""
    removed = []
    for partial in target.parent.glob(f".{target.name}.*.partial"):
        pid = partial.name.removeprefix(f".{target.name}.").removesuffix(".partial")
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)
            removed.append(partial)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def merge_checkpoint(
    checkpoint: Checkpoint,
    *,
    target_dir: Path | None = None,
    python: str = sys.executable,
    runner: Runner = _run,
) -> MergeResult:
    """Merge ``checkpoint``'s actor shards into a Hugging Face folder, or reuse an up-to-date earlier merge.

    Args:
        checkpoint: a complete checkpoint (see ``pick_checkpoint``).
        target_dir: output folder; default ``merged_dir_for(checkpoint)``: ``global_step_N/hf_merged``, or a
            folder under the user's cache when the checkpoint folder is read-only.
        python: interpreter with verl installed.
        runner: runs the command and returns the completed process (tests substitute it).

    Returns:
        The folder and whether it was reused.

    Raises:
        RuntimeError: the merger failed (the message carries the end of its output), wrote no weights, or
            SIGTERM stopped the merge (the merger is stopped and its partial folder removed first).
    """
    target = merged_dir_for(checkpoint, target_dir)
    fingerprint = shard_fingerprint(checkpoint.actor_dir)
    if _matches(target, fingerprint):
        return MergeResult(target, reused=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    for stale in remove_stale_partials(target):
        _say(f"removed {stale}, left by an interrupted merge")
    _say(
        f"merging {checkpoint.actor_dir} -> {target} with verl's model merger ({python} -m verl.model_merger); "
        "this loads every shard and can take minutes"
    )
    started = time.monotonic()
    previous = (
        signal.signal(signal.SIGTERM, _on_sigterm) if threading.current_thread() is threading.main_thread() else None
    )
    try:
        done = runner(merge_command(checkpoint.actor_dir, partial, python))
        if done.returncode != 0:
            tail = "\n".join(((done.stdout or "") + (done.stderr or "")).splitlines()[-TAIL_LINES:])
            raise RuntimeError(f"verl model merger failed on {checkpoint.actor_dir} (exit {done.returncode}):\n{tail}")
        if not any(partial.glob("*.safetensors")) and not any(partial.glob("*.bin")):
            raise RuntimeError(f"verl model merger wrote no weights into {partial}")
        (partial / MARKER).write_text(json.dumps({"shards": fingerprint}, indent=1, sort_keys=True) + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(partial, target)
    except _TerminatedError as err:
        raise RuntimeError(str(err)) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(partial, ignore_errors=True)
    _say(f"merged in {time.monotonic() - started:.0f} s: {target}")
    return MergeResult(target, reused=False)


def _matches(target: Path, fingerprint: dict[str, list[int]]) -> bool:
    marker = target / MARKER
    if not marker.is_file():
        return False
    try:
        return json.loads(marker.read_text()).get("shards") == fingerprint
    except json.JSONDecodeError:
        return False
