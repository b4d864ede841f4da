"""A minimal OpenAI-compatible chat server on 127.0.0.1 for the judge tests and benchmark: each instance answers
in one scripted way (logprobs, text, garbage, slowly, or with an HTTP error) and counts its requests."""

from __future__ import annotations

import json
import time
from typing import Any

from rlif.demo_judge import LoopbackChatServer, chat_reply


class JudgeServer(LoopbackChatServer):
    """A loopback chat server (``rlif.demo_judge.LoopbackChatServer``); ``mode`` picks the reply (see ``reply``)."""

    def __init__(self, mode: str = "logprobs", p_yes: float = 0.8, delay_s: float = 0.0, text: str = "Yes") -> None:
        super().__init__(model="judge")
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
