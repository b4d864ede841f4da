"""Every Hub request rlif makes has a connect and a read timeout, bounded retries, and a one-line error.

huggingface_hub (1.x) builds its shared ``httpx.Client`` with ``timeout=None``: ``repo_info``, ``list_repo_tree``,
``create_repo`` and commits wait forever on a server that accepts the connection and never answers, and its own
timeout variables (``HF_HUB_ETAG_TIMEOUT`` for the metadata ``HEAD``, ``HF_HUB_DOWNLOAD_TIMEOUT`` for file bodies)
do not reach those calls. A client-level ``timeout=`` does not help either: ``list_repo_tree`` passes
``timeout=None`` explicitly, which httpx takes as "no timeout". So rlif installs, through the client's public
``set_client_factory`` hook, a transport that fills in whatever timeout a request lacks (a timeout the client
passed itself, i.e. ``HF_HUB_ETAG_TIMEOUT`` / ``HF_HUB_DOWNLOAD_TIMEOUT``, is kept), retries a failed connection
or an unanswered idempotent request a bounded number of times with exponential backoff, and then raises
``HubConnectionError``, whose message names the endpoint, the request and the setting that changes the limit.

``HubConnectionError`` deliberately is not an httpx exception: the client treats httpx connection errors as "the
network is down, fall back to the local cache" and retries them again with its own, much longer limits (one
``hf_hub_download`` retry alone waits 60 s), which would turn a clear failure into minutes of silence.

A non-idempotent request (``POST``, ``PUT``: a commit, a repo creation) is retried only when the connection failed
before anything was sent; a read timeout there is final, since the server may have acted on it. Such a request
waits for its answer as long as a retried one may take in all (``retries + 1`` read timeouts): a large commit
can take the Hub a while to answer, and a silent server still fails within the same bound.

An API answer (``/api/...``) whose body stalls after its headers also ends in ``HubConnectionError``; file bodies
are left to the client, which resumes a stalled transfer itself (``HF_HUB_DOWNLOAD_TIMEOUT`` per read, 5 retries).

The client's own best-effort probe of ``/api/agent-harnesses`` (a user-agent detail, fetched at most once a day,
3 s timeout, every error ignored by the client) is sent once and its errors passed through untouched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import huggingface_hub

if TYPE_CHECKING:
    from rlif.hub.settings import HubSettings

CONNECT_TIMEOUT = "RLIF_HUB_CONNECT_TIMEOUT"
READ_TIMEOUT = "RLIF_HUB_READ_TIMEOUT"
RETRIES = "RLIF_HUB_RETRIES"
ETAG_TIMEOUT = "HF_HUB_ETAG_TIMEOUT"
DOWNLOAD_TIMEOUT = "HF_HUB_DOWNLOAD_TIMEOUT"

MAX_BACKOFF_SECONDS = 8.0
BEST_EFFORT_PATHS = frozenset({"/api/agent-harnesses"})
LIMITS_HELP = (
    "Hub requests give up after RLIF_HUB_CONNECT_TIMEOUT (default 10) seconds without a connection or "
    "RLIF_HUB_READ_TIMEOUT (default 10) seconds without an answer, retried RLIF_HUB_RETRIES (default 2) times."
)
"""For the command-line helps: the settings that bound every Hub request."""
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})


class HubConnectionError(RuntimeError):
    """The Hub could not be reached, or did not answer in time, after the allowed retries (one-line message)."""


class SettingError(ValueError):
    """A setting (environment variable or ``.env`` entry) has a value rlif cannot use; the message names it."""


@dataclass(frozen=True)
class HubLimits:
    """Timeouts and retries for requests that carry no timeout of their own.

    Attributes:
        connect: seconds to establish a connection (``RLIF_HUB_CONNECT_TIMEOUT``).
        read: seconds to wait for the next bytes of an answer (``RLIF_HUB_READ_TIMEOUT``); a request that is not
            retried after a timeout (``POST``) waits ``retries + 1`` times as long.
        retries: further attempts after the first (``RLIF_HUB_RETRIES``); waits 1, 2, 4, 8, 8 ... s between them.
    """

    connect: float = 10.0
    read: float = 10.0
    retries: int = 2

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return min(2.0 ** (attempt - 1), MAX_BACKOFF_SECONDS)

    def silent_server_seconds(self) -> float:
        """Longest a request can take against a server that accepts connections and never answers."""
        return self.single_attempt_read() + sum(self.backoff(a) for a in range(1, self.retries + 1))

    def single_attempt_read(self) -> float:
        """Read timeout of a request that gets one attempt only: the time all attempts of a retried one may take."""
        return (self.retries + 1) * self.read


def parse_limits(values: Mapping[str, str]) -> HubLimits:
    """Read ``RLIF_HUB_*`` from merged settings (environment and ``.env``); unset ones keep their defaults.

    Raises:
        SettingError: a value is not a positive number (timeouts) or an integer from 0 to 10 (retries).
    """
    defaults = HubLimits()
    return HubLimits(
        connect=_seconds(values, CONNECT_TIMEOUT, defaults.connect),
        read=_seconds(values, READ_TIMEOUT, defaults.read),
        retries=_count(values, RETRIES, defaults.retries),
    )


def _seconds(values: Mapping[str, str], name: str, default: float) -> float:
    raw = values.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise SettingError(f"{name}={raw!r}: must be a positive number of seconds (default {default:g})")
    return value


def _count(values: Mapping[str, str], name: str, default: int) -> int:
    raw = values.get(name)
    if raw is None:
        return default
    if not raw.strip().isdigit() or int(raw) > 10:
        raise SettingError(f"{name}={raw!r}: must be a whole number from 0 to 10 (default {default})")
    return int(raw)


@dataclass
class _State:
    """Process-wide, like huggingface_hub's own shared client: the limits in force and whether it is installed."""

    limits: HubLimits
    installed: bool = False


_STATE = _State(HubLimits())


def current_limits() -> HubLimits:
    """The limits in force for the next request."""
    return _STATE.limits


def configure(limits: HubLimits) -> None:
    """Use ``limits`` from now on, and route huggingface_hub's requests through ``BoundedTransport`` (once)."""
    _STATE.limits = limits
    if not _STATE.installed:
        install_client()


def hub_api(settings: HubSettings) -> huggingface_hub.HfApi:
    """An ``HfApi`` for ``settings`` whose requests (and every other huggingface_hub request) are bounded.

    Raises:
        HubConnectionError: offline mode is on (``HF_HUB_OFFLINE``, read by the client at import), which would
            otherwise surface as an ``OfflineModeIsEnabled`` traceback from the first request.
    """
    if huggingface_hub.constants.is_offline_mode():
        raise HubConnectionError(
            "HF_HUB_OFFLINE is set (or TRANSFORMERS_OFFLINE): this command talks to the Hub; run it without offline "
            "mode (jobs keep it on and read the cache)"
        )
    configure(settings.limits)
    return huggingface_hub.HfApi(endpoint=settings.endpoint, token=settings.token)


def install_client(transport: httpx.BaseTransport | None = None) -> None:
    """Make huggingface_hub build its shared client around ``BoundedTransport(transport)``.

    Args:
        transport: what actually sends requests; None is a plain ``httpx.HTTPTransport`` (tests pass a mock).
    """
    huggingface_hub.set_client_factory(client_factory(transport))
    _STATE.installed = True


def client_factory(transport: httpx.BaseTransport | None = None) -> Callable[[], httpx.Client]:
    """A factory for ``huggingface_hub.set_client_factory``: the client's own settings plus the bounded transport.

    The client's request hook (offline mode, request ids) lives in a private module; it is kept when present.
    """
    try:
        from huggingface_hub.utils._http import hf_request_event_hook

        hooks = {"request": [hf_request_event_hook]}
    except ImportError:
        hooks = {}

    def factory() -> httpx.Client:
        inner = transport if transport is not None else httpx.HTTPTransport()
        return httpx.Client(transport=BoundedTransport(inner), event_hooks=hooks, follow_redirects=True, timeout=None)

    return factory


class BoundedTransport(httpx.BaseTransport):
    """Fills in missing timeouts, retries with backoff, and turns the final failure into ``HubConnectionError``."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` with at most ``retries + 1`` attempts (see the module docstring for which are retried)."""
        if request.url.path in BEST_EFFORT_PATHS:
            return self._inner.handle_request(request)
        limits = current_limits()
        given = dict(request.extensions.get("timeout") or {})
        read_setting = READ_TIMEOUT if given.get("read") is None else _client_setting(request)
        idempotent = request.method in _IDEMPOTENT
        read = limits.read if idempotent else limits.single_attempt_read()
        timeout = {
            "connect": given.get("connect") or limits.connect,
            "read": given.get("read") or read,
            "write": given.get("write") or read,
            "pool": given.get("pool") or limits.connect,
        }
        request.extensions = {**request.extensions, "timeout": timeout}
        replayable = isinstance(request.stream, httpx.ByteStream)
        attempts = limits.retries + 1
        for attempt in range(1, attempts + 1):
            try:
                response = self._inner.handle_request(request)
            except (httpx.ConnectError, httpx.ConnectTimeout) as err:
                retry = replayable
                failure = err
            except httpx.TimeoutException as err:
                retry = replayable and idempotent
                failure = err
            else:
                if not request.url.path.startswith("/api/"):  # file bodies: the client resumes a stalled transfer
                    return response
                stream = _BodyGuard(response.stream, lambda err: _describe_body(request, err, timeout, read_setting))
                return httpx.Response(
                    response.status_code, headers=response.headers, stream=stream, extensions=response.extensions
                )
            if not retry or attempt == attempts:
                raise HubConnectionError(_describe(request, failure, attempt, timeout, read_setting)) from failure
            time.sleep(limits.backoff(attempt))
        raise AssertionError("unreachable")  # the loop returns or raises

    def close(self) -> None:
        """Close the inner transport's connections."""
        self._inner.close()


class _BodyGuard(httpx.SyncByteStream):
    """An API answer's body whose stall (headers sent, then nothing) ends in ``HubConnectionError`` too.

    The client reads such bodies whole, outside the transport, and would otherwise raise a bare httpx timeout.
    """

    def __init__(self, stream: httpx.SyncByteStream, describe: Callable[[Exception], str]) -> None:
        self._stream = stream
        self._describe = describe

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as err:
            raise HubConnectionError(self._describe(err)) from err

    def close(self) -> None:
        """Close the underlying stream (returns the connection to the pool)."""
        self._stream.close()


def _client_setting(request: httpx.Request) -> str:
    """The huggingface_hub variable behind a timeout the client set itself."""
    return ETAG_TIMEOUT if request.method == "HEAD" else DOWNLOAD_TIMEOUT


def _describe_body(request: httpx.Request, err: Exception, timeout: Mapping[str, float], read_setting: str) -> str:
    """One line for an answer that started and then stopped (not retried: the request may have had effects)."""
    endpoint = f"{request.url.scheme}://{request.url.netloc.decode('ascii', 'replace')}"
    if isinstance(err, httpx.TimeoutException):
        stall = f"stopped sending for {timeout['read']:g} s"
        hint = f"raise {read_setting} (seconds) if it is just slow, else check HF_ENDPOINT"
    else:
        stall = f"broke off ({type(err).__name__}: {err})"
        hint = "check HF_ENDPOINT and the network"
    return f"the Hub at {endpoint} began answering {request.method} {request.url.path} and {stall}; {hint}"


def _describe(
    request: httpx.Request, err: Exception, attempts: int, timeout: Mapping[str, float], read_setting: str
) -> str:
    """One line: what failed, where, after how many attempts, and which setting or check helps."""
    endpoint = f"{request.url.scheme}://{request.url.netloc.decode('ascii', 'replace')}"
    what = f"{request.method} {request.url.path}"  # no query string: signed CDN URLs carry credentials there
    tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
    offline = "set HF_HUB_OFFLINE=1 to use only files already in the cache"
    if isinstance(err, httpx.ConnectTimeout):
        return (
            f"cannot connect to the Hub at {endpoint} ({what}): no connection within {timeout['connect']:g} s "
            f"({tries}); check HF_ENDPOINT and the network, raise {CONNECT_TIMEOUT} if the link is just slow, or "
            f"{offline}"
        )
    if isinstance(err, httpx.ConnectError):
        text = str(err)
        if "Name or service not known" in text or "name resolution" in text or "nodename nor servname" in text:
            reason = f"the host name {request.url.host} does not resolve (no network or DNS)"
        elif "refused" in text.lower():
            reason = "connection refused (no server listening there)"
        else:
            reason = text or type(err).__name__
        return (
            f"cannot connect to the Hub at {endpoint} ({what}): {reason} ({tries}); check HF_ENDPOINT and the "
            f"network, or {offline}"
        )
    if isinstance(err, httpx.WriteTimeout):
        return (
            f"the Hub at {endpoint} stopped accepting data for {what} for {timeout['write']:g} s ({tries}); "
            f"raise {READ_TIMEOUT} if the link is just slow"
        )
    return (
        f"the Hub at {endpoint} did not answer {what} within {timeout['read']:g} s ({tries}): it accepts "
        f"connections but sends nothing; raise {read_setting} (seconds) if it is just slow, else check HF_ENDPOINT"
    )
