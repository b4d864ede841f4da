"""Hub requests against a server that accepts connections and never answers, a closed port and an unknown host:
each command fails within its bound with one line naming the endpoint and the setting; bad settings are named.

The limits are lowered through the same ``RLIF_HUB_*`` settings a user would change (a default-limit run is the
slow test at the end)."""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import huggingface_hub
import pytest

from rlif.hub import network
from rlif.hub.network import HubConnectionError, HubLimits, SettingError, parse_limits
from rlif.hub.settings import HubSettings, load_settings
from rlif.hub.upload import execute_upload, plan_upload
from rlif.hub_cli import data_download as data_download_cli
from rlif.hub_cli import model_download as model_download_cli
from rlif.hub_cli import upload as upload_cli

REPO_ROOT = Path(__file__).resolve().parents[2]
FAST = {"RLIF_HUB_CONNECT_TIMEOUT": "1", "RLIF_HUB_READ_TIMEOUT": "0.5", "RLIF_HUB_RETRIES": "1"}
FAST_BOUND = HubLimits(connect=1, read=0.5, retries=1).silent_server_seconds() + 3.0  # + interpreter slack


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A TCP server that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in held:
            conn.close()


@pytest.fixture
def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("HF_TOKEN", "HF_DATA_REPO", "HF_CACHE_DIR", "HF_ENDPOINT", *FAST):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    yield tmp_path / "absent.env"
    network.configure(HubLimits())


def _commands(tmp_path: Path) -> dict[str, Callable[[list[str]], int]]:
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "README.md").write_text("data card\n")
    return {
        "model download": lambda e: model_download_cli.main(["org/model", "--cache-dir", str(tmp_path / "c"), *e]),
        "data download": lambda e: data_download_cli.main(["--repo-id", "org/d", "--out-dir", str(tmp_path / "d"), *e]),
        "data upload": lambda e: upload_cli.main([*e, "data", "--dir", str(tmp_path / "up"), "--repo-id", "me/d"]),
    }


@pytest.mark.parametrize("command", ["model download", "data download", "data upload"])
def test_silent_server_fails_fast_naming_endpoint_and_setting(
    command: str,
    *,
    silent_server: str,
    env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", silent_server)
    started = time.monotonic()
    code = _commands(tmp_path)[command](["--env-file", str(env)])
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1
    assert elapsed < FAST_BOUND, f"{command} took {elapsed:.1f} s"
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: the Hub at {silent_server} did not answer ")
    assert "raise RLIF_HUB_READ_TIMEOUT (seconds)" in lines[0]
    # GET requests are retried once (2 attempts); the upload's first request is a POST, which gets one attempt as
    # long as both attempts of a GET
    attempts = "within 1 s (1 attempt)" if command == "data upload" else "within 0.5 s (2 attempts)"
    assert attempts in lines[0]


@pytest.mark.parametrize("command", ["model download", "data download", "data upload"])
def test_closed_port_is_one_line(
    command: str,
    *,
    closed_port: str,
    env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", closed_port)
    assert _commands(tmp_path)[command](["--env-file", str(env)]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"error: cannot connect to the Hub at {closed_port} (")
    assert "connection refused (no server listening there) (2 attempts)" in err
    assert "HF_HUB_OFFLINE=1" in err and "Traceback" not in err


def test_unknown_host_is_one_line(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://rlif-no-such-host.invalid")
    monkeypatch.setenv("RLIF_HUB_RETRIES", "0")
    assert model_download_cli.main(["org/m", "--cache-dir", str(tmp_path / "c"), "--env-file", str(env)]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert "the host name rlif-no-such-host.invalid does not resolve (no network or DNS) (1 attempt)" in err


@pytest.mark.parametrize("command", ["model download", "data download", "data upload"])
def test_offline_mode_is_one_line(
    command: str, env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # what HF_HUB_OFFLINE=1 sets at import
    assert _commands(tmp_path)[command](["--env-file", str(env)]) == 1
    assert capsys.readouterr().err == (
        "error: HF_HUB_OFFLINE is set (or TRANSFORMERS_OFFLINE): this command talks to the Hub; run it without "
        "offline mode (jobs keep it on and read the cache)\n"
    )


def test_every_client_call_is_bounded(silent_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The library calls the commands use, each against the silent server: none hangs, each names its setting."""
    settings = HubSettings(endpoint=silent_server, limits=HubLimits(connect=1, read=0.5, retries=0))
    api = network.hub_api(settings)
    cache = tmp_path / "cache"
    calls: dict[str, Callable[[], object]] = {
        "repo_info": lambda: api.repo_info("o/r", revision="main"),
        "list_repo_tree": lambda: list(api.list_repo_tree("o/r", revision="main")),
        "create_repo": lambda: api.create_repo("o/r", exist_ok=True),
        "snapshot_download": lambda: huggingface_hub.snapshot_download("o/r", endpoint=silent_server, cache_dir=cache),
        "hf_hub_download": lambda: huggingface_hub.hf_hub_download(
            "o/r", "config.json", endpoint=silent_server, cache_dir=cache
        ),
    }
    # the metadata HEAD carries the client's own timeout, HF_HUB_ETAG_TIMEOUT (10 s unless set); lowered here
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_ETAG_TIMEOUT", 1)
    try:
        for name, call in calls.items():
            started = time.monotonic()
            with pytest.raises(HubConnectionError) as caught:
                call()
            assert time.monotonic() - started < 3.0, name
            setting = "HF_HUB_ETAG_TIMEOUT" if name == "hf_hub_download" else "RLIF_HUB_READ_TIMEOUT"
            assert f"raise {setting} (seconds)" in str(caught.value), name
            assert str(caught.value).startswith(f"the Hub at {silent_server} did not answer "), name
    finally:
        network.configure(HubLimits())


def test_upload_create_repo_is_bounded(silent_server: str, tmp_path: Path) -> None:
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "config.json").write_text("{}")
    plan = plan_upload(tmp_path / "f", "me/x", repo_type="model", commit_message="m")
    settings = HubSettings(endpoint=silent_server, limits=HubLimits(read=0.25, retries=3))
    started = time.monotonic()
    with pytest.raises(HubConnectionError, match=r"did not answer POST /api/repos/create within 1 s \(1 attempt\)"):
        execute_upload(plan, settings)
    elapsed = time.monotonic() - started
    assert 1.0 <= elapsed < 2.0, "a POST that may have reached the server is not retried, and waits 4 x 0.25 s"
    network.configure(HubLimits())


def test_default_limits_fail_a_silent_server_within_a_minute() -> None:
    limits = HubLimits()
    assert (limits.connect, limits.read, limits.retries) == (10.0, 10.0, 2)
    assert limits.silent_server_seconds() == 3 * 10 + 1 + 2
    assert limits.single_attempt_read() == 30
    assert limits.silent_server_seconds() < 60
    assert [limits.backoff(a) for a in range(1, 7)] == [1, 2, 4, 8, 8, 8]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("RLIF_HUB_READ_TIMEOUT", "0", "must be a positive number of seconds (default 10)"),
        ("RLIF_HUB_READ_TIMEOUT", "soon", "must be a positive number of seconds"),
        ("RLIF_HUB_CONNECT_TIMEOUT", "-1", "must be a positive number of seconds (default 10)"),
        ("RLIF_HUB_RETRIES", "2.5", "must be a whole number from 0 to 10 (default 2)"),
        ("RLIF_HUB_RETRIES", "50", "must be a whole number from 0 to 10"),
    ],
)
def test_bad_limit_settings_are_named(name: str, value: str, message: str) -> None:
    with pytest.raises(SettingError, match="^" + re.escape(f"{name}='{value}': {message}")):
        parse_limits({name: value})
    assert parse_limits({"RLIF_HUB_READ_TIMEOUT": "2.5", "RLIF_HUB_RETRIES": "0"}) == HubLimits(read=2.5, retries=0)


@pytest.mark.parametrize("where", ["environment", ".env"])
def test_token_with_smart_quotes_names_the_setting(
    where: str, env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    token = "\u201chf_secretTOKEN123\u201d"
    env_file = tmp_path / "rlif.env"
    if where == "environment":
        monkeypatch.setenv("HF_TOKEN", token)
        env_file.write_text("")
    else:
        env_file.write_text(f"HF_TOKEN={token}\n")
    code = model_download_cli.main(["org/m", "--cache-dir", str(tmp_path / "c"), "--env-file", str(env_file)])
    err = capsys.readouterr().err
    assert code == 2
    source = "environment" if where == "environment" else str(env_file)
    assert err == (
        f"error: HF_TOKEN (from {source}) has a non-ASCII character '\u201c' (U+201C) at position 1; smart quotes "
        "or a pasted non-breaking space? Write the value again with plain characters, without quotes\n"
    )
    assert "secretTOKEN" not in err


def test_plain_quotes_and_spaces_in_request_settings_are_named(tmp_path: Path) -> None:
    with pytest.raises(SettingError, match=r"^HF_TOKEN \(from environment\) has a quote at position 1;"):
        load_settings(tmp_path / "absent.env", environ={"HF_TOKEN": "'hf_abc'"})
    with pytest.raises(SettingError, match=r"^HF_DATA_REPO \(from environment\) has a space at position 5;"):
        load_settings(tmp_path / "absent.env", environ={"HF_DATA_REPO": "org/ data"})
    with pytest.raises(SettingError, match=r"^HF_ENDPOINT \(from environment\) has a non-ASCII character"):
        load_settings(tmp_path / "absent.env", environ={"HF_ENDPOINT": "http://hub\u00a0.example"})
    assert load_settings(tmp_path / "absent.env", environ={"HF_CACHE_DIR": "/data/caché"}).cache_dir == Path(
        "/data/caché"
    ), "paths may be non-ASCII: they never go into a request"


def _options(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from ((f"{name} {n}", a) for n, a in _options(sub))
        elif not isinstance(action, argparse._HelpAction | argparse._StoreTrueAction) and not action.required:
            yield action.dest, action


@pytest.mark.parametrize("module", [model_download_cli, data_download_cli, upload_cli])
def test_help_texts_show_defaults(module: object, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        module.parse_args(["--help"])
    assert "RLIF_HUB_READ_TIMEOUT (default 10)" in " ".join(capsys.readouterr().out.split())
    captured: dict[str, argparse.ArgumentParser] = {}
    original = argparse.ArgumentParser.parse_args

    def keep(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> argparse.Namespace:
        captured.setdefault("parser", self)
        raise SystemExit(0)

    argparse.ArgumentParser.parse_args = keep  # type: ignore[method-assign]
    try:
        with pytest.raises(SystemExit):
            module.parse_args([])
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    options = list(_options(captured["parser"]))
    assert options
    for name, action in options:
        assert "default" in (action.help or ""), f"{module.__name__}: {name} has no default in its help"


def test_model_download_without_arguments_says_what_it_fetches(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fetched: list[str] = []
    printed_before: list[str] = []

    def fake_download(repo_id: str, settings: HubSettings, **_: object) -> object:
        printed_before.append(capsys.readouterr().out)
        fetched.append(repo_id)
        raise ValueError("stop after the first model")

    monkeypatch.setattr(model_download_cli, "download_model", fake_download)
    assert model_download_cli.main(["--cache-dir", str(tmp_path / "c"), "--env-file", str(env)]) == 1
    assert fetched == ["Qwen/Qwen3-0.6B"]
    assert printed_before[0] == (
        "no model named: fetching all 4 Qwen3 models rlif trains (Qwen/Qwen3-0.6B, Qwen/Qwen3-1.7B, Qwen/Qwen3-4B, "
        f"Qwen/Qwen3-8B) into {tmp_path / 'c'}; name the ones you need to fetch fewer, e.g. "
        "python hf_model_download.py 1.7B\n"
    )
    assert model_download_cli.main(["1.7B", "--cache-dir", str(tmp_path / "c"), "--env-file", str(env)]) == 1
    assert fetched[-1] == "Qwen/Qwen3-1.7B" and printed_before[-1] == ""


@pytest.mark.slow
def test_default_limits_measured_against_a_silent_server(silent_server: str, tmp_path: Path) -> None:
    """With no RLIF_HUB_* set, the model download gives up on a silent server in under a minute, in one line."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "RLIF_HUB_"))}
    environ |= {"HF_ENDPOINT": silent_server, "HF_HOME": str(tmp_path / "hf_home")}
    command = [sys.executable, str(REPO_ROOT / "hf_model_download.py"), "1.7B", "--cache-dir", str(tmp_path / "c")]
    started = time.monotonic()
    done = subprocess.run(
        [*command, "--env-file", str(tmp_path / "absent.env")],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1
    assert elapsed < 60, f"{elapsed:.1f} s"
    assert done.stderr == (
        f"error: the Hub at {silent_server} did not answer GET /api/models/Qwen/Qwen3-1.7B/revision/main within "
        "10 s (3 attempts): it accepts connections but sends nothing; raise RLIF_HUB_READ_TIMEOUT (seconds) if it "
        "is just slow, else check HF_ENDPOINT\n"
    )


@pytest.fixture
def stalling_server() -> Iterator[str]:
    """Answers every request with headers announcing a body, then sends nothing more."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn = server.accept()[0]
            except OSError:
                return
            held.append(conn)
            conn.recv(65536)
            conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"id":')

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in held:
            conn.close()


def test_api_answer_that_stops_halfway_is_one_error(stalling_server: str) -> None:
    api = network.hub_api(HubSettings(endpoint=stalling_server, limits=HubLimits(read=0.5, retries=2)))
    started = time.monotonic()
    with pytest.raises(HubConnectionError) as caught:
        api.repo_info("o/r", revision="main")
    assert time.monotonic() - started < 2.0
    assert str(caught.value) == (
        f"the Hub at {stalling_server} began answering GET /api/models/o/r/revision/main and stopped sending for "
        "0.5 s; raise RLIF_HUB_READ_TIMEOUT (seconds) if it is just slow, else check HF_ENDPOINT"
    )
    network.configure(HubLimits())
