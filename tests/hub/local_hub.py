"""A real Hub-compatible server on 127.0.0.1 for download tests: olah 0.5.4 serving local git repos, offline.

olah is a test-only tool installed outside the project environment (its FastAPI pins clash with verl's stack);
the tests find its ``olah-cli`` through ``RLIF_OLAH_CLI`` or ``PATH`` and fail with install instructions when it
is missing. ``StallingProxy`` sits between the client and olah to cut a download off halfway, which is how the
resume test interrupts a transfer at a known point.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

OLAH_INSTALL_HINT = (
    "olah-cli not found: install the test hub outside the project venv, e.g. "
    "`python3 -m venv /tmp/olah-venv && /tmp/olah-venv/bin/pip install olah==0.5.4`, "
    "then export RLIF_OLAH_CLI=/tmp/olah-venv/bin/olah-cli"
)


def olah_cli() -> str:
    """Path of ``olah-cli``; fails the test (not skips) when absent, since CI must run these tests."""
    found = os.environ.get("RLIF_OLAH_CLI") or shutil.which("olah-cli")
    if not found or not Path(found).exists():
        pytest.fail(OLAH_INSTALL_HINT)
    return found


def free_port() -> int:
    """A port that was free a moment ago on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def git_repo(path: Path, files: dict[str, bytes], message: str = "add files") -> str:
    """Create or update a git repo (branch ``main``) with ``files`` committed; return the commit sha."""
    path.mkdir(parents=True, exist_ok=True)
    git = ["git", "-C", str(path), "-c", "user.email=tests@rlif.invalid", "-c", "user.name=rlif tests"]
    if not (path / ".git").exists():
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    for name, content in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(content)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", message], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


@contextmanager
def olah_server(mirrors: Path, workdir: Path) -> Iterator[str]:
    """Serve ``mirrors/<models|datasets>/<org>/<repo>`` git repos as a Hub at the yielded URL, then stop."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "olah.toml"
    config.write_text(
        "[basic]\n"
        'host = "127.0.0.1"\n'
        f"port = {port}\n"
        f'repos-path = "{workdir / "repos"}"\n'
        f'mirrors-path = ["{mirrors}"]\n'
        "[accessibility]\n"
        "offline = true\n"
    )
    log = (workdir / "olah.log").open("wb")
    process = subprocess.Popen([olah_cli(), "-c", str(config)], cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, process, workdir / "olah.log")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"olah exited with {process.returncode}:\n{log.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"olah did not listen on port {port} within {timeout} s:\n{log.read_text()[-2000:]}")


@dataclass
class StallingProxy:
    """HTTP proxy to ``upstream`` that can stall one file's GET halfway through its body.

    While ``stall_name`` is set, a GET whose path ends with it gets the headers and half the body, then the
    connection hangs until ``release`` is set (the test kills the client first). ``log`` records every request.
    """

    upstream: str
    stall_name: str | None = None
    log: list[tuple[str, str]] = field(default_factory=list)
    stalled: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Run the proxy on a free port; yield its URL."""
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                proxy.forward(self)

            def do_HEAD(self) -> None:
                proxy.forward(self)

            def log_message(self, format: str, *args: object) -> None:
                return

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            self.release.set()
            server.shutdown()
            server.server_close()

    def forward(self, handler: BaseHTTPRequestHandler) -> None:
        """Relay one request to the upstream hub and its response back, stalling when asked to."""
        self.log.append((handler.command, handler.path))
        host = self.upstream.removeprefix("http://")
        connection = http.client.HTTPConnection(host, timeout=60)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in {"host", "connection"}}
        connection.request(handler.command, handler.path, headers=headers)
        response = connection.getresponse()
        body = response.read()
        connection.close()
        handler.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in {"transfer-encoding", "connection", "content-length"}:
                handler.send_header(key, value)
        if handler.command == "HEAD":
            handler.send_header("Content-Length", response.getheader("content-length") or "0")
            handler.end_headers()
            return
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if self.stall_name and handler.command == "GET" and handler.path.endswith(self.stall_name):
            handler.wfile.write(body[: len(body) // 2])
            handler.wfile.flush()
            self.stalled.set()
            self.release.wait(timeout=120)
            handler.close_connection = True
            return
        handler.wfile.write(body)
