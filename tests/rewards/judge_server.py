"""A minimal OpenAI-compatible chat server on 127.0.0.1 for the judge tests and benchmark: each instance answers
in one scripted way (logprobs, text, garbage, slowly, or with an HTTP error) and counts its requests.

Run as a program with ``vllm serve``'s arguments (``serve MODEL --served-model-name NAME --host H --port P ...``), it
serves until killed: the Slurm test starts it through the job script's judge server step in place of vLLM."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from rlif.demo_judge import LoopbackChatServer, chat_reply


class JudgeServer(LoopbackChatServer):
    """A loopback chat server (``rlif.demo_judge.LoopbackChatServer``); ``mode`` picks the reply (see ``reply``)."""

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
        super().__init__(model=model, port=port)
        self.mode, self.p_yes, self.delay_s, self.text = mode, p_yes, delay_s, text

    def reply(self, body: dict[str, Any]) -> tuple[int, bytes]:
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.mode == "error":
            return 500, b'{"error": "overloaded"}'
        if self.mode == "garbage":
            return 200, b"<html>not json"
        if self.mode == "nonsense":
            return 200, json.dumps({"choices": [{"message": {"content": "I cannot say."}}]}).encode()
        with_logprobs = self.mode == "logprobs" and body.get("logprobs")
        return 200, chat_reply(self.text, self.p_yes if with_logprobs else None)


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
