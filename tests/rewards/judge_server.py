"""A minimal OpenAI-compatible chat server on 127.0.0.1 for the judge tests and benchmark: each instance answers
in one scripted way (logprobs, text, garbage, slowly, or with an HTTP error) and counts its requests.

Run as a program with ``vllm serve``'s arguments (``serve MODEL --served-model-name NAME --host H --port P ...``), it
serves until killed: the Slurm test starts it through the job script's judge server step in place of vLLM."""

from __future__ import annotations

import argparse
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JudgeServer:
    """A threaded HTTP server in a daemon thread; ``mode`` picks the reply (see ``_reply``)."""

    def __init__(
        self,
        mode: str = "logprobs",
        p_yes: float = 0.8,
        delay_s: float = 0.0,
        text: str = "Yes",
        *,
        port: int = 0,
        model: str = "judge-test",
    ) -> None:
        self.mode, self.p_yes, self.delay_s, self.text, self.model = mode, p_yes, delay_s, text, model
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/v1/models":
                    self.send_error(404)
                    return
                payload = json.dumps({"object": "list", "data": [{"id": owner.model, "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with owner._lock:
                    owner.requests += 1
                    owner.bodies.append(body)
                if owner.delay_s:
                    time.sleep(owner.delay_s)
                status, payload = owner._reply(body)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (timeout) before the reply
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 drops SYNs under a burst, adding 1 s retransmits

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _reply(self, body: dict[str, Any]) -> tuple[int, bytes]:
        if self.mode == "error":
            return 500, b'{"error": "overloaded"}'
        if self.mode == "garbage":
            return 200, b"<html>not json"
        if self.mode == "nonsense":
            return 200, json.dumps({"choices": [{"message": {"content": "I cannot say."}}]}).encode()
        message = {"role": "assistant", "content": self.text}
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "stop"}
        if self.mode == "logprobs" and body.get("logprobs"):
            top = [
                {"token": "Yes", "logprob": math.log(self.p_yes)},
                {"token": "No", "logprob": math.log(1.0 - self.p_yes)},
            ]
            choice["logprobs"] = {"content": [{"token": "Yes", "logprob": top[0]["logprob"], "top_logprobs": top}]}
        return 200, json.dumps({"choices": [choice]}).encode()

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    """Serve like ``vllm serve MODEL --served-model-name NAME --host H --port P`` until killed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("model")
    parser.add_argument("--served-model-name")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args()
    server = JudgeServer(port=args.port, model=args.served_model_name or args.model)
    print(f"judge_server: {args.served_model_name or args.model} at {server.url}", flush=True)
    server.httpd.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
