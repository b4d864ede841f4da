"""Downloads against a real local Hub (olah on 127.0.0.1): data and models, pinned revisions, validation errors
(the rejected file stays in staging, never in verl_data/), overlap detection, and resuming after the client is
killed halfway through a file."""

from __future__ import annotations

import copy
import os
import random
import signal
import string
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from data_rows import (
    IFBENCH_FILE,
    IFEVAL_FILE,
    head_jsonl,
    if_train_fixture_row,
    logicif_fixture_row,
    write_jsonl,
)
from local_hub import StallingProxy, git_repo, olah_server

from rlif.data.files import write_rows_atomic
from rlif.data.mixtures import MixtureSpec, build_eval_rows, build_mixture, load_rows
from rlif.hub_cli import data_download as data_download_cli
from rlif.hub_cli import model_download as model_download_cli

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
BIG = "if60_logicif0.parquet"


def _parquet_bytes(rows: list[dict[str, Any]], tmp: Path, name: str) -> bytes:
    return write_rows_atomic(rows, tmp / name).read_bytes()


def _big_rows(pool: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """60 IF rows with 40 kB prompts of random letters (test fixture, ~2.4 MB of parquet that barely compresses)."""
    rng = random.Random(0)
    rows = []
    for i in range(60):
        row = copy.deepcopy(pool[0])
        text = "".join(rng.choice(string.ascii_letters + " ") for _ in range(40_000))
        row["prompt"] = [{"role": "user", "content": f"(test fixture {i}) {text}"}]
        row["extra_info"] = {**row["extra_info"], "item_id": f"iftrain:big-{i}", "index": i}
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("hub")
    src = tmp / "src"
    pool = load_rows(
        [
            write_jsonl(src / "if.jsonl", [if_train_fixture_row(i) for i in range(8)]),
            write_jsonl(src / "logicif.jsonl", [logicif_fixture_row(t, c) for t in range(3) for c in range(2)]),
        ]
    )
    eval_rows = build_eval_rows(
        ifbench=[head_jsonl(IFBENCH_FILE, src / "ifbench.jsonl", 5)],
        ifeval=[head_jsonl(IFEVAL_FILE, src / "ifeval.jsonl", 6)],
        logicif=[write_jsonl(src / "logicif_eval.jsonl", [logicif_fixture_row(9, c) for c in range(4)])],
    )
    eval_name = "ifbench_5_ifeval_6_logicif_4.parquet"
    old_mixture = _parquet_bytes(build_mixture(MixtureSpec(3, 2, seed=0), pool), tmp, "old.parquet")
    new_mixture = _parquet_bytes(build_mixture(MixtureSpec(3, 2, seed=1), pool), tmp, "new.parquet")
    assert old_mixture != new_mixture
    mirrors = tmp / "mirrors"
    data = mirrors / "datasets" / "testorg" / "rlif-data"
    first_commit = git_repo(data, {"if3_logicif2.parquet": old_mixture, "README.md": b"rlif test data\n"})
    git_repo(
        data,
        {
            "if3_logicif2.parquet": new_mixture,
            eval_name: _parquet_bytes(eval_rows, tmp, "eval.parquet"),
            BIG: _parquet_bytes(_big_rows(pool), tmp, "big.parquet"),
            "notes.txt": b"not a data file\n",
        },
        "second",
    )
    bad = copy.deepcopy(pool[:2])
    bad[1]["prompt"][0]["role"] = "robot"
    git_repo(mirrors / "datasets" / "testorg" / "bad-data", {"if2_logicif0.parquet": _parquet_bytes(bad, tmp, "b")})
    leaky = build_mixture(MixtureSpec(8, 0), pool)
    leaky[0] = {**copy.deepcopy(eval_rows[0]), "data_source": "iftrain", "extra_info": leaky[0]["extra_info"]}
    git_repo(
        mirrors / "datasets" / "testorg" / "leaky-data",
        {"if8_logicif0.parquet": _parquet_bytes(leaky, tmp, "l"), eval_name: _parquet_bytes(eval_rows, tmp, "e")},
    )
    model_files = {
        "config.json": b'{"model_type": "qwen3", "hidden_size": 8}',
        "generation_config.json": b'{"temperature": 0.6}',
        "tokenizer.json": b'{"version": "1.0"}',
        "model.safetensors": random.Random(1).randbytes(300_000),
        "flax_model.msgpack": b"not needed by rlif",
    }
    git_repo(mirrors / "models" / "testorg" / "tiny-qwen", model_files)
    # the file set of a Qwen3 repo (every file is fetched, so the snapshot is complete offline)
    qwen3_files = {
        ".gitattributes": b"*.safetensors binary\n",
        "LICENSE": b"Apache-2.0 (test fixture)\n",
        "README.md": b"tiny test model\n",
        "config.json": model_files["config.json"],
        "generation_config.json": model_files["generation_config.json"],
        "merges.txt": b"#version: 0.2\n",
        "model.safetensors": model_files["model.safetensors"],
        "tokenizer.json": model_files["tokenizer.json"],
        "tokenizer_config.json": b"{}",
        "vocab.json": b"{}",
    }
    git_repo(mirrors / "models" / "testorg" / "Qwen3-tiny", qwen3_files)
    with olah_server(mirrors, tmp / "olah") as url:
        yield {
            "url": url,
            "tmp": tmp,
            "old_mixture": old_mixture,
            "new_mixture": new_mixture,
            "first_commit": first_commit,
            "model_files": model_files,
        }


@pytest.fixture
def hub_env(hub: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_ENDPOINT", hub["url"])
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    for name in ("HF_TOKEN", "HF_DATA_REPO", "HF_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "no.env"


def test_data_download_validates_and_prints_table(
    hub: dict[str, Any], hub_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verl_data"
    code = data_download_cli.main(["--repo-id", "testorg/rlif-data", "--out-dir", str(out), "--env-file", str(hub_env)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    names = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert names == ["if3_logicif2.parquet", BIG, "ifbench_5_ifeval_6_logicif_4.parquet"]  # no notes.txt, README
    assert (out / "if3_logicif2.parquet").read_bytes() == hub["new_mixture"]
    table = printed.out
    assert "if3_logicif2.parquet                  mixture  5     iftrain=3, logicif=2" in table
    assert "ifbench_5_ifeval_6_logicif_4.parquet  eval     15    ifbench=5, ifeval=6, logicif=4  test=15" in table
    assert f"files are in {out.resolve()}" in table


def test_pinned_revision_and_include_pattern(
    hub: dict[str, Any], hub_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verl_data"
    args = ["--repo-id", "testorg/rlif-data", "--revision", hub["first_commit"], "--include", "if3_*.parquet"]
    assert data_download_cli.main([*args, "--out-dir", str(out), "--env-file", str(hub_env)]) == 0
    assert (out / "if3_logicif2.parquet").read_bytes() == hub["old_mixture"]
    assert hub["first_commit"] in capsys.readouterr().out


def test_data_repo_from_dotenv(hub: dict[str, Any], hub_env: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "rlif.env"
    env_file.write_text("# from .env\nHF_DATA_REPO=testorg/rlif-data\n")
    out = tmp_path / "verl_data"
    assert data_download_cli.main(["--include", "if3_*", "--out-dir", str(out), "--env-file", str(env_file)]) == 0
    assert (out / "if3_logicif2.parquet").is_file()


def test_invalid_row_fails_with_file_row_and_field(
    hub: dict[str, Any], hub_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verl_data"
    args = ["--repo-id", "testorg/bad-data", "--out-dir", str(out), "--env-file", str(hub_env)]
    assert data_download_cli.main(args) == 1
    err = capsys.readouterr().err
    staged = out / ".staging" / "if2_logicif0.parquet"
    assert f"{staged}: row 1: field prompt[0].role: must be one of" in err
    assert f"kept in staging as {staged}" in err
    assert staged.is_file(), "the rejected download is kept for inspection and for a resumed re-run"
    assert not (out / "if2_logicif0.parquet").exists(), "a rejected file must never sit where training loads data"
    assert data_download_cli.main(args) == 1  # a re-run rejects it again and still leaves verl_data/ alone
    assert not (out / "if2_logicif0.parquet").exists()


def test_train_eval_overlap_fails(
    hub: dict[str, Any], hub_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verl_data"
    code = data_download_cli.main(
        ["--repo-id", "testorg/leaky-data", "--out-dir", str(out), "--env-file", str(hub_env)]
    )
    printed = capsys.readouterr()
    assert code == 1
    assert "if8_logicif0.parquet  ifbench_5_ifeval_6_logicif_4.parquet  1" in printed.out
    assert "overlap the evaluation file" in printed.err
    assert sorted(p.name for p in out.iterdir()) == [".staging"], "nothing of a rejected set reaches verl_data/"
    assert (out / ".staging" / "if8_logicif0.parquet").is_file()


def test_unknown_repo_and_missing_settings(hub_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--out-dir", str(tmp_path / "d"), "--env-file", str(hub_env)]
    assert data_download_cli.main(["--repo-id", "testorg/nope", *args]) == 1
    assert "testorg/nope" in capsys.readouterr().err
    assert data_download_cli.main(args) == 2
    assert "HF_DATA_REPO" in capsys.readouterr().err


def test_model_download_into_cache_verified(
    hub: dict[str, Any], hub_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "hf_cache"
    assert model_download_cli.main(["testorg/tiny-qwen", "--cache-dir", str(cache), "--env-file", str(hub_env)]) == 0
    out = capsys.readouterr().out
    snapshot = Path(out.strip().splitlines()[-1].strip())
    assert snapshot.parent.parent == cache / "models--testorg--tiny-qwen"
    assert sorted(p.name for p in snapshot.iterdir()) == sorted(set(hub["model_files"]) - {"flax_model.msgpack"})
    assert (snapshot / "model.safetensors").read_bytes() == hub["model_files"]["model.safetensors"]
    assert "4 files, 0.00 GB verified" in out
    assert model_download_cli.main(["bogus", "--cache-dir", str(cache), "--env-file", str(hub_env)]) == 1
    assert "neither a short name" in capsys.readouterr().err


def test_download_resumes_after_the_client_is_killed(hub: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "verl_data"
    proxy = StallingProxy(hub["url"], stall_name=BIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env |= {"HF_HOME": str(tmp_path / "hf_home"), "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    command = [sys.executable, str(REPO_ROOT / "hf_data_download.py"), "--repo-id", "testorg/rlif-data"]
    command += ["--out-dir", str(out), "--env-file", str(tmp_path / "no.env")]
    with proxy.serve() as proxy_url:
        client = subprocess.Popen(
            command,
            env=env | {"HF_ENDPOINT": proxy_url},
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            assert proxy.stalled.wait(timeout=120), "the client never reached the large file"
            staging = out / ".staging"
            small = [staging / "if3_logicif2.parquet", staging / "ifbench_5_ifeval_6_logicif_4.parquet"]
            deadline = time.monotonic() + 60
            while not all(p.exists() for p in small) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert all(p.exists() for p in small), "the small files should finish while the large one hangs"
            partial = list((staging / ".cache" / "huggingface" / "download").glob("*.incomplete"))
            assert partial, "the interrupted file should sit in the client's .incomplete staging file"
        finally:
            client.send_signal(signal.SIGKILL)
            client.wait(timeout=30)
        assert not (out / BIG).exists(), "an interrupted file must never appear at its final path"
        assert not list(out.glob("*.parquet")), "nothing reaches verl_data/ before the whole set is validated"
        first_run = len(proxy.log)
        proxy.stall_name = None
        rerun = subprocess.run(
            command,
            check=False,
            env=env | {"HF_ENDPOINT": proxy_url},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "if60_logicif0.parquet                 mixture  60" in rerun.stdout
    second_gets = [path for method, path in proxy.log[first_run:] if method == "GET" and "/resolve/" in path]
    assert [p.rsplit("/", 1)[-1] for p in second_gets] == [BIG], "completed files must not be fetched again"
    assert not list((out / ".staging" / ".cache" / "huggingface" / "download").glob("*.incomplete"))
    placed = sorted(p.name for p in out.glob("*.parquet"))
    assert placed == ["if3_logicif2.parquet", BIG, "ifbench_5_ifeval_6_logicif_4.parquet"]


OFFLINE_CHECK = """
import sys
from huggingface_hub import constants, snapshot_download
from transformers import AutoConfig
assert constants.HF_HUB_OFFLINE
print(snapshot_download(sys.argv[1], local_files_only=True))
print(AutoConfig.from_pretrained(sys.argv[1]).model_type)
"""


def _offline(repo_id: str, cache: Path) -> subprocess.CompletedProcess:
    """Resolve ``repo_id`` in a fresh process with HF_HUB_OFFLINE=1 (read at import) and the cache as HF_HUB_CACHE."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env |= {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_ENDPOINT": "http://127.0.0.1:9"}
    return subprocess.run(
        [sys.executable, "-c", OFFLINE_CHECK, repo_id],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_model_resolves_offline_by_repo_id_after_download(
    hub: dict[str, Any], hub_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "hf_cache"
    assert model_download_cli.main(["testorg/Qwen3-tiny", "--cache-dir", str(cache), "--env-file", str(hub_env)]) == 0
    out = capsys.readouterr().out
    snapshot = out.strip().splitlines()[-1].strip()
    commit = Path(snapshot).name
    assert (cache / "models--testorg--Qwen3-tiny" / "refs" / "main").read_text() == commit
    assert f"offline: with HF_HUB_CACHE={cache} HF_HUB_OFFLINE=1, from_pretrained('testorg/Qwen3-tiny')" in out
    resolved = _offline("testorg/Qwen3-tiny", cache)
    assert resolved.returncode == 0, resolved.stderr[-2000:]
    assert resolved.stdout.splitlines() == [snapshot, "qwen3"]

    pinned = tmp_path / "pinned_cache"  # a download by commit sha records no branch: the output says what to use
    args = ["testorg/Qwen3-tiny", "--revision", commit, "--cache-dir", str(pinned), "--env-file", str(hub_env)]
    assert model_download_cli.main(args) == 0
    assert f"offline: pinned to commit {commit} (no branch recorded)" in capsys.readouterr().out
    assert not (pinned / "models--testorg--Qwen3-tiny" / "refs" / "main").exists()
    assert _offline("testorg/Qwen3-tiny", pinned).returncode != 0


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupted_cached_blob_is_fetched_again(
    hub: dict[str, Any], hub_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    cache = tmp_path / "hf_cache"
    args = ["testorg/tiny-qwen", "--cache-dir", str(cache), "--env-file", str(hub_env)]
    assert model_download_cli.main(args) == 0
    snapshot = Path(capsys.readouterr().out.strip().splitlines()[-1].strip())
    weights = snapshot / "model.safetensors"
    blob = Path(os.path.realpath(weights))
    assert blob.parent.name == "blobs"
    good = blob.read_bytes()
    blob.write_bytes(bytes(b ^ 0xFF for b in good[:64]) + good[64:] if damage == "flip" else good[:1000])
    assert model_download_cli.main(args) == 0
    out = capsys.readouterr().out
    problem = (
        "content differs from the Hub's (git blob id)" if damage == "flip" else f"1000 bytes, expected {len(good)}"
    )
    assert f"  repaired: {weights}: {problem}; fetched again" in out
    assert weights.read_bytes() == hub["model_files"]["model.safetensors"]
    assert model_download_cli.main(args) == 0  # and a third run finds nothing to repair
    assert "repaired" not in capsys.readouterr().out


def test_corrupted_local_dir_file_is_fetched_again(hub: dict[str, Any], hub_env: Path, tmp_path: Path) -> None:
    """The plain-directory layout (data downloads): a damaged file whose client metadata still matches is refetched."""
    from rlif.hub.download import download_repo
    from rlif.hub.settings import load_settings

    settings = load_settings(hub_env)
    out = tmp_path / "plain"
    first = download_repo(
        "testorg/rlif-data", repo_type="dataset", settings=settings, allow_patterns=["if3_*"], local_dir=out
    )
    assert first.repaired == () and first.ref is None
    target = out / "if3_logicif2.parquet"
    target.write_bytes(b"PAR1" + bytes(len(hub["new_mixture"]) - 4))
    again = download_repo(
        "testorg/rlif-data", repo_type="dataset", settings=settings, allow_patterns=["if3_*"], local_dir=out
    )
    assert again.repaired == (f"{target}: content differs from the Hub's (git blob id); fetched again",)
    assert target.read_bytes() == hub["new_mixture"]
