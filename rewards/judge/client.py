"""A bounded, synchronous client for an OpenAI-compatible chat endpoint (a vLLM server or an external URL).

verl's ``remote`` reward manager runs only synchronous reward functions, and its generative-reward client has no
timeout (16 retries, ``total=None``), so a stuck judge would stall a whole step. This client is the opposite: every
call has a deadline that bounds the caller's wait whatever the server does (slow, silent, garbage, closed port),
retries only while the deadline allows, and runs its requests on one process-wide thread pool so that the number
of requests in flight per reward worker process is bounded. A call that cannot get a verdict in time returns None;
it never raises on a network or server failure and never turns one into a score.

Only the standard library is used (``urllib``): reward workers import nothing beyond ``rewards``' own
dependencies, and the socket timeout is the only timer (no signals, which work on the main thread only).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

YES_TOKENS = frozenset({"yes", "Yes", "YES", " yes", " Yes", " YES"})
NO_TOKENS = frozenset({"no", "No", "NO", " no", " No", " NO"})

_SCORE = re.compile(r"(?i)\bscore\s*[:=]\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?))?")
_LEADING_VERDICT = re.compile(r"(?i)^\W*(yes|no)\b")


@dataclass(frozen=True)
class JudgeSettings:
    """How to reach the judge and how long to wait for it.

    Attributes:
        url: the server's base URL up to ``/v1`` (``http://host:8000/v1``); ``/chat/completions`` is appended.
        model: the served model name (also part of the cache key).
        timeout_s: the most one judged sample may wait, all its requests and retries together.
        retries: extra attempts after a failed request, each only if the deadline leaves time for it.
        concurrency: requests in flight per process (the size of the shared thread pool).
        use_logprobs: ask for ``top_logprobs`` and read the probability of "Yes" against "No"; a reply without
            them falls back to the parsed verdict.
        max_tokens: tokens the judge may write when no logprobs are read (a parsed score needs a few).
    """

    url: str
    model: str
    timeout_s: float = 30.0
    retries: int = 1
    concurrency: int = 8
    use_logprobs: bool = True
    max_tokens: int = 16

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"judge_url must be an http(s) URL ending in /v1, got {self.url!r}")
        if not self.model:
            raise ValueError("judge_model must name the served model")
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            raise ValueError(f"judge_timeout_s must be a positive number of seconds, got {self.timeout_s!r}")
        if not (isinstance(self.retries, int) and 0 <= self.retries <= 5):
            raise ValueError(f"judge_retries must be an integer in [0, 5], got {self.retries!r}")
        if not (isinstance(self.concurrency, int) and 1 <= self.concurrency <= 256):
            raise ValueError(f"judge_concurrency must be an integer in [1, 256], got {self.concurrency!r}")


def probability_from_logprobs(top_logprobs: Any) -> float | None:
    """P("Yes") / (P("Yes") + P("No")) over the first generated token's ``top_logprobs`` (case and a leading space
    folded), or None when neither answer is among them."""
    if not isinstance(top_logprobs, list):
        return None
    yes = no = 0.0
    for entry in top_logprobs:
        if not isinstance(entry, dict):
            continue
        token, logprob = entry.get("token"), entry.get("logprob")
        if not isinstance(token, str) or not isinstance(logprob, int | float) or not math.isfinite(logprob):
            continue
        if token in YES_TOKENS:
            yes += math.exp(logprob)
        elif token in NO_TOKENS:
            no += math.exp(logprob)
    if yes + no <= 0.0:
        return None
    return yes / (yes + no)


def parse_verdict(text: Any) -> float | None:
    """A probability from the judge's text: ``Score: k`` or ``Score: k/n`` (k/10 without n, clipped to [0, 1]),
    else a leading "Yes" (1) or "No" (0); None for anything else (garbage is no verdict, not a zero)."""
    if not isinstance(text, str):
        return None
    match = _SCORE.search(text)
    if match:
        value = float(match.group(1))
        scale = float(match.group(2)) if match.group(2) else 10.0
        if scale <= 0:
            return None
        return min(max(value / scale, 0.0), 1.0)
    match = _LEADING_VERDICT.match(text)
    if match:
        return 1.0 if match.group(1).lower() == "yes" else 0.0
    return None


def read_reply(body: bytes, *, use_logprobs: bool) -> float | None:
    """The judge's probability from a chat-completions reply body, or None when the reply holds no verdict."""
    try:
        reply = json.loads(body)
        choice = reply["choices"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(choice, dict):
        return None
    if use_logprobs:
        content = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
        if isinstance(content, list) and content and isinstance(content[0], dict):
            probability = probability_from_logprobs(content[0].get("top_logprobs"))
            if probability is not None:
                return probability
    message = choice.get("message")
    return parse_verdict(message.get("content") if isinstance(message, dict) else None)


def _post(settings: JudgeSettings, messages: list[dict[str, str]], timeout_s: float) -> bytes:
    payload: dict[str, Any] = {"model": settings.model, "messages": messages, "temperature": 0.0}
    if settings.use_logprobs:
        payload.update(max_tokens=1, logprobs=True, top_logprobs=5)
    else:
        payload["max_tokens"] = settings.max_tokens
    request = urllib.request.Request(
        settings.url.rstrip("/") + "/chat/completions",
        data=json.dumps(payload).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {os.environ.get('JUDGE_API_KEY', 'none')}",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        return response.read()


def ask(settings: JudgeSettings, messages: list[dict[str, str]], deadline: float) -> float | None:
    """One verdict, retried while ``deadline`` (a ``time.monotonic`` instant) allows; None when none came."""
    for _ in range(settings.retries + 1):
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            return None
        try:
            body = _post(settings, messages, remaining)
        except (
            OSError,
            urllib.error.URLError,
            http.client.HTTPException,
            ValueError,
        ):  # refused, reset, timed out, HTTP error status
            continue
        verdict = read_reply(body, use_logprobs=settings.use_logprobs)
        if verdict is not None:
            return verdict
    return None


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(concurrency: int) -> ThreadPoolExecutor:
    """The process-wide pool of ``concurrency`` threads (one per setting, made once)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(concurrency)
        if pool is None:
            pool = _POOLS[concurrency] = ThreadPoolExecutor(concurrency, thread_name_prefix="rlif-judge")
        return pool


def ask_all(settings: JudgeSettings, conversations: list[list[dict[str, str]]]) -> list[float | None]:
    """A verdict per conversation, asked concurrently; the caller waits at most ``settings.timeout_s``.

    A request still running at the deadline is abandoned (its socket timeout ends it soon after) and its
    conversation gets None.
    """
    deadline = time.monotonic() + settings.timeout_s
    pool = _pool(settings.concurrency)
    futures: list[Future] = [pool.submit(ask, settings, conversation, deadline) for conversation in conversations]
    wait_futures(futures, timeout=max(0.0, deadline - time.monotonic()))
    out: list[float | None] = []
    for future in futures:
        if future.done() and future.exception() is None:
            out.append(future.result())
        else:
            future.cancel()
            out.append(None)
    return out


class VerdictCache:
    """Verdicts keyed by judge model, conversation and mode: bounded and in-process, optionally also on disk.

    A group's responses are often identical (short answers, collapsed policies) and evaluation re-scores the same
    responses, so a hit saves a network round trip. Only verdicts are stored; a missing verdict is asked again.
    """

    def __init__(self, size: int, directory: str = "") -> None:
        self.size = size
        self.directory = Path(directory) if directory else None
        self._items: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(settings: JudgeSettings, conversation: list[dict[str, str]]) -> str:
        """The cache key: a hash of the model, the mode and the whole conversation (prompt and response in it)."""
        text = json.dumps([settings.model, settings.use_logprobs, conversation], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> float | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        if self.directory is not None:
            path = self.directory / key[:2] / f"{key}.json"
            try:
                value = float(json.loads(path.read_text())["p"])
            except (OSError, ValueError, KeyError, TypeError):
                return None
            self._remember(key, value)
            return value
        return None

    def put(self, key: str, value: float) -> None:
        self._remember(key, value)
        if self.directory is not None:
            path = self.directory / key[:2] / f"{key}.json"
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
                tmp.write_text(json.dumps({"p": value}))
                os.replace(tmp, path)
            except OSError:  # a full or read-only disk loses the on-disk copy only
                pass

    def _remember(self, key: str, value: float) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
