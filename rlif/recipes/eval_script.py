"""The evaluation job of a run: ``recipe/rlif/eval/<run>.sh``, one node, vLLM tensor parallel sized to the model.

The script evaluates the run's newest complete checkpoint (or a given step; step 0 is the initial model) on the
run's evaluation files with its validation sampling, n samples per prompt, and writes ``eval/<run>/<step>/``, where
the report and the ablation chain (``rlif.eval.chain.final_results``) read it. It asks only for the GPUs its
tensor-parallel group needs: a model that fits one GPU evaluates on one GPU, leaving the rest of the node to others.

A run whose ``eval.benchmarks`` lists benchmarks evaluates each with its own files, n and length, one generation and
scoring per benchmark into ``eval/<run>/<step>/<benchmark>/``, and writes ``eval/<run>/<step>/benchmarks.json``
(each benchmark's tier, n, length, headline and folder; ``rlif.eval.tiers``), which the chain and the report read.
Separate folders keep each benchmark's metrics, intervals and resumable responses its own, so a benchmark can be
rerun or added without touching the others.

Tensor parallelism follows vLLM's constraints and memory: the attention heads must divide by TP (vLLM refuses the
model otherwise), and one GPU must hold the weights' share, vLLM's activation peak and the KV cache of one prompt's
samples at full length, up to ``KV_GROUP`` of them, within ``eval.gpu_memory_utilization``. The smallest such TP
wins (TP 1 for every model of 8B or less on 80 GB GPUs at n 8); with benchmarks, the largest of their TPs.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from rlif.recipes.render import LAUNCHER, template_root
from rlif.runs.memory import VLLM_ACTIVATION_GIB
from rlif.runs.shapes import GIB, ModelShape, model_shape
from rlif.runs.spec import BenchmarkSpec, RunSpec

EVAL_TEMPLATE = "slurm_eval.sh.j2"
EVAL_SUBDIR = "eval"
"""Evaluation scripts go to ``<out>/eval/<run>.sh``, beside the training scripts."""
KV_GROUP = 8
"""Full-length samples of one prompt whose KV cache the plan keeps in one GPU. With more (AIME's pass@64 at a
thinking length needs hundreds of GiB for one prompt), vLLM preempts and recomputes some sequences: slower, the
same samples."""


@dataclass(frozen=True)
class EvalPlan:
    """What the evaluation job asks for.

    Attributes:
        tp: vLLM tensor-parallel size (= GPUs of the job).
        max_tokens: generation limit per sample.
        max_model_len: prompt + generation limit (vLLM's context).
        need_gib: planned memory of one GPU inside vLLM's share (weights, activations, KV of one prompt's samples).
        share_gib: vLLM's share of one GPU.
    """

    tp: int
    max_tokens: int
    max_model_len: int
    need_gib: float
    share_gib: float


def tp_problem(shape: ModelShape, tp: int) -> str:
    """Why vLLM cannot split ``shape`` over ``tp`` GPUs (empty when it can): attention heads must divide by TP, and
    KV heads must divide by it or be replicated evenly (TP a multiple of them)."""
    if shape.heads % tp:
        return f"{tp} does not divide the {shape.heads} attention heads"
    if shape.kv_heads % tp and tp % shape.kv_heads:
        return f"{tp} and the {shape.kv_heads} KV heads must divide one another"
    return ""


def gpu_need_gib(shape: ModelShape, tp: int, n: int, max_model_len: int) -> float:
    """GiB one GPU needs inside vLLM's share: bf16 weights over TP, the activation peak, and KV for n sequences of
    ``max_model_len`` tokens."""
    weights = 2 * shape.params / tp
    kv = n * max_model_len * shape.kv_bytes_per_token(tp)
    return (weights + kv) / GIB + VLLM_ACTIVATION_GIB


def plan_eval(run: RunSpec, benchmark: BenchmarkSpec | None = None) -> EvalPlan:
    """The tensor-parallel size and lengths of ``run``'s evaluation job (of one of its benchmarks, if given).

    Raises:
        ValueError: no TP up to ``slurm.gpus_per_node`` fits (or the matrix's ``eval.tp`` does not), naming the
            model, the memory and the settings that change it; or the model's shape is unknown.
    """
    e = run.eval
    max_tokens = e.max_response_length or run.train.max_response_length
    n = e.n
    if benchmark is not None:
        max_tokens, n = benchmark.max_tokens or max_tokens, benchmark.n
    return fit_tp(run, max_tokens, n, "lower eval.n or eval.max_response_length (a benchmark's n or max_tokens)")


def fit_tp(run: RunSpec, max_tokens: int, n: int, fix: str) -> EvalPlan:
    """The smallest tensor-parallel size whose GPU holds ``run``'s model and the KV of up to ``KV_GROUP`` of ``n``
    samples of the prompt cap plus ``max_tokens`` within ``eval.gpu_memory_utilization`` (the matrix's ``eval.tp``
    when set): the sizing every one-node vLLM job of a run shares (evaluation, probe).

    Raises:
        ValueError: no TP up to ``slurm.gpus_per_node`` fits (or ``eval.tp`` does not), naming the model, the
            memory and ``fix`` with the settings that change it; or the model's shape is unknown.
    """
    e = run.eval
    shape = model_shape(run.model)
    max_model_len = run.train.max_prompt_length + max_tokens
    share = e.gpu_memory_utilization * run.slurm.gpu_memory_gb
    gpus = run.slurm.gpus_per_node
    candidates = [e.tp] if e.tp else [tp for tp in range(1, gpus + 1) if gpus % tp == 0]
    reasons = []
    for tp in candidates:
        if tp > gpus or tp < 1:
            reasons.append(f"TP {tp} is not between 1 and the {gpus} GPUs of a node")
            continue
        problem = tp_problem(shape, tp)
        if problem:
            reasons.append(f"TP {problem}")
            continue
        need = gpu_need_gib(shape, tp, min(n, KV_GROUP), max_model_len)
        if need <= share:
            return EvalPlan(tp, max_tokens, max_model_len, need, share)
        reasons.append(f"TP {tp} needs {need:.1f} GiB")
    raise ValueError(
        f"{run.model} does not fit vLLM's {share:.1f} GiB share of a {run.slurm.gpu_memory_gb:g} GiB GPU for "
        f"{min(n, KV_GROUP)} samples of {max_model_len} tokens ({'; '.join(reasons)}); {fix}, "
        "or raise eval.gpu_memory_utilization"
    )


def eval_command(run: RunSpec, plan: EvalPlan, benchmark: BenchmarkSpec | None = None) -> list[str]:
    """The arguments of ``python -m rlif.eval`` in the job, as bash words (shell variables of the script left to
    bash: ``$MODEL_TO_EVAL`` is the checkpoint or model directory, ``EVAL_FILES`` the files, ``$OUT_DIR`` the
    output directory; a benchmark names its own files and writes to its folder below ``$OUT_DIR``). The one place
    that knows the generation command's options."""
    sampling = run.val_sampling
    if benchmark is None:
        files, out, n = '"${EVAL_FILES[@]}"', '"$OUT_DIR"', run.eval.n
    else:
        files = " ".join(f'"$RLIF_ROOT/{path}"' for path in benchmark_files(run, benchmark))
        out, n = f'"$OUT_DIR/{benchmark.name}"', benchmark.n
    words = [
        "generate",
        '--model "$MODEL_TO_EVAL"',
        f"--eval-file {files}",
        f"--out {out}",
        f"--n {n}",
        f"--temperature {sampling.temperature!r}",
        f"--top-p {sampling.top_p!r}",
        f"--top-k {sampling.top_k}",
        f"--max-tokens {plan.max_tokens}",
        f"--max-model-len {plan.max_model_len}",
        f"--tensor-parallel-size {plan.tp}",
        f"--gpu-memory-utilization {run.eval.gpu_memory_utilization!r}",
        "--think" if run.think else "--no-think",
    ]
    for name, value in run.reward.kwargs.items():
        words.append(f"--reward-option {shlex.quote(f'{name}={json.dumps(value)}')}")
    return words


def benchmark_files(run: RunSpec, benchmark: BenchmarkSpec) -> tuple[str, ...]:
    """The files ``benchmark`` evaluates: its own, else the run's validation and ``eval.files``."""
    return benchmark.files or run.eval_files


def benchmark_plans(run: RunSpec) -> dict[str, EvalPlan]:
    """Each benchmark's plan, all at the largest TP any of them needs (the job holds those GPUs throughout).

    Raises:
        ValueError: a benchmark fits no TP (see ``plan_eval``), named.
    """
    plans = {}
    for benchmark in run.eval.benchmarks:
        try:
            plans[benchmark.name] = plan_eval(run, benchmark)
        except ValueError as err:
            raise ValueError(f"eval.benchmarks {benchmark.name!r}: {err}") from None
    tp = max(plan.tp for plan in plans.values())
    return {name: dataclasses.replace(plan, tp=tp) for name, plan in plans.items()}


def manifest(run: RunSpec, plans: dict[str, EvalPlan]) -> dict[str, Any]:
    """``benchmarks.json`` of the job: per benchmark its folder, tier, files, n, length and headline."""
    return {
        "run": run.name,
        "benchmarks": {
            b.name: {
                "dir": b.name,
                "tier": b.tier,
                "files": list(benchmark_files(run, b)),
                "n": b.n,
                "max_tokens": plans[b.name].max_tokens,
                "headline": list(b.headline),
            }
            for b in run.eval.benchmarks
        },
    }


def job_resources(run: RunSpec, plan: EvalPlan) -> dict[str, str | int]:
    """``--gpus-per-node``, ``--cpus-per-task`` and ``--mem`` of the job: per-GPU amounts times TP."""
    match = re.fullmatch(r"(\d+)([KMGT]?)", run.eval.mem_per_gpu)
    if match is None:
        raise ValueError(f"eval.mem_per_gpu {run.eval.mem_per_gpu!r} is not a Slurm memory size such as 128G")
    mem = f"{int(match.group(1)) * plan.tp}{match.group(2)}"
    return {"gpus": plan.tp, "cpus": run.eval.cpus_per_gpu * plan.tp, "mem": mem}


def render_eval_script(run: RunSpec, env: jinja2.Environment, chain_note: str = "", root: Path | None = None) -> str:
    """The evaluation sbatch script of ``run`` (site settings applied; ``chain_note`` and ``root`` as for
    ``render_script``).

    Raises:
        ValueError: the plan or the job's resources are invalid (see ``plan_eval``), or ``root`` cannot be
            written into a script.
    """
    benchmarks = []
    if run.eval.benchmarks:
        plans = benchmark_plans(run)
        plan = max(plans.values(), key=lambda p: p.max_model_len)
        files = [path for b in run.eval.benchmarks for path in benchmark_files(run, b)]
        for b in run.eval.benchmarks:
            p = plans[b.name]
            benchmarks.append({"spec": b, "plan": p, "args": eval_command(run, p, b)})
        eval_manifest = shlex.quote(json.dumps(manifest(run, plans), separators=(",", ":")))
    else:
        plan, files, eval_manifest = plan_eval(run), list(run.eval_files), ""
    return env.get_template(EVAL_TEMPLATE).render(
        run=run,
        slurm=run.slurm,
        plan=plan,
        resources=job_resources(run, plan),
        eval_files=list(dict.fromkeys(files)),
        eval_args=eval_command(run, plan) if not benchmarks else [],
        benchmarks=benchmarks,
        eval_manifest=eval_manifest,
        sampling=run.val_sampling,
        launcher=LAUNCHER,
        root=template_root(root),
        chain_note=chain_note,
    )
