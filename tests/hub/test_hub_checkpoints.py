"""Checkpoint discovery, merge bookkeeping, model cards and ``hf_upload.py`` against a faked Hub HTTP layer.

The merger here is a stand-in script (the real verl merger runs in ``test_hub_merge_real.py``); the Hub client is
the real ``huggingface_hub`` with its HTTP transport answered by ``FakeHub``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hub_fakes import ENDPOINT, fake_hub_transport

from rlif.hub.checkpoints import Checkpoint, find_runs, pick_checkpoint
from rlif.hub.merge import MARKER, merge_checkpoint
from rlif.hub.model_card import base_model_id, collect_run_info, render_model_card
from rlif.hub_cli import upload as upload_cli
from rlif.verl_glue.saved_config import read_saved_config

TOKEN = "hf_testTOKEN0123456789secret"

FAKE_MERGER = """#!{python}
# Stand-in for `python -m verl.model_merger merge --backend fsdp --local_dir A --target_dir T`: counts its calls
# and writes a tiny model folder, or fails when FAKE_MERGE_FAIL is set.
import os, sys, pathlib
args = sys.argv[1:]
assert args[:4] == ["-m", "verl.model_merger", "merge", "--backend"], args
with open(os.environ["FAKE_MERGE_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if os.environ.get("FAKE_MERGE_FAIL"):
    print("Traceback: out of memory while loading shards", file=sys.stderr)
    sys.exit(3)
target = pathlib.Path(args[args.index("--target_dir") + 1])
target.mkdir(parents=True)
(target / "config.json").write_text('{{"model_type": "qwen3"}}')
(target / "model.safetensors").write_bytes(b"weights of " + args[args.index("--local_dir") + 1].encode())
"""


def write_shard(path: Path, payload: bytes) -> None:
    """A placeholder shard with ``torch.save``'s archive layout (``<name>/data.pkl``, ``<name>/data/0``, ...)."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{path.stem}/data.pkl", b"\x80\x02}q\x00.")
        archive.writestr(f"{path.stem}/data/0", payload)
        archive.writestr(f"{path.stem}/version", b"3\n")


def make_checkpoint(run_dir: Path, step: int, *, world_size: int = 2, missing_rank: int | None = None) -> Checkpoint:
    """verl's FSDP checkpoint layout with placeholder shards (enough for discovery and bookkeeping)."""
    actor = run_dir / f"global_step_{step}" / "actor"
    (actor / "huggingface").mkdir(parents=True)
    (actor / "huggingface" / "config.json").write_text('{"model_type": "qwen3"}')
    (actor / "huggingface" / "tokenizer.json").write_text("{}")
    (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": world_size}))
    for rank in range(world_size):
        if rank != missing_rank:
            write_shard(actor / f"model_world_size_{world_size}_rank_{rank}.pt", b"shard %d" % rank * 100)
    return Checkpoint(run_dir, step)


@pytest.fixture
def fake_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "fake_python"
    script.write_text(FAKE_MERGER.format(python=sys.executable))
    script.chmod(0o755)
    monkeypatch.setenv("FAKE_MERGE_LOG", str(tmp_path / "merges.log"))
    (tmp_path / "merges.log").write_text("")
    return script


def merges(tmp_path: Path) -> int:
    return len((tmp_path / "merges.log").read_text().splitlines())


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "checkpoints" / "rlif" / "qwen3-1.7b-if1000"
    for step in (10, 20):
        make_checkpoint(run, step)
    make_checkpoint(run, 30, missing_rank=1)  # still being written when the job was preempted
    (run / "config.yaml").write_text(
        """
actor_rollout_ref:
  model:
    path: /hf_cache/models--Qwen--Qwen3-1.7B/snapshots/0123abcd
data:
  train_files: [/data/verl_data/if1000_logicif1000.parquet]
  val_files: /data/verl_data/ifbench_300_ifeval_541_logicif_749.parquet
  rlif_sampler: {name: reward_curriculum, params: {threshold: 0.5}, seed: 7}
reward:
  custom_reward_function: {path: pkg://rlif.verl_glue.hooks, name: compute_score, reward_kwargs: {if_reward: fraction}}
trainer: {total_training_steps: 500}
"""
    )
    records = [
        {"step": 9, "data": {"actor/loss": 0.1}},
        {"step": 10, "data": {"val-core/ifeval/acc/mean@1": 0.61, "val-aux/ifeval/score/mean@1": 0.7}},
        {"step": 20, "data": {"val-core/ifeval/acc/mean@1": 0.66, "val-core/logicif/acc/mean@1": 0.12}},
        {"step": 30, "data": {"val-core/ifeval/acc/mean@1": 0.7}},
    ]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return run


def test_find_runs_and_pick_latest_complete(tmp_path: Path, run_dir: Path) -> None:
    other = tmp_path / "checkpoints" / "rlif" / "other-run"
    make_checkpoint(other, 5)
    assert find_runs(tmp_path / "checkpoints") == [other, run_dir]
    assert pick_checkpoint(run_dir).step == 20
    assert pick_checkpoint(run_dir, 10).step == 10
    with pytest.raises(ValueError, match=r"global_step_30 is incomplete:\n.*model_world_size_2_rank_1\.pt: missing"):
        pick_checkpoint(run_dir, 30)
    with pytest.raises(ValueError, match=r"no global_step_40 \(have \[10, 20, 30\]\)"):
        pick_checkpoint(run_dir, 40)
    broken = tmp_path / "broken"
    make_checkpoint(broken, 1, missing_rank=0)
    with pytest.raises(ValueError, match="no complete checkpoint"):
        pick_checkpoint(broken)


def _fake_runner(
    calls: list[Sequence[str]], fail: bool = False
) -> Callable[[Sequence[str]], subprocess.CompletedProcess]:
    def run(command: Sequence[str]) -> subprocess.CompletedProcess:
        calls.append(list(command))
        if fail:
            return subprocess.CompletedProcess(command, 1, stdout="loading shards\n", stderr="KeyError: 'lm_head'\n")
        target = Path(command[command.index("--target_dir") + 1])
        target.mkdir(parents=True)
        (target / "model.safetensors").write_bytes(b"w")
        return subprocess.CompletedProcess(command, 0, stdout="", stderr="")

    return run


def test_merge_is_reused_until_the_shards_change(run_dir: Path) -> None:
    checkpoint = pick_checkpoint(run_dir)
    calls: list[Sequence[str]] = []
    first = merge_checkpoint(checkpoint, python="py", runner=_fake_runner(calls))
    assert (first.target_dir, first.reused) == (checkpoint.step_dir / "hf_merged", False)
    assert calls[0][:6] == ["py", "-m", "verl.model_merger", "merge", "--backend", "fsdp"]
    assert calls[0][calls[0].index("--local_dir") + 1] == str(checkpoint.actor_dir)
    assert (first.target_dir / MARKER).is_file()
    assert merge_checkpoint(checkpoint, python="py", runner=_fake_runner(calls)).reused
    assert len(calls) == 1
    shard = checkpoint.actor_dir / "model_world_size_2_rank_1.pt"
    write_shard(shard, b"retrained shard 1")
    assert not merge_checkpoint(checkpoint, python="py", runner=_fake_runner(calls)).reused
    assert len(calls) == 2


def test_failed_merge_leaves_no_folder(run_dir: Path) -> None:
    checkpoint = pick_checkpoint(run_dir)
    with pytest.raises(RuntimeError, match=r"(?s)exit 1.*KeyError: 'lm_head'"):
        merge_checkpoint(checkpoint, python="py", runner=_fake_runner([], fail=True))
    assert sorted(p.name for p in checkpoint.step_dir.iterdir()) == ["actor"]


def test_model_card_records_the_run(run_dir: Path) -> None:
    info = collect_run_info(pick_checkpoint(run_dir), read_config=read_saved_config)
    assert info.base_model == "Qwen/Qwen3-1.7B"
    assert info.val_metrics_step == 20
    assert info.val_metrics == {"val-core/ifeval/acc/mean@1": 0.66, "val-core/logicif/acc/mean@1": 0.12}
    card = render_model_card(info, repo_id="me/qwen3-1.7b-rlif")
    assert card.startswith("---\nbase_model: Qwen/Qwen3-1.7B\n")
    for expected in (
        "| training data | if1000_logicif1000.parquet |",
        "ifbench_300_ifeval_541_logicif_749.parquet",
        '"name": "reward_curriculum"',
        '"if_reward": "fraction"',
        "| global step | 20 of 500 |",
        "Logged at step 20.",
        "| `val-core/logicif/acc/mean@1` | 0.1200 |",
    ):
        assert expected in card


def test_model_card_without_config_says_not_recorded(tmp_path: Path) -> None:
    checkpoint = make_checkpoint(tmp_path / "bare", 3)
    card = render_model_card(collect_run_info(checkpoint, read_config=read_saved_config), repo_id="me/x")
    assert "| base model | not recorded |" in card
    assert "Not recorded: no validation metrics" in card
    assert "base_model" not in card.split("---")[1]
    assert base_model_id("Qwen/Qwen3-8B") == "Qwen/Qwen3-8B"


def _upload(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = upload_cli.main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    env_file = tmp_path / "test.env"
    env_file.write_text(f"HF_TOKEN={TOKEN}\nHF_ENDPOINT={ENDPOINT}\n")
    for name in ("HF_TOKEN", "HF_ENDPOINT", "HF_DATA_REPO"):
        monkeypatch.delenv(name, raising=False)
    return env_file


def test_upload_checkpoint_private_idempotent_and_token_free(
    tmp_path: Path, run_dir: Path, fake_python: Path, hub_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--env-file", str(hub_env), "checkpoint", "--root", str(tmp_path / "checkpoints")]
    args += ["--repo-id", "me/qwen3-rlif", "--python", str(fake_python)]
    with fake_hub_transport() as hub:
        code, out, err = _upload(args, capsys)
        assert code == 0, err
        repo = hub.repos[("model", "me/qwen3-rlif")]
        assert repo.private
        assert sorted(repo.files) == ["README.md", "config.json", "model.safetensors"]
        assert repo.commits == ["qwen3-1.7b-if1000 global_step_20"]
        assert b"base_model: Qwen/Qwen3-1.7B" in repo.files["README.md"]
        assert all(auth == f"Bearer {TOKEN}" for _, path, auth in hub.requests if not path.startswith("/api/agent"))
        code, out2, err2 = _upload(args, capsys)  # re-run: merge reused, nothing changed, no new commit
        assert code == 0, err2
        assert repo.commits == ["qwen3-1.7b-if1000 global_step_20"]
        assert "reused earlier merge" in out2
        assert hub.unexpected == []
    assert merges(tmp_path) == 1
    assert TOKEN not in out + err + out2 + err2


def test_dry_run_sends_and_writes_nothing(
    tmp_path: Path, run_dir: Path, fake_python: Path, hub_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--env-file", str(hub_env), "checkpoint", "--root", str(run_dir), "--step", "10", "--repo-id", "me/x"]
    with fake_hub_transport() as hub:
        code, out, err = _upload([*args, "--python", str(fake_python), "--dry-run"], capsys)
    assert code == 0, err
    assert hub.requests == []
    assert merges(tmp_path) == 0
    assert not (run_dir / "global_step_10" / "hf_merged").exists()
    assert "checkpoint: global_step_10" in out and "(private if created)" in out and "Logged at step 10." in out
    assert TOKEN not in out + err


def test_public_existing_repo_is_not_used_for_a_private_upload(
    tmp_path: Path, run_dir: Path, fake_python: Path, hub_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hub_fakes import FakeRepo

    with fake_hub_transport() as hub:
        hub.repos[("model", "me/public")] = FakeRepo(private=False)
        args = ["--env-file", str(hub_env), "checkpoint", "--root", str(run_dir), "--repo-id", "me/public"]
        code, _, err = _upload([*args, "--python", str(fake_python)], capsys)
        assert code == 1
        assert "already exists and is public" in err
        assert hub.repos[("model", "me/public")].files == {}
        code, _, err = _upload([*args, "--python", str(fake_python), "--public"], capsys)
        assert code == 0, err
        assert "model.safetensors" in hub.repos[("model", "me/public")].files


def test_errors_never_show_the_token(
    tmp_path: Path, run_dir: Path, fake_python: Path, hub_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--env-file", str(hub_env), "checkpoint", "--root", str(run_dir), "--repo-id", "me/x"]
    with fake_hub_transport() as hub:
        hub.echo_auth_on_commit = True  # a hostile server quoting the Authorization header back
        code, out, err = _upload([*args, "--python", str(fake_python)], capsys)
    assert code == 1
    assert "<redacted>" in err
    assert TOKEN not in out + err


def test_several_runs_need_a_choice(
    tmp_path: Path, run_dir: Path, fake_python: Path, hub_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_checkpoint(tmp_path / "checkpoints" / "rlif" / "second", 1)
    args = ["--env-file", str(hub_env), "checkpoint", "--root", str(tmp_path / "checkpoints"), "--repo-id", "me/x"]
    with fake_hub_transport() as hub:
        code, _, err = _upload([*args, "--python", str(fake_python), "--dry-run"], capsys)
        assert code == 1 and "holds 2 runs; choose one with --run <run_name>" in err
        listed = [line.split() for line in err.splitlines() if line.startswith("  ")]
        assert [name for name, _ in listed] == ["qwen3-1.7b-if1000", "second"]
        assert all(Path(path).name == name for name, path in listed)
        code, _, err = _upload([*args, "--python", str(fake_python), "--dry-run", "--run", "nope"], capsys)
        assert code == 1 and "run 'nope' not found" in err and "  second  " in err
        code, out, err = _upload([*args, "--python", str(fake_python), "--dry-run", "--run", "second"], capsys)
        assert code == 0, err
        assert "global_step_1" in out
        assert hub.requests == []


def test_readme_upload_command_names_the_run() -> None:
    """With several runs under checkpoints/ the command without --run fails, so the README must not show that."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    uploads = [line for line in readme.splitlines() if line.startswith("python hf_upload.py checkpoint")]
    assert uploads and all(" --run " in line for line in uploads)
    assert all(upload_cli.parse_args(line.split("#")[0].split()[2:]).run for line in uploads)


def test_merger_failure_is_reported(
    run_dir: Path,
    fake_python: Path,
    hub_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_MERGE_FAIL", "1")
    with fake_hub_transport() as hub:
        args = ["--env-file", str(hub_env), "checkpoint", "--root", str(run_dir), "--repo-id", "me/x"]
        code, _, err = _upload([*args, "--python", str(fake_python)], capsys)
    assert code == 1
    assert "verl model merger failed" in err and "out of memory while loading shards" in err
    assert "[merge] Traceback: out of memory while loading shards" in err  # shown live, not only in the error
    assert f"merging {run_dir / 'global_step_20' / 'actor'} -> " in err
    assert hub.repos == {}


def test_merger_output_is_streamed_live_with_a_heartbeat(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlif.hub import merge

    monkeypatch.setattr(merge, "HEARTBEAT_SECONDS", 0.2)
    child = "import sys, time; print('loading shards'); time.sleep(1.0); print('saving', file=sys.stderr); sys.exit(2)"
    done = merge._run([sys.executable, "-c", child])
    err = capsys.readouterr().err
    assert (done.returncode, done.stdout) == (2, "loading shards\nsaving\n")
    lines = err.splitlines()
    first, second = lines.index("[merge] loading shards"), lines.index("[merge] saving")
    beats = [i for i, line in enumerate(lines) if line.startswith("[merge] still running (")]
    assert beats and first < beats[0] < second, err  # the first line arrived while the child was still sleeping


def test_model_card_takes_the_latest_validation_across_job_attempts(run_dir: Path) -> None:
    """A requeued job writes one metrics file per attempt (metrics.<job>.<restart>.jsonl); the latest record wins."""
    later = {"step": 20, "data": {"val-core/ifeval/acc/mean@1": 0.7}}
    beyond = {"step": 30, "data": {"val-core/ifeval/acc/mean@1": 0.9}}  # after the published step: ignored
    first_mtime = (run_dir / "metrics.jsonl").stat().st_mtime
    for offset, (name, record) in enumerate([("metrics.77.1.jsonl", later), ("metrics.77.2.jsonl", beyond)], start=1):
        (run_dir / name).write_text(json.dumps(record) + "\n")
        os.utime(run_dir / name, (first_mtime + offset, first_mtime + offset))
    info = collect_run_info(pick_checkpoint(run_dir, step=20), read_config=read_saved_config)
    assert info.val_metrics_step == 20
    assert info.val_metrics["val-core/ifeval/acc/mean@1"] == 0.7


def _torch_checkpoint(run_dir: Path, step: int, *, world_size: int = 2) -> Checkpoint:
    """A checkpoint whose shards are real ``torch.save`` archives, as verl writes them."""
    import torch

    checkpoint = make_checkpoint(run_dir, step, world_size=world_size)
    for rank in range(world_size):
        torch.save(
            {"w": torch.full((64, 64), float(rank))}, checkpoint.actor_dir / f"model_world_size_2_rank_{rank}.pt"
        )
    return checkpoint


@pytest.mark.parametrize("cut", [0.5, 0.99, "last byte"])
def test_truncated_shard_makes_the_newest_step_incomplete(
    tmp_path: Path, fake_python: Path, hub_env: Path, capsys: pytest.CaptureFixture[str], cut: float | str
) -> None:
    run = tmp_path / "checkpoints" / "proj" / "runA"
    _torch_checkpoint(run, 10)
    newest = _torch_checkpoint(run, 20)
    shard = newest.actor_dir / "model_world_size_2_rank_1.pt"
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) - 1] if cut == "last byte" else data[: int(len(data) * cut)])
    assert pick_checkpoint(run).step == 10
    with pytest.raises(ValueError, match=rf"global_step_20 is incomplete:\n  {shard}: truncated or corrupt"):
        pick_checkpoint(run, 20)
    args = ["--env-file", str(hub_env), "checkpoint", "--root", str(run), "--repo-id", "me/x", "--dry-run"]
    code, out, err = _upload([*args, "--python", str(fake_python)], capsys)
    assert code == 0, err
    assert out.startswith(f"skipped global_step_20 is incomplete ({shard}: truncated or corrupt (")
    assert "publishing global_step_10 instead, the newest complete step" in out
    assert "checkpoint: global_step_10" in out
    code, out, err = _upload([*args, "--python", str(fake_python), "--step", "20"], capsys)
    assert code == 1
    assert f"error: global_step_20 is incomplete:\n  {shard}: truncated or corrupt" in err


def test_whole_torch_shards_pass_and_a_non_torch_file_does_not(tmp_path: Path) -> None:
    checkpoint = _torch_checkpoint(tmp_path / "run", 5)
    assert pick_checkpoint(checkpoint.run_dir) == checkpoint
    shard = checkpoint.actor_dir / "model_world_size_2_rank_0.pt"
    with zipfile.ZipFile(shard, "w") as archive:
        archive.writestr("notes.txt", "not a tensor archive")
    with pytest.raises(ValueError, match=r"rank_0\.pt: not a torch checkpoint \(\d+ bytes, no data\.pkl"):
        pick_checkpoint(checkpoint.run_dir, 5)
    shard.write_bytes(b"")
    with pytest.raises(ValueError, match=r"rank_0\.pt: empty"):
        pick_checkpoint(checkpoint.run_dir, 5)


def test_ambiguous_run_name_lists_the_matches(
    tmp_path: Path, fake_python: Path, hub_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "checkpoints"
    make_checkpoint(root / "projA" / "runA", 1)
    make_checkpoint(root / "projB" / "runA", 2)
    make_checkpoint(root / "projB" / "runB", 3)
    args = ["--env-file", str(hub_env), "checkpoint", "--root", str(root), "--repo-id", "me/x", "--dry-run"]
    args += ["--python", str(fake_python)]
    code, out, err = _upload([*args, "--run", "runA"], capsys)
    assert code == 1 and out == ""
    first = err.splitlines()[0]
    assert first == (
        f"error: --run runA is ambiguous: 2 runs under {root} have that name; "
        "pass --run projA/runA or --run projB/runA:"
    )
    assert err.splitlines()[1:] == [
        f"  projA/runA  {root / 'projA' / 'runA'}",
        f"  projB/runA  {root / 'projB' / 'runA'}",
    ]
    code, out, err = _upload([*args, "--run", "projB/runA"], capsys)
    assert code == 0, err
    assert f"run:        {root / 'projB' / 'runA'}" in out and "checkpoint: global_step_2" in out
    code, out, err = _upload([*args, "--run", "runB"], capsys)  # a unique name still works
    assert code == 0 and "checkpoint: global_step_3" in out
    code, out, err = _upload(args, capsys)  # no --run: names repeat, so the listing gives paths under --root
    assert code == 1 and "holds 3 runs; choose one with --run <run_name>" in err and "e.g. --run projB/runB)" in err
    assert [line.split()[0] for line in err.splitlines() if line.startswith("  ")] == [
        "projA/runA",
        "projB/runA",
        "projB/runB",
    ]


def test_model_card_never_publishes_local_paths(tmp_path: Path) -> None:
    checkpoint = make_checkpoint(tmp_path / "run", 4)
    local_model = tmp_path / "models" / "my-qwen"
    local_model.mkdir(parents=True)
    (checkpoint.run_dir / "config.yaml").write_text(
        f"""
actor_rollout_ref: {{model: {{path: {local_model}}}}}
data:
  train_files: [{tmp_path}/data/train.parquet]
  rlif_sampler: {{name: ema, params: {{state_file: {tmp_path}/state/ema.json, alpha: 0.1}}}}
reward:
  custom_reward_function:
    path: {tmp_path}/rewards/my_reward.py
    name: compute_score
    reward_kwargs: {{table: {tmp_path}/tables/weights.json, mode: strict}}
"""
    )
    info = collect_run_info(checkpoint, read_config=read_saved_config)
    assert info.base_model == "local model"
    card = render_model_card(info, repo_id="me/x")
    assert str(tmp_path) not in card
    assert "| base model | local model |" in card
    assert "base_model" not in card.split("---")[1]
    assert "my_reward.py:compute_score" in card and '"table": "weights.json"' in card
    assert '"state_file": "ema.json"' in card and "| training data | train.parquet |" in card
    assert base_model_id("Qwen/Qwen3-1.7B") == "Qwen/Qwen3-1.7B"
    assert base_model_id("/hf/models--Qwen--Qwen3-8B/snapshots/abc") == "Qwen/Qwen3-8B"
    assert base_model_id(str(local_model)) == "local model"
    assert base_model_id("./my-qwen") == "local model"
    named = collect_run_info(checkpoint, base_model="Qwen/Qwen3-1.7B", read_config=read_saved_config)
    assert render_model_card(named, repo_id="me/x").startswith("---\nbase_model: Qwen/Qwen3-1.7B\n")
    with pytest.raises(ValueError, match=r"--base-model '/models/q': give the Hub repo id"):
        collect_run_info(checkpoint, base_model="/models/q", read_config=read_saved_config)


def test_checkpoint_without_tokenizer_is_refused_not_made_up(tmp_path: Path) -> None:
    run = tmp_path / "run"
    checkpoint = make_checkpoint(run, 10)
    (checkpoint.actor_dir / "huggingface" / "tokenizer.json").unlink()
    with pytest.raises(ValueError) as info:
        pick_checkpoint(run, 10)
    assert str(info.value) == (
        "global_step_10 is incomplete:\n"
        f"  {checkpoint.actor_dir / 'huggingface'}: no tokenizer files (tokenizer.json, tokenizer.model, vocab.json, "
        "vocab.txt); verl saves the base model's tokenizer there: copy the base model's tokenizer files into it"
    )


def test_a_partial_merge_left_by_a_dead_process_is_removed(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = pick_checkpoint(run_dir, 20)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True, text=True
    )
    stale = checkpoint.step_dir / f".hf_merged.{dead.stdout.strip()}.partial"
    stale.mkdir()
    (stale / "model-00001.safetensors").write_bytes(b"half")
    merge_checkpoint(checkpoint, python="py", runner=_fake_runner([]))
    assert not stale.exists()
    assert f"removed {stale}, left by an interrupted merge" in capsys.readouterr().err


SLOW_MERGER = """#!{python}
import os, sys, time
target = sys.argv[sys.argv.index("--target_dir") + 1]
os.makedirs(target)
open(os.path.join(target, "model.safetensors"), "wb").write(b"half")
open(os.environ["MERGER_PID"], "w").write(str(os.getpid()))
time.sleep(60)
"""


def test_sigterm_during_a_merge_stops_the_merger_and_removes_its_folder(tmp_path: Path, run_dir: Path) -> None:
    merger = tmp_path / "slow_python"
    merger.write_text(SLOW_MERGER.format(python=sys.executable))
    merger.chmod(0o755)
    pid_file = tmp_path / "merger.pid"
    driver = (
        "import sys\nfrom pathlib import Path\nfrom rlif.hub.checkpoints import Checkpoint\n"
        "from rlif.hub.merge import merge_checkpoint\n"
        "try:\n    merge_checkpoint(Checkpoint(Path(sys.argv[1]), 20), python=sys.argv[2])\n"
        "except RuntimeError as err:\n    print(f'error: {err}', file=sys.stderr)\n    sys.exit(1)\n"
    )
    env = {**os.environ, "MERGER_PID": str(pid_file), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    parent = subprocess.Popen(
        [sys.executable, "-c", driver, str(run_dir), str(merger)], env=env, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 30
    while not pid_file.is_file() or not pid_file.read_text():
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.05)
    child = int(pid_file.read_text())
    parent.send_signal(signal.SIGTERM)
    _, err = parent.communicate(timeout=30)
    assert parent.returncode == 1
    assert "error: stopped by signal 15 during the merge; the partial merge was removed" in err
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    assert list((run_dir / "global_step_20").glob(".hf_merged.*")) == []
    assert not (run_dir / "global_step_20" / "hf_merged").exists()
