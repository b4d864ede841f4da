"""The probe job: sample a run's base model on a stratified sample of its own prompts and write its probe file.

The planner's step time and GPU-hours rest on the mean response length, and a curriculum's first gate on the base
model's pass rate on the first interval; neither is known before the model has generated on the run's prompts.
This entry point measures both the way training would see them:

- prompts: the run's training files, split into the intervals the run's sampler draws from (``samplers.base.
  row_intervals``: LogicIF complexity intervals, graph levels, reasoning-gym levels; ``all`` for sources it does
  not split) and sampled per (source, interval), ``--prompts-per-interval`` each, with a fixed seed; prompts longer
  than ``train.max_prompt_length`` are left out, as verl's overlong-prompt filter drops them;
- rendering: the model's chat template with the run's thinking setting (``rlif.eval.vllm_engine``, as verl's
  rollout renders);
- decoding: the run's rollout sampling (``train.temperature``, verl's rollout ``top_p``/``top_k``,
  ``train.rollout_n`` samples per prompt) up to the longest of ``rlif.runs.probe.probe_caps`` (the run's response
  cap and a longer one), so the truncation rate at both caps comes from one generation;
- scoring: ``rewards.compute_score`` with the run's ``reward.kwargs``, the entry and options training uses; the
  pass rate is its success indicator ``acc``.

A chained run (``from_winner``) is probed with the settings it takes from its stage's winner, which the script
passes as ``--winner-setting KEY=JSON`` (one per key of the link's ``take``, as ``generate_train_recipes.py
--probe`` resolved them from the evaluation results); the run is rebuilt with them as generation rebuilds it
(``Matrix.resolved``), so the probe measures what the chained run's training script trains on.

Generation is resumable (``rlif.eval.generation``: an append-only ``responses.jsonl`` in ``--out``), so a requeued
job goes on where it stopped; ``timing.json`` adds up the output tokens and seconds of every attempt for the
decode rate. The probe file (``rlif.runs.probe``) is written atomically to ``--out``/probe.json, where
``generate_train_recipes.py`` finds it.

Example (what ``recipe/rlif/probe/<run>.sh`` runs)::

    python -m rlif.eval.probe --run stage2_qwen17b_think_ema_rewardCurriculum --model /path/to/snapshot \\
        --out probe/stage2_qwen17b_think_ema_rewardCurriculum
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rewards import compute_score
from rlif.atomic_files import write_text_atomic
from rlif.eval.eval_rows import EvalRow, load_eval_rows
from rlif.eval.generation import (
    RESPONSES_FILE,
    Engine,
    check_manifest,
    exclusive,
    generate_missing,
    logged_samples,
    open_log,
)
from rlif.eval.sampling import Sampling
from rlif.runs.matrix import Matrix, load_matrix
from rlif.runs.probe import (
    ALL_INTERVALS,
    PROBE_FILE,
    PROMPTS_PER_INTERVAL,
    ROLLOUT_TOP_K,
    ROLLOUT_TOP_P,
    ProbeSample,
    load_probe,
    probe_caps,
    probe_warnings,
    summarize,
    write_probe,
)
from rlif.runs.spec import RunSpec

TIMING_FILE = "timing.json"
"""Output tokens and generation seconds summed over the job's attempts, and the GPUs they ran on."""

EngineFactory = Callable[[str, Sampling, Mapping[str, list[int]], argparse.Namespace], Engine]
"""Builds the engine for (model, sampling, prompt token ids by row id, options); tests substitute a fake."""


@dataclass(frozen=True)
class Stratum:
    """The prompts drawn from one (source, interval).

    Attributes:
        source: the ``data_source``.
        interval: the interval label (``ALL_INTERVALS`` for a source the sampler does not split).
        rows: the stratum's rows in the training files.
        chosen: the rows drawn, in file order.
    """

    source: str
    interval: str
    rows: int
    chosen: tuple[EvalRow, ...]


def stratify(rows: Sequence[EvalRow], run: RunSpec, per_interval: int, seed: int, where: str) -> list[Stratum]:
    """Split ``rows`` into the run's sampler intervals and draw up to ``per_interval`` rows from each.

    The draw of a stratum depends only on the seed, its source and interval and its rows, so adding a source
    leaves the other strata's prompts as they were.

    Raises:
        ValueError: ``per_interval`` below 1, the run's sampler cannot be built, or a row of a split source lacks
            the difficulty field (naming ``where`` and the row).
    """
    from samplers import build_policy
    from samplers.base import row_intervals

    if per_interval < 1:
        raise ValueError(f"--prompts-per-interval {per_interval}: need at least one prompt per interval")
    policy = build_policy(run.sampler.name, run.sampler.params, seed=run.sampler.seed)
    sources = [row.data_source for row in rows]
    intervals = row_intervals(policy, sources, [dict(row.extra_info) for row in rows], where)
    members: dict[tuple[str, str], list[EvalRow]] = defaultdict(list)
    for row, interval in zip(rows, intervals, strict=True):
        label = str(interval) if policy.splits(row.data_source) else ALL_INTERVALS
        members[(row.data_source, label)].append(row)
    strata = []
    for (source, label), group in sorted(members.items()):
        rng = random.Random(f"{seed}\0{source}\0{label}")
        picked = sorted(rng.sample(range(len(group)), min(per_interval, len(group))))
        strata.append(Stratum(source, label, len(group), tuple(group[i] for i in picked)))
    return strata


def rollout_sampling(run: RunSpec, max_tokens: int, seed: int) -> Sampling:
    """The run's rollout decoding (what training samples with), up to ``max_tokens``."""
    origin = f"run {run.name} (rollout)"
    return Sampling(
        think=run.think,
        n=run.train.rollout_n,
        temperature=run.train.temperature,
        top_p=ROLLOUT_TOP_P,
        top_k=ROLLOUT_TOP_K,
        max_tokens=max_tokens,
        seed=seed,
        origin=dict.fromkeys(("think", "n", "temperature", "top_p", "top_k", "max_tokens"), origin),
    )


def vllm_engine(model: str, sampling: Sampling, token_ids: Mapping[str, list[int]], args: argparse.Namespace) -> Engine:
    """vLLM on ``model`` with the job's parallelism and memory settings (``rlif.eval.cli.engine_for_prompts``)."""
    from rlif.eval.cli import engine_for_prompts

    return engine_for_prompts(model, sampling, token_ids, args)


def prompt_ids(model: str, rows: Sequence[EvalRow], think: bool) -> dict[str, list[int]]:
    """Each row's prompt token ids, rendered as verl's rollout renders them (``rlif.eval.vllm_engine``)."""
    from rlif.eval.vllm_engine import load_tokenizer, prompt_token_ids

    return prompt_token_ids(load_tokenizer(model), rows, think)


def read_timing(path: Path) -> dict[str, float]:
    """``timing.json``: the tokens and seconds of earlier attempts (zeros when there is none).

    Raises:
        ValueError: the file is not the JSON object this module writes (named, with the fix).
    """
    if not path.is_file():
        return {"tokens": 0.0, "seconds": 0.0}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {"tokens": float(data["tokens"]), "seconds": float(data["seconds"])}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise ValueError(
            f"{path}: unreadable timing; delete it and {path.parent / RESPONSES_FILE} to probe afresh"
        ) from None


def with_winner_settings(matrix: Matrix, run: RunSpec, given: Sequence[str]) -> RunSpec:
    """``run`` with the settings it takes from its stage's winner, given as ``KEY=JSON`` (``--winner-setting``),
    rebuilt as generation rebuilds a resolved chained run (``Matrix.resolved``); ``run`` itself when it has no link.

    Raises:
        ValueError: an item is not ``KEY=JSON``, settings are given for a run without ``from_winner``, the keys
            given are not exactly the link's ``take`` keys, or a value does not build (each named, one line).
    """
    values: dict[str, Any] = {}
    for item in given:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--winner-setting {item!r}: expected KEY=JSON, e.g. train_files='[\"a.parquet\"]'")
        try:
            values[key] = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"--winner-setting {key}: the value is not JSON ({err.msg}): {text}") from None
    link = run.from_winner
    if link is None:
        if values:
            raise ValueError(f"--winner-setting: run {run.name} takes no settings from a stage winner (no from_winner)")
        return run
    if set(values) != set(link.take):
        raise ValueError(
            f"run {run.name} is chained ({link.describe()}), --winner-setting gave {', '.join(values) or 'none'}; "
            f"write its probe job with generate_train_recipes.py --probe {run.name}, which resolves the chain"
        )
    return matrix.resolved(run.name, matrix.merged_raw(run.name), values)


def run_probe(
    args: argparse.Namespace, engine_factory: EngineFactory = vllm_engine, ids: Callable[..., Any] = prompt_ids
) -> Path:
    """Stratify, generate what ``--out`` lacks, score, and write the probe file; returns its path.

    Raises:
        ValueError: a user mistake (unknown run, winner settings that do not fit its link, missing training file, bad
            setting, responses of other settings in ``--out``), with a one-line message.
    """
    from rlif.runs.shapes import model_shape

    if not Path(args.matrix).is_file():
        raise ValueError(f"--matrix {args.matrix}: file not found")
    matrix = load_matrix(args.matrix)
    run = with_winner_settings(matrix, matrix.select([args.run])[0], args.winner_setting)
    if args.model_id:
        run = dataclasses.replace(run, model=args.model_id)
    files = [Path(f) for f in (args.train_file or run.train_files)]
    if not files:
        raise ValueError(f"run {run.name}: no training files (train_files in the matrix, or --train-file)")
    where = ", ".join(map(str, files))
    rows = load_eval_rows(files)
    strata = stratify(rows, run, args.prompts_per_interval, args.seed, where)
    caps = probe_caps(run, model_shape(args.model).max_position)
    sampling = rollout_sampling(run, caps[-1], args.seed)
    chosen = [row for stratum in strata for row in stratum.chosen]
    _say(f"run {run.name}: {len(chosen)} prompts from {len(strata)} source intervals of {len(rows)} rows ({where})")
    for stratum in strata:
        _say(f"  {stratum.source} interval {stratum.interval}: {len(stratum.chosen)} of {stratum.rows} rows")
    token_ids = ids(args.model, chosen, run.think)
    too_long = [row for row in chosen if len(token_ids[row.item_id]) > run.train.max_prompt_length]
    if too_long:
        _say(
            f"left out {len(too_long)} prompts longer than train.max_prompt_length {run.train.max_prompt_length} "
            "(verl's overlong-prompt filter drops them in training)"
        )
        chosen = [row for row in chosen if len(token_ids[row.item_id]) <= run.train.max_prompt_length]
    if not chosen:
        raise ValueError(f"run {run.name}: no prompt fits train.max_prompt_length {run.train.max_prompt_length}")
    if args.max_model_len is None:
        args.max_model_len = run.train.max_prompt_length + caps[-1]
    _say(
        f"sampling: think={run.think}, n={sampling.n}, temperature={sampling.temperature}, top_p={sampling.top_p}, "
        f"top_k={sampling.top_k}; caps {', '.join(map(str, caps))} tokens (generated up to {caps[-1]})"
    )
    out = Path(args.out)
    manifest = {"model": run.model, "model_path": str(args.model), "run": run.name, "sampling": sampling.settings()}
    with exclusive(out):
        check_manifest(out, manifest)
        log = open_log(out / RESPONSES_FILE)
        timing = read_timing(out / TIMING_FILE)
        before = sum(int(r.get("response_tokens", 0)) for s in log.samples.values() for _, r in s.values())
        done = sum(len(log.samples.get(row.item_id, {})) >= sampling.n for row in chosen)
        _say(f"{done} of {len(chosen)} prompts already have {sampling.n} samples in {log.path}")
        if done < len(chosen):
            started = time.monotonic()
            engine = engine_factory(args.model, sampling, token_ids, args)
            _say(f"engine ready in {time.monotonic() - started:.0f} s")
            started = time.monotonic()
            generate_missing(chosen, engine, sampling, log, chunk_prompts=args.chunk_prompts)
            seconds = time.monotonic() - started
            log = open_log(out / RESPONSES_FILE)
            after = sum(int(r.get("response_tokens", 0)) for s in log.samples.values() for _, r in s.values())
            timing = {"tokens": timing["tokens"] + after - before, "seconds": timing["seconds"] + seconds}
            write_text_atomic(
                out / TIMING_FILE, json.dumps({**timing, "gpus": args.tensor_parallel_size}, indent=1) + "\n"
            )
            _say(f"generated {after - before:,} tokens in {seconds:.0f} s")
    if timing["seconds"] <= 0 or timing["tokens"] <= 0:
        raise ValueError(f"{out / TIMING_FILE}: no timed generation; delete {log.path} to probe afresh")
    rate = timing["tokens"] / timing["seconds"] / args.tensor_parallel_size
    labels = {row.item_id: (st.source, st.interval) for st in strata for row in st.chosen}
    prompt_tokens = {row.item_id: len(token_ids[row.item_id]) for row in chosen}
    samples = score(run, logged_samples(chosen, log, sampling.n), labels, prompt_tokens, caps[-1])
    document = summarize(
        run.model,
        run.think,
        caps,
        samples,
        tokens_per_s=rate,
        rows={(st.source, st.interval): st.rows for st in strata},
    )
    path = write_probe(out / PROBE_FILE, document)
    for line in probe_warnings(run, load_probe(path)):
        _say(f"warning: {line}")
    return path


def score(
    run: RunSpec,
    samples: Sequence[Any],
    labels: Mapping[str, tuple[str, str]],
    prompt_tokens: Mapping[str, int],
    max_tokens: int,
) -> list[ProbeSample]:
    """Score every sample with ``rewards.compute_score`` and the run's ``reward.kwargs`` (training's entry and
    options), with a progress bar; each becomes a ``ProbeSample`` of its stratum.

    Args:
        run: the run whose reward options apply.
        samples: ``rlif.eval.responses.Sample`` objects from the responses log (with ``response_tokens`` and
            ``finish_reason`` in ``extra``).
        labels: row id -> (source, interval).
        prompt_tokens: row id -> prompt tokens.
        max_tokens: the cap generation ran at (a response without a logged length counts as that long).
    """
    scored = []
    for sample in tqdm(samples, desc="scoring", unit="sample", file=sys.stderr):
        row = sample.row
        scores = compute_score(
            row.data_source, sample.response, row.ground_truth, dict(row.extra_info), **run.reward.kwargs
        )
        source, interval = labels[row.item_id]
        scored.append(
            ProbeSample(
                source=source,
                interval=interval,
                prompt_id=row.item_id,
                prompt_tokens=prompt_tokens[row.item_id],
                response_tokens=int(sample.extra.get("response_tokens", max_tokens)),
                stopped_at_cap=sample.extra.get("finish_reason") == "length",
                success=min(max(float(scores.get("acc") or 0.0), 0.0), 1.0),
            )
        )
    return scored


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (separate so tests and docs can inspect it)."""
    parser = argparse.ArgumentParser(
        prog="python -m rlif.eval.probe",
        description="Sample a run's base model on a stratified sample of its training prompts with its rollout "
        "settings, score with its rewards and write probe/<run>/probe.json (docs/run-planning.md).",
    )
    parser.add_argument("--matrix", type=Path, default=Path("recipe/matrix.yaml"))
    parser.add_argument("--run", required=True, help="the run of the matrix to probe")
    parser.add_argument("--model", required=True, help="the run's base model: a local directory or a Hub id")
    parser.add_argument(
        "--model-id",
        help="the model the probe file names (default: the run's model; set by generation for a run whose model "
        "comes from a .env setting)",
    )
    parser.add_argument("--out", type=Path, help="output directory (default: probe/<run>)")
    parser.add_argument(
        "--winner-setting",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a setting a chained run takes from its stage's winner (from_winner.take), as resolved by "
        "generate_train_recipes.py --probe (repeatable; every take key once)",
    )
    parser.add_argument(
        "--train-file", action="append", default=[], help="training file instead of the run's (repeatable)"
    )
    parser.add_argument(
        "--prompts-per-interval",
        type=int,
        default=PROMPTS_PER_INTERVAL,
        help=f"prompts drawn per source and interval (default {PROMPTS_PER_INTERVAL})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the prompt draw and of generation")
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    parser.add_argument("--max-model-len", type=int, help="vLLM's context (default: prompt cap + longest cap)")
    parser.add_argument("--chunk-prompts", type=int, default=256, help="prompts per engine call (each logged)")
    parser.add_argument(
        "--engine-arg", action="append", default=[], metavar="KEY=VALUE", help="extra vllm.LLM argument"
    )
    return parser


def _say(message: str) -> None:
    print(f"[rlif probe] {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None, engine_factory: EngineFactory = vllm_engine) -> int:
    """Entry of ``python -m rlif.eval.probe``; returns the exit status (2 on a user mistake, one line)."""
    args = build_parser().parse_args(argv)
    if args.out is None:
        args.out = Path("probe") / args.run
    try:
        path = run_probe(args, engine_factory)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        where = f"cannot write {err.filename}" if err.filename else "cannot write the probe"
        print(f"error: {where}: {err.strerror or err}; free space there or pass another --out", file=sys.stderr)
        return 1
    print(f"[rlif probe] wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
