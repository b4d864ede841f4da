"""An evaluated model behind vLLM's OpenAI-compatible server, for every harness that speaks that API.

``python -m rlif.eval serve <checkpoint or model>`` locates the model as ``generate`` does (a verl checkpoint is
merged first, ``rlif.eval.model_source``) and starts ``vllm serve`` on it with the run's thinking setting as the
server's default ``chat_template_kwargs`` (Qwen3's ``enable_thinking``; a request may still override it) and the
run's validation sampling as the default for requests that set none. The chat template is the model's own, the one
``generate`` renders and verl's rollout used in training. Once the server answers, the base URL and the served model
name go to stdout, one ``key: value`` line each, so a script can wait for them (vLLM's own log goes to stderr); the
server runs until interrupted.

The server renders chat requests itself (``LLM.chat``'s path), unlike ``generate``, which sends token ids rendered
as verl renders them; for Qwen3's template the two agree. Responses keep the thinking text in ``content`` (no
reasoning parser), as verl's rollout and rlif's rewards see it; add ``--vllm-arg=--reasoning-parser=qwen3`` for a
harness that wants it split off.
"""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from rlif.eval.model_source import ModelSource, loadable_model, locate_model
from rlif.eval.sampling import Sampling, choose_sampling

READY_POLL_SECONDS = 2.0


def add_parser(sub: Any, matrix_default: Path) -> argparse.ArgumentParser:
    """The ``serve`` subcommand's options (``sub``: the evaluation command line's subparsers)."""
    serve = sub.add_parser("serve", help="serve a checkpoint or model with vLLM's OpenAI-compatible server")
    serve.add_argument("model", help="Hugging Face model folder, verl run directory, global_step_N[/actor], Hub id")
    serve.add_argument("--step", type=int, help="checkpoint step of a run directory (default: latest complete)")
    serve.add_argument("--run", help="matrix run whose thinking mode and validation sampling to use")
    serve.add_argument("--matrix", type=Path, default=matrix_default, help="experiment matrix (default: %(default)s)")
    serve.add_argument(
        "--think",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Qwen3 thinking mode, the server's default enable_thinking (default: the run's, else on)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    serve.add_argument("--port", type=int, default=8000, help="port (0: any free port; default: %(default)s)")
    serve.add_argument("--served-model-name", help="the API's model name (default: <run>-step<N> or folder name)")
    serve.add_argument("--tensor-parallel-size", type=int, default=1, help="GPUs the model is split over")
    serve.add_argument("--gpu-memory-utilization", type=float, default=0.9, help="vLLM's share of GPU memory")
    serve.add_argument("--max-model-len", type=int, help="vLLM context (default: the model's)")
    serve.add_argument(
        "--vllm-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="any other `vllm serve` argument, written with '=': --vllm-arg=--enforce-eager; repeatable",
    )
    serve.add_argument("--ready-timeout", type=float, default=1800.0, help="seconds to wait for the server to answer")
    serve.add_argument("--print-command", action="store_true", help="print the vllm command and exit")
    serve.add_argument("--python", default=sys.executable, help="interpreter with vLLM (and verl, for a merge)")
    return serve


def served_name(source: ModelSource) -> str:
    """A readable model name: ``<run>-step<N>`` for a checkpoint, the folder name for a folder, the Hub id."""
    if source.checkpoint is not None:
        return f"{source.checkpoint.run_dir.name}-step{source.checkpoint.step}"
    path = Path(source.name)
    return path.resolve().name if path.exists() else source.name


def serve_command(model: str, name: str, sampling: Sampling, args: argparse.Namespace, port: int) -> list[str]:
    """The ``vllm serve`` command line: thinking as the default template argument, the run's sampling as the
    default for requests that set none, and the user's extra arguments last (so they win)."""
    defaults = {"temperature": sampling.temperature, "top_p": sampling.top_p, "top_k": sampling.top_k}
    command = [
        args.python, "-m", "vllm.entrypoints.cli.main", "serve", model,
        "--served-model-name", name,
        "--host", args.host,
        "--port", str(port),
        "--default-chat-template-kwargs", json.dumps({"enable_thinking": sampling.think}),
        "--override-generation-config", json.dumps(defaults),
        "--tensor-parallel-size", str(args.tensor_parallel_size),
        "--gpu-memory-utilization", str(args.gpu_memory_utilization),
    ]  # fmt: skip
    if args.max_model_len is not None:
        command += ["--max-model-len", str(args.max_model_len)]
    return command + list(args.vllm_arg)


def free_port(host: str) -> int:
    """A port nothing listens on now (another process may take it before vLLM does; rare on one machine)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def wait_ready(process: subprocess.Popen, base_url: str, timeout: float) -> None:
    """Return once ``GET <base_url>/models`` answers.

    Raises:
        RuntimeError: the server exited first or did not answer within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"vllm serve exited with status {process.returncode} before answering (see above)")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(READY_POLL_SECONDS)
    raise RuntimeError(f"vllm serve did not answer at {base_url} within {timeout:.0f} s")


def run_serve(args: argparse.Namespace) -> int:
    """Locate and merge the model, start the server, print where it answers, and wait for it to end.

    Returns:
        The server's exit status (0 after an interrupt).

    Raises:
        ValueError: a user mistake (bad model path, unknown run, a setting out of range).
        RuntimeError: the merger failed, or the server ended or stayed silent before answering.
    """
    from rlif.eval.cli import _matrix_run

    run = _matrix_run(args.matrix, args.run) if args.run else None
    sampling = choose_sampling(run, think=args.think)
    source = locate_model(args.model, step=args.step)
    name = args.served_model_name or served_name(source)
    if args.print_command:
        model = source.name if source.checkpoint is None else f"<merge of {source.checkpoint.step_dir}>"
        print(shlex.join(serve_command(model, name, sampling, args, args.port or 8000)))
        return 0
    model = loadable_model(source, python=args.python, merged_dir=args.merged_dir)
    port = args.port or free_port(args.host)
    base_url = f"http://{args.host}:{port}/v1"
    command = serve_command(model, name, sampling, args, port)
    _say(f"model: {source.description}; thinking {'on' if sampling.think else 'off'}")
    _say("starting: " + shlex.join(command))
    process = subprocess.Popen(command, stdout=sys.stderr)  # stdout keeps only the two lines below
    stop = _forward_signals(process)
    try:
        wait_ready(process, base_url, args.ready_timeout)
        print(f"base_url: {base_url}", flush=True)
        print(f"model: {name}", flush=True)
        _say(
            "try: lm-eval run --model local-chat-completions --apply_chat_template "
            f"--model_args model={name},base_url={base_url}/chat/completions --tasks <task>"
        )
        returncode = process.wait()
    except BaseException:
        _stop(process)
        raise
    return 0 if stop else returncode


def _forward_signals(process: subprocess.Popen) -> list[int]:
    """Pass SIGINT/SIGTERM on to the server; the returned list records that one came."""
    received: list[int] = []

    def forward(signum: int, _frame: Any) -> None:
        received.append(signum)
        process.send_signal(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, forward)
    return received


def _stop(process: subprocess.Popen, grace: float = 30.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _say(message: str) -> None:
    print(f"[rlif eval] {message}", file=sys.stderr, flush=True)
