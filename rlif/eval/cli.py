"""Command line of the offline evaluation.

Examples::

    python -m rlif.eval generate --run slurm_qwen17b_think_if80000_grpo --n 8 \\
        --model checkpoints/rlif/slurm_qwen17b_think_if80000_grpo
    python -m rlif.eval generate --model Qwen/Qwen3-1.7B --no-think --n 4 \\
        --eval-file verl_data/ifbench_300_ifeval_541_logicif_749.parquet --out eval/qwen3-1.7b-base/0
    python -m rlif.eval score --responses lm_eval_ifeval.jsonl \\
        --eval-file verl_data/ifbench_300_ifeval_541_logicif_749.parquet --out eval/qwen3-1.7b/ifeval
    python -m rlif.eval compare eval/graph_qwen17b_think_6np45000_binary/500 eval/qwen3-1.7b-base/0
    python -m rlif.eval serve checkpoints/rlif/slurm_qwen17b_think_if80000_grpo --run slurm_qwen17b_think_if80000_grpo
    python -m rlif.eval import lm_eval_out/ --out eval/qwen3-1.7b/lm_eval

``generate`` samples n responses per prompt with vLLM (``rlif.eval.generation``: resumable, appended to
``responses.jsonl``; a verl checkpoint is merged first), then scores them as ``score`` does. ``score`` matches
each response to its evaluation row (``rlif.eval.responses``), scores it with the reward entry training uses
(``rlif.eval.scoring``) and writes, in ``--out``: ``samples.jsonl`` (one row per sample: prompt id, response,
every score key), ``metrics.json`` (``rlif.eval.metrics``) and ``metrics.md`` (the same as Markdown tables). A
user mistake (a missing file, an unmatched response line, a bad reward option, responses of another model in
``--out``) ends with one line on stderr and exit status 2. ``compare`` gives the paired difference of one metric
between two evaluations over the prompts both scored (``rlif.eval.compare``). ``serve`` puts a checkpoint or model
behind vLLM's OpenAI-compatible server for other harnesses (``rlif.eval.serve``); ``import`` turns lm-eval's results
and samples into an evaluation folder (``rlif.eval.lm_eval_import``).
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlif.atomic_files import write_lines_atomic, write_text_atomic
from rlif.eval.compare import compare, load_evaluation
from rlif.eval.eval_rows import EvalRow, load_eval_rows
from rlif.eval.generation import (
    MANIFEST_FILE,
    RESPONSES_FILE,
    Engine,
    ResponsesLog,
    check_manifest,
    exclusive,
    generate_missing,
    logged_samples,
    open_log,
    pending_requests,
)
from rlif.eval.lm_eval_import import import_lm_eval
from rlif.eval.metrics import compute_metrics
from rlif.eval.model_source import ModelSource, loadable_model, locate_model
from rlif.eval.outputs import METRICS_FILE, SAMPLES_FILE, TABLES_FILE, json_document, json_line
from rlif.eval.responses import Sample, read_samples
from rlif.eval.sampling import Sampling, choose_sampling
from rlif.eval.scoring import reward_options, score_samples
from rlif.eval.serve import add_parser as add_serve_parser
from rlif.eval.serve import run_serve
from rlif.eval.tables import markdown_tables
from rlif.redaction import guarded

DEFAULT_MATRIX = Path("recipe/matrix.yaml")
DEFAULT_EVAL_ROOT = Path("eval")

EngineFactory = Callable[[str, Sampling, Sequence[EvalRow], argparse.Namespace], Engine]
"""Builds the engine for (loadable model, sampling, rows to generate for, options); tests substitute a fake."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rlif.eval", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score a JSONL of responses against evaluation files (no generation)")
    score.add_argument("--responses", type=Path, required=True, help="JSONL: id or prompt, and response, per line")
    score.add_argument("--eval-file", type=Path, nargs="+", required=True, help="verl parquet evaluation files")
    score.add_argument("--out", type=Path, required=True, help="output directory")
    _reward_option_argument(score)

    compare = sub.add_parser("compare", help="paired difference of one metric between two evaluations, with a verdict")
    compare.add_argument("a", type=Path, help="evaluation directory (or its metrics.json) A")
    compare.add_argument("b", type=Path, help="evaluation directory B")
    compare.add_argument("--metric", help="flat metric key (default: the family's headline, e.g. graph/optimal_rate)")

    gen = sub.add_parser("generate", help="generate n samples per prompt with vLLM, then score them (resumable)")
    gen.add_argument(
        "--model",
        required=True,
        help="Hugging Face model folder, verl run directory, global_step_N[/actor], or Hub model id (local cache)",
    )
    gen.add_argument("--step", type=int, help="checkpoint step of a run directory (default: latest complete)")
    gen.add_argument("--run", help="matrix run whose thinking mode, validation sampling, n and max length to use")
    gen.add_argument("--matrix", type=Path, default=DEFAULT_MATRIX, help="experiment matrix (default: %(default)s)")
    gen.add_argument("--eval-file", type=Path, nargs="+", help="verl parquet evaluation files (default: --run's)")
    gen.add_argument("--out", type=Path, help="output directory (default for a checkpoint: eval/<run>/<step>)")
    gen.add_argument("--n", type=int, help="samples per prompt (default: the run's validation n, else 1)")
    gen.add_argument(
        "--think",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Qwen3 thinking mode, enable_thinking of the chat template (default: the run's, else on)",
    )
    gen.add_argument("--temperature", type=float, help="default: the run's / the model card's for the mode")
    gen.add_argument("--top-p", type=float, help="default: the run's / the model card's for the mode")
    gen.add_argument("--top-k", type=int, help="-1: off (default: the run's / the model card's for the mode)")
    gen.add_argument("--max-tokens", type=int, help="tokens per sample (default: the run's max_response_length)")
    gen.add_argument("--seed", type=int, default=0, help="base seed; each prompt's request is seeded from it")
    gen.add_argument("--tensor-parallel-size", type=int, default=1, help="GPUs the model is split over")
    gen.add_argument("--gpu-memory-utilization", type=float, default=0.9, help="vLLM's share of GPU memory")
    gen.add_argument("--max-model-len", type=int, help="vLLM context (default: longest prompt + --max-tokens)")
    gen.add_argument(
        "--engine-arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any other vllm.LLM argument (value read as JSON, else as text), e.g. enforce_eager=true; repeatable",
    )
    gen.add_argument(
        "--chunk-prompts",
        type=int,
        default=128,
        help="prompts per vLLM call; each finished chunk is saved, so a preemption loses at most one chunk",
    )
    gen.add_argument("--python", default=sys.executable, help="interpreter with verl, for the checkpoint merger")
    merged_dir_argument(gen)
    _reward_option_argument(gen)

    merged_dir_argument(add_serve_parser(sub, DEFAULT_MATRIX))
    imported = sub.add_parser("import", help="lm-eval's results and --log_samples files as an evaluation folder")
    imported.add_argument("lm_eval_output", type=Path, help="lm-eval's results_<date>.json or its --output_path")
    imported.add_argument("--out", type=Path, required=True, help="output directory")
    return parser


def merged_dir_argument(parser: argparse.ArgumentParser) -> None:
    """``--merged-dir``, shared by the commands that load a checkpoint."""
    parser.add_argument(
        "--merged-dir",
        type=Path,
        help="where a checkpoint's merged model goes (default: global_step_N/hf_merged when the checkpoint folder "
        "is writable, else ~/.cache/rlif/merged/...; an up-to-date earlier merge is reused)",
    )


def _reward_option_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reward-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="reward option (value read as JSON, else as text), e.g. graph_reward=ratio_quality_format_repeat; "
        "repeatable. Evaluation sets if_max_answer_chars=0 (no length cap, as the official harnesses)",
    )


def parse_options(items: Sequence[str], flag: str = "--reward-option") -> dict[str, Any]:
    """``NAME=VALUE`` items as a dict; values are JSON (``0``, ``true``) or else plain text.

    Raises:
        ValueError: an item without ``=``.
    """
    options: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ValueError(f"{flag} {item!r}: expected NAME=VALUE")
        try:
            options[name] = json.loads(text)
        except json.JSONDecodeError:
            options[name] = text
    return options


def run_score(responses: Path, eval_files: Sequence[Path], out: Path, options: dict[str, Any]) -> dict[str, Any]:
    """Score ``responses`` against ``eval_files``, write the three outputs under ``out``; return the metrics.

    Raises:
        ValueError: a user mistake (see the module docstring), with a one-line message.
    """
    checked = reward_options(options)
    rows = load_eval_rows(eval_files)
    samples = read_samples(responses, rows)
    answered = {sample.row.item_id for sample in samples}
    unanswered = sum(row.item_id not in answered for row in rows)
    if unanswered:
        _say(
            f"warning: {unanswered} of {len(rows)} rows of the evaluation files have no response in {responses}; "
            "the metrics cover the other rows only, so they do not compare with a full evaluation"
        )
    header = {
        "responses": str(responses),
        "eval_files": [str(path) for path in eval_files],
        "rows_without_response": unanswered,
    }
    return write_results(samples, out, checked, header)


def write_results(
    samples: Sequence[Sample], out: Path, options: dict[str, Any], header: dict[str, Any]
) -> dict[str, Any]:
    """Score ``samples`` and write ``samples.jsonl``, ``metrics.json`` (``header`` first) and ``metrics.md``."""
    records: list[dict[str, Any]] = []

    def lines() -> Any:
        for record in score_samples(samples, options, total=len(samples)):
            records.append(record)
            yield json_line(record)

    write_lines_atomic(out / SAMPLES_FILE, lines())
    metrics = {**header, "reward_options": options, **compute_metrics(records)}
    write_text_atomic(out / METRICS_FILE, json_document(metrics))
    write_text_atomic(out / TABLES_FILE, markdown_tables(metrics))
    return metrics


def vllm_engine(model: str, sampling: Sampling, rows: Sequence[EvalRow], args: argparse.Namespace) -> Engine:
    """The vLLM engine for ``rows``' prompts (``rlif.eval.vllm_engine``).

    Raises:
        ValueError: the tokenizer cannot be loaded, a prompt does not fit ``--max-model-len`` with
            ``--max-tokens``, or vLLM refused the settings.
    """
    from rlif.eval.vllm_engine import load_tokenizer, prompt_token_ids

    tokenizer = load_tokenizer(model)
    token_ids = prompt_token_ids(tokenizer, rows, sampling.think)
    if args.max_model_len is not None:
        for row in rows:
            needed = len(token_ids[row.item_id]) + sampling.max_tokens
            if needed > args.max_model_len:
                raise ValueError(
                    f"{row.where}: prompt of {len(token_ids[row.item_id])} tokens + --max-tokens "
                    f"{sampling.max_tokens} exceeds --max-model-len {args.max_model_len}"
                )
    return engine_for_prompts(model, sampling, token_ids, args)


def engine_for_prompts(
    model: str, sampling: Sampling, token_ids: Mapping[str, list[int]], args: argparse.Namespace
) -> Engine:
    """vLLM on ``model`` for prompts already tokenised, with the job's parallelism, memory and engine settings."""
    from rlif.eval.vllm_engine import VllmEngine

    return VllmEngine(
        model,
        sampling,
        token_ids,
        tensor_parallel_size=args.tensor_parallel_size,
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_model_len=args.max_model_len,
        engine_args=parse_options(args.engine_arg, "--engine-arg"),
    )


def run_generate(args: argparse.Namespace, engine_factory: EngineFactory = vllm_engine) -> tuple[Path, dict]:
    """Generate what is missing under the output directory, score everything; return it and the metrics.

    Raises:
        ValueError: a user mistake (unknown run, no evaluation file, bad model path, a setting out of range,
            responses of another model or sampling in ``--out``), with a one-line message.
        RuntimeError: the checkpoint merger failed.
    """
    options = reward_options(parse_options(args.reward_option))
    parse_options(args.engine_arg, "--engine-arg")
    run = _matrix_run(args.matrix, args.run) if args.run else None
    sampling = choose_sampling(
        run,
        think=args.think,
        n=args.n,
        temperature=args.temperature,
        top_p=args.top_p,
        top_k=args.top_k,
        max_tokens=args.max_tokens,
        seed=args.seed,
    )
    eval_files = list(args.eval_file or (run.val_files if run else ()))
    if not eval_files:
        raise ValueError("--eval-file: no evaluation file given (and no --run whose val_files to use)")
    source = locate_model(args.model, step=args.step)
    out = args.out or _default_out(source, args.run)
    rows = load_eval_rows([Path(path) for path in eval_files])
    manifest = {
        "model": source.identity,
        "model_description": source.description,
        "run": args.run,
        "sampling": sampling.settings(),
        "sampling_origin": sampling.origin,
        "eval_files": [str(path) for path in eval_files],
    }
    with exclusive(out):
        check_manifest(out, manifest)
        log = _generate(args, source, sampling, rows=rows, out=out, engine_factory=engine_factory)
    samples = logged_samples(rows, log, sampling.n)
    header = {k: manifest[k] for k in ("model", "model_description", "run", "sampling", "eval_files")}
    header["step"] = source.checkpoint.step if source.checkpoint else None  # the report files results by it
    return out, write_results(samples, out, options, {"responses": str(log.path), **header})


def _generate(
    args: argparse.Namespace,
    source: ModelSource,
    sampling: Sampling,
    *,
    rows: Sequence[EvalRow],
    out: Path,
    engine_factory: EngineFactory,
) -> ResponsesLog:
    """Generate what the log in ``out`` lacks (merging and starting the engine only if anything does)."""
    log = open_log(out / RESPONSES_FILE)
    _say(f"model: {source.description}")
    _say(_sampling_line(sampling))
    if log.repaired:
        _say(f"dropped a torn last line ({log.repaired} bytes) of {log.path}")
    pending = pending_requests(rows, log, sampling)
    _say(f"{len(rows) - len(pending)} of {len(rows)} prompts already have {sampling.n} samples in {log.path}")
    if pending:
        model = loadable_model(source, python=args.python, merged_dir=args.merged_dir)
        started = time.monotonic()
        engine = engine_factory(model, sampling, [request.row for request in pending], args)
        _say(f"engine ready in {time.monotonic() - started:.0f} s; generating {len(pending)} prompts")
        started = time.monotonic()
        generate_missing(rows, engine, sampling, log, chunk_prompts=args.chunk_prompts)
        _say(f"generated in {time.monotonic() - started:.0f} s")
        log = open_log(out / RESPONSES_FILE)
    return log


def _matrix_run(matrix_path: Path, name: str) -> Any:
    from rlif.runs.matrix import load_matrix

    if not Path(matrix_path).is_file():
        raise ValueError(f"--matrix {matrix_path}: file not found (--run needs the experiment matrix)")
    return load_matrix(matrix_path).select([name])[0]


def _default_out(source: ModelSource, run: str | None) -> Path:
    if source.checkpoint is None:
        raise ValueError(
            f"--out: needed for {source.description} (a checkpoint defaults to {DEFAULT_EVAL_ROOT}/<run>/<step>)"
        )
    return DEFAULT_EVAL_ROOT / (run or source.checkpoint.run_dir.name) / str(source.checkpoint.step)


def _sampling_line(sampling: Sampling) -> str:
    settings = ", ".join(f"{key}={value}" for key, value in sampling.settings().items())
    origins = sorted(set(sampling.origin.values()))
    return f"sampling: {settings} (from {', '.join(origins)})"


def _say(message: str) -> None:
    print(f"[rlif eval] {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None, engine_factory: EngineFactory = vllm_engine) -> int:
    """Entry of ``python -m rlif.eval``; returns the exit status: 2 for a mistake in the input, 1 when the disk
    fails or on an unexpected error (its redacted traceback goes to a file the message names)."""
    args = _parser().parse_args(argv)
    return guarded(
        f"eval-{args.command}", lambda: _run(args, engine_factory), status=_error_status, describe=_describe_error
    )


def _error_status(err: Exception) -> int:
    return 2 if isinstance(err, (ValueError, RuntimeError)) else 1


DISK_ERRORS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EFBIG})
"""Write errors that are the disk's fault (full, read-only, over quota, file too large)."""


def _describe_error(err: Exception) -> str | None:
    """The disk's fault in its own words, any other file error as the file and its reason; anything else as
    ``one_line`` says it."""
    if _error_status(err) == 1 and isinstance(err, OSError):
        if err.errno in DISK_ERRORS:
            where = f"cannot write {err.filename}" if err.filename else "cannot write the results"
            return f"{where}: {err.strerror or err}; free space there or pass another --out"
        if err.filename:
            return f"{err.filename}: {err.strerror or err}"
    return None


def _run(args: argparse.Namespace, engine_factory: EngineFactory) -> int:
    out_arg = getattr(args, "out", None)
    if out_arg is not None and out_arg.exists() and not out_arg.is_dir():
        raise ValueError(f"--out {out_arg}: is a file; --out names a directory for the three outputs (pick a new name)")
    if args.command == "compare":
        result = compare(load_evaluation(args.a), load_evaluation(args.b), args.metric)
        print("\n".join(result.lines))
        return 0
    if args.command == "serve":
        return run_serve(args)
    if args.command == "import":
        imported = import_lm_eval(args.lm_eval_output, args.out)
        print(f"[rlif eval] imported {len(imported['metrics'])} metrics of {len(imported['sources'])} lm-eval tasks")
        for name in (SAMPLES_FILE, METRICS_FILE, TABLES_FILE):
            print(f"[rlif eval] wrote {args.out / name}")
        return 0
    if args.command == "generate":
        out, metrics = run_generate(args, engine_factory)
    else:
        out = args.out
        metrics = run_score(args.responses, args.eval_file, args.out, parse_options(args.reward_option))
    total = sum(values["samples"] for values in metrics["sources"].values())
    print(f"[rlif eval] scored {total} samples of {len(metrics['sources'])} sources")
    names = (RESPONSES_FILE, MANIFEST_FILE) if args.command == "generate" else ()
    for name in (*names, SAMPLES_FILE, METRICS_FILE, TABLES_FILE):
        print(f"[rlif eval] wrote {out / name}")
    return 0
