"""A loopback OpenAI-compatible chat server, and the CPU demo's stand-in judge built on it.

The ``judge`` reward family (``rewards.judge``) asks an OpenAI-compatible endpoint. The CPU demo has no real judge
model to serve (its model is random and its tokenizer has no "Yes" token: docs/verl-integration.md), so by default
it starts ``StandInJudge`` on 127.0.0.1 for the run's duration. The stand-in is **not a judge**: it weighs nothing
in the request. Its answer is a fixed function of a hash of the request's messages, so it is deterministic (the
same constraint and response always get the same probability), spread over (0.05, 0.95) (a GRPO group of different
responses gets different rewards), and shaped like a vLLM server's reply with ``logprobs``: a one-token "Yes" or "No"
with both in ``top_logprobs``. It exercises the family's client, gate, cache and the replay buffer's handling of
verdicts inside verl's loop; it says nothing about the responses. ``python -m rlif.cpu_demo --judge-url URL
--judge-model NAME`` puts a real endpoint in its place.

``LoopbackChatServer`` is the plumbing shared with the judge family's tests, whose servers answer in scripted ways
(slow, garbage, HTTP errors). Only the standard library is used.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from abc import ABC, abstractmethod
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

STAND_IN_MODEL = "rlif-stand-in-judge"
"""The model name the stand-in serves (the reward's ``judge_model``; part of the verdict cache key)."""

P_YES_RANGE = (0.05, 0.95)
"""The stand-in's probabilities of "Yes": never certain, so both tokens are always among the ``top_logprobs``."""


class LoopbackChatServer(ABC):
    """A threaded HTTP server on 127.0.0.1 (an ephemeral port by default) in a daemon thread, used as a context manager.

    ``POST`` (``/v1/chat/completions``) answers with ``reply``; ``GET /v1/models`` lists ``model`` as vLLM and
    OpenAI do, so the URL can be checked by hand. Every chat request is counted and its body kept.

    Args:
        model: the served model name.
        port: the port to listen on (0: an ephemeral one).
    """

    def __init__(self, model: str = STAND_IN_MODEL, port: int = 0) -> None:
        self.model = model
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                with owner._lock:
                    owner.requests += 1
                    owner.bodies.append(body)
                self._send(*owner.reply(body if isinstance(body, dict) else {}))

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    listing = {"object": "list", "data": [{"id": owner.model, "object": "model"}]}
                    self._send(200, json.dumps(listing).encode())
                else:
                    self._send(404, b'{"error": "not found"}')

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (its timeout) before the reply
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
        """The base URL the judge family takes (``judge_url``)."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @abstractmethod
    def reply(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """The HTTP status and JSON body answering one chat request (called on the request's own thread)."""

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_reply(content: str, p_yes: float | None = None) -> bytes:
    """A chat-completions body with one choice saying ``content``; with ``p_yes``, the first token's ``logprobs``
    give "Yes" probability ``p_yes`` and "No" the rest, as a vLLM server answering ``logprobs=true`` does."""
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if p_yes is not None:
        top = [{"token": "Yes", "logprob": math.log(p_yes)}, {"token": "No", "logprob": math.log(1.0 - p_yes)}]
        chosen = top[0] if content == "Yes" else top[1]
        choice["logprobs"] = {"content": [{**chosen, "top_logprobs": top}]}
    return json.dumps({"object": "chat.completion", "choices": [choice]}).encode()


def stand_in_probability(messages: Any) -> float:
    """The stand-in's P("Yes") for a request's messages: a hash of their JSON mapped onto ``P_YES_RANGE``."""
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).digest()
    unit = int.from_bytes(digest[:8], "big") / 2**64
    low, high = P_YES_RANGE
    return low + (high - low) * unit


class StandInJudge(LoopbackChatServer):
    """The CPU demo's stand-in judge (see the module docstring: deterministic, not a judge)."""

    def reply(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """Answer "Yes" or "No" by ``stand_in_probability``, with ``logprobs`` when the request asks for them."""
        p_yes = stand_in_probability(body.get("messages"))
        content = "Yes" if p_yes >= 0.5 else "No"
        return 200, chat_reply(content, p_yes if body.get("logprobs") else None)
