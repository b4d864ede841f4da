"""Secrets never printed, and ``.env`` read one way: the first-day cases of the hub front ends, each with its message.

The Hub is a real HTTP server on loopback (a 404 that quotes the request's ``Authorization`` header back, and a
server that accepts connections and never answers), so the whole client stack, httpx included, is exercised.
"""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from rlif.envfile import EnvFileError, check_env_file, hub_cache
from rlif.hub.settings import load_settings
from rlif.hub_cli import data_download as data_download_cli
from rlif.hub_cli import model_download as model_download_cli
from rlif.redaction import one_line, redact, write_traceback

REPO_ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_SecretToken0123456789abcdef"
README_EXPORT = "export $(grep -v '^#' .env | xargs)"
"""How the IF group's README loads ``.env`` into a shell."""


# ---- redaction ----------------------------------------------------------------------------------------------------


def test_redaction_covers_every_shape_a_token_takes() -> None:
    request = httpx.Request("GET", "https://hub.example/api", headers={"Authorization": f"Bearer {TOKEN}"})
    texts = [
        f"401 for {request!r} headers={dict(request.headers)!r}",
        f"'authorization': 'Bearer {TOKEN}\\r'",
        f"Authorization: Bearer {TOKEN}",
        "https://user:s3cretpass@mirror.example/org/repo",
        "token=abc123secret&x=1",
        f"{TOKEN}\r",
    ]
    for text in texts:
        out = redact(text, [TOKEN + "\r"])
        assert TOKEN not in out and "s3cretpass" not in out and "abc123secret" not in out, out
        assert "<redacted>" in out


def test_secret_values_are_those_of_secret_named_variables_only() -> None:
    """A name is secret by a whole word of it: ``TOKENIZERS_PARALLELISM=false`` is a setting, and redacting its
    value would turn every "false" of a message into ``<redacted>``."""
    from rlif.redaction import secret_values

    environ = {
        "HF_TOKEN": TOKEN,
        "WANDB_API_KEY": "wandbkey123",
        "AWS_SECRET_ACCESS_KEY": "awssecret",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HOME": "/home/me/hf",
    }
    assert sorted(secret_values(environ)) == sorted([TOKEN, "wandbkey123", "awssecret"])
    assert redact("trainer.use_v1=false", secret_values(environ)) == "trainer.use_v1=false"


def test_chained_exceptions_are_one_redacted_line(tmp_path: Path) -> None:
    try:
        try:
            raise httpx.ConnectError(f"failed for Bearer {TOKEN}")
        except httpx.ConnectError as inner:
            raise RuntimeError("hub unreachable") from inner
    except RuntimeError as err:
        line = one_line(err, [TOKEN], causes=True)
        assert one_line(err, [TOKEN]) == "hub unreachable"  # rlif's and builtin messages stand alone by default
        path = write_traceback(err, "test", [TOKEN], directory=tmp_path)
    assert line == "hub unreachable (caused by ConnectError: failed for Bearer <redacted>)"
    text = path.read_text()
    assert TOKEN not in text and "ConnectError" in text and "RuntimeError: hub unreachable" in text
    assert oct(path.stat().st_mode & 0o777) == "0o600"


# ---- .env as bash and python read it ---------------------------------------------------------------------------------

ENV_CASES = [
    ("HF_CACHE_DIR=$HOME/hf_cache\n", "line 1: HF_CACHE_DIR: has '$' or '`', which bash expands and python-dotenv "
     "does not; write the path out in full (e.g. /home/me/hf_cache, not $HOME/hf_cache)"),
    ("WANDB_ENTITY=my team\n", "line 1: WANDB_ENTITY: has a space (bash runs the word after it as a command; an "
     "inline comment is one too); write the value without spaces and put comments on their own line"),
    ("# hub\nKEY = value\n", "line 2: KEY: spaces around '=' (bash then runs a command instead of setting KEY); "
     "write KEY=value"),
    ("HF_DATA_REPO='org/data'\n", "line 1: HF_DATA_REPO: has quotes, which bash, python-dotenv and xargs strip "
     "differently; write the value without them"),
    ("just words\n", "line 1: not a KEY=value line (bash would run it as a command); comment it out with #"),
    ("WANDB_API_KEY=abc&def\n", "line 1: WANDB_API_KEY: has one of ; & | < > ( ), which bash reads as a command "
     "separator, pipe, redirection or subshell and python-dotenv keeps as text; write the value without it, or "
     "export it in the shell instead of .env"),
    ("RLIF_X=a;echo ran\n", "line 1: RLIF_X: has one of ; & | < > ( ), which bash reads as a command separator, "
     "pipe, redirection or subshell and python-dotenv keeps as text; write the value without it, or export it in "
     "the shell instead of .env"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), ENV_CASES)
def test_env_lines_bash_reads_differently_are_refused(tmp_path: Path, text: str, message: str) -> None:
    env = tmp_path / ".env"
    env.write_text(text)
    with pytest.raises(EnvFileError) as info:
        check_env_file(env)
    assert str(info.value) == f"{env} {message}"


def test_crlf_env_names_the_line_and_the_fix_without_the_value(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_bytes(f"HF_TOKEN={TOKEN}\r\nHF_DATA_REPO=org/data\r\n".encode())
    with pytest.raises(EnvFileError) as info:
        check_env_file(env)
    assert str(info.value) == (
        f"{env} line 1: ends in a carriage return (Windows CRLF line endings): bash reads every value with a "
        f"trailing \\r; convert the file with `sed -i 's/\\r$//' {env}`"
    )


def _front_end(args: list[str], cwd: Path, shell_prefix: str = "", **env: str) -> subprocess.CompletedProcess:
    """Run ``hf_data_download.py`` as a user would, optionally after ``shell_prefix`` in the same bash."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "RLIF_"))}
    environ.update(env, PYTHONPATH=str(REPO_ROOT), HF_HUB_DISABLE_TELEMETRY="1")
    command = f"{shell_prefix}\nexec {sys.executable} {REPO_ROOT / 'hf_data_download.py'} " + " ".join(args)
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=environ, capture_output=True, text=True, timeout=120, check=False
    )


def test_readme_export_of_a_crlf_env_never_prints_the_token(tmp_path: Path) -> None:
    """The README's export line on a CRLF file: every value ends in \\r; the token must not appear anywhere."""
    (tmp_path / ".env").write_bytes(f"HF_TOKEN={TOKEN}\r\nHF_DATA_REPO=org/data\r\n".encode())
    (tmp_path / "clean.env").write_text("")
    done = _front_end(["--env-file", "clean.env", "--out-dir", "out"], tmp_path, README_EXPORT)
    assert done.returncode == 2
    assert TOKEN not in done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "error: HF_DATA_REPO (from environment) has a carriage return (\\r) at the end; the .env file has Windows "
        "(CRLF) line endings? Convert it with `sed -i 's/\\r$//' .env` and export it again"
    ]
    done = _front_end(["--out-dir", "out", "--env-file", ".env"], tmp_path)
    assert done.returncode == 2 and TOKEN not in done.stderr
    assert "line 1: ends in a carriage return (Windows CRLF line endings)" in done.stderr


def test_token_with_surrounding_space_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        load_settings(tmp_path / "absent.env", environ={"HF_TOKEN": f" {TOKEN}"})
    assert str(info.value) == "HF_TOKEN (from environment) has leading whitespace; write the value without it"


def test_missing_settings_name_the_env_file_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = tmp_path / "elsewhere" / ".env"
    assert model_download_cli.main(["org/m", "--env-file", str(env)]) == 2
    assert capsys.readouterr().err == (
        "error: no cache directory: pass --cache-dir or set HF_CACHE_DIR (looked in the environment or "
        f"{env}, which does not exist)\n"
    )


def test_helpers_read_the_repository_env_from_any_directory() -> None:
    assert data_download_cli.parse_args([]).env_file == REPO_ROOT / ".env"


# ---- one Hub cache -------------------------------------------------------------------------------------------------


def test_hub_cache_variables_that_disagree_are_refused(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(f"HF_CACHE_DIR={tmp_path / 'mine'}\n")
    with pytest.raises(ValueError) as info:
        load_settings(env, environ={"HF_HUB_CACHE": str(tmp_path / "shell")})
    assert str(info.value) == (
        f"HF_CACHE_DIR={tmp_path / 'mine'} and HF_HUB_CACHE={tmp_path / 'shell'} name different Hub caches: the "
        "downloads fill HF_CACHE_DIR and jobs read HF_HUB_CACHE; unset HF_HUB_CACHE in your shell or set "
        f"HF_CACHE_DIR to the same directory (settings read from {env} or the environment)"
    )
    assert load_settings(tmp_path / "x.env", environ={"HF_HUB_CACHE": str(tmp_path / "c")}).cache_dir == tmp_path / "c"


def test_relative_hub_cache_is_taken_from_the_repository_root(tmp_path: Path) -> None:
    path, label = hub_cache({"HF_CACHE_DIR": "hf_cache"}, tmp_path / ".env")
    assert path == REPO_ROOT / "hf_cache"
    assert (
        label
        == f"HF_CACHE_DIR from {tmp_path / '.env'} or the environment, relative to the repository root {REPO_ROOT}"
    )


# ---- endpoints, and a real Hub on loopback ---------------------------------------------------------------------------


def test_endpoint_without_scheme_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        load_settings(tmp_path / "x.env", environ={"HF_ENDPOINT": "hub.example.org"})
    assert str(info.value) == (
        "HF_ENDPOINT (from environment) is not an http(s) URL; write it with its scheme, e.g. https://hub.example.org"
    )
    assert load_settings(tmp_path / "x.env", environ={"HF_ENDPOINT": "http://h:1/"}).endpoint == "http://h:1"


class _EchoAuth404(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f'{{"error": "Repository Not Found", "seen": "{self.headers.get("Authorization")}"}}'.encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_HEAD = do_GET  # noqa: N815 - the http.server hook's name

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_hub() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoAuth404)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def silent_hub() -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_a_404_hub_quoting_the_token_prints_one_line_without_it(tmp_path: Path, echo_hub: str) -> None:
    done = _front_end(
        ["--repo-id", "org/data", "--out-dir", "out"], tmp_path, HF_TOKEN=TOKEN, HF_ENDPOINT=echo_hub + "/"
    )
    assert done.returncode == 1, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: 404 Client Error. Repository Not Found for url: ") and "Traceback" not in line
    assert "/api/datasets/org/data/revision/main." in line and "//api" not in line  # the trailing slash is dropped


def test_a_silent_hub_is_one_line_without_the_token(tmp_path: Path, silent_hub: str) -> None:
    done = _front_end(
        ["--repo-id", "org/data", "--out-dir", "out"],
        tmp_path,
        HF_TOKEN=TOKEN,
        HF_ENDPOINT=silent_hub,
        RLIF_HUB_READ_TIMEOUT="0.5",
        RLIF_HUB_RETRIES="0",
    )
    assert done.returncode == 1
    assert TOKEN not in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1


def test_an_unexpected_error_is_one_line_and_a_redacted_traceback_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(*_: object, **__: object) -> None:
        try:
            raise httpx.ConnectError("refused", request=httpx.Request("GET", f"https://u:{TOKEN}@hub.example/x"))
        except httpx.ConnectError as err:
            raise KeyError(f"headers {{'authorization': 'Bearer {TOKEN}'}}") from err

    monkeypatch.setattr(data_download_cli, "download_data", boom)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    code = data_download_cli.main(["--repo-id", "org/data", "--env-file", str(tmp_path / "x.env")])
    err = capsys.readouterr().err
    assert code == 1 and TOKEN not in err
    (trace,) = tmp_path.glob("rlif-hf_data_download-*.traceback.txt")
    assert err == (
        "error: KeyError: \"headers {'authorization': '<redacted>'}\" (caused by ConnectError: refused); "
        f"unexpected, redacted traceback in {trace}\n"
    )
    assert TOKEN not in trace.read_text() and "KeyError" in trace.read_text()
