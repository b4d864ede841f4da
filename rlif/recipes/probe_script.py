"""The probe job of a run: ``recipe/rlif/probe/<run>.sh``, one node, vLLM sized as the evaluation job is.

The job samples the run's base model on a stratified sample of its training prompts with its rollout settings, up
to the longer of the probe's caps, scores with its rewards and writes ``probe/<run>/probe.json``
(``rlif.eval.probe``); ``generate_train_recipes.py`` plans the run on that file once it exists. It asks for the
GPUs its tensor-parallel group needs to hold ``train.rollout_n`` samples of the prompt cap plus the longer cap
(``rlif.recipes.eval_script.fit_tp``), with the evaluation's per-GPU CPUs, memory and time limit.

A chained run (``from_winner``) is probed with its winner's settings: the generator resolves the chain
(``rlif.recipes.chained``) before rendering, and the script passes the winner's values of the link's ``take`` keys
to the entry (``--winner-setting KEY=JSON``), which rebuilds the run with them as generation does
(``Matrix.resolved``). The job thus measures the prompts, sampler and rewards of the training script generated from
the same results, whatever results arrive between generation and the job.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from rlif.recipes.eval_script import EvalPlan, fit_tp, job_resources
from rlif.recipes.render import LAUNCHER, template_root
from rlif.runs.probe import PROBE_DIR, PROMPTS_PER_INTERVAL, probe_caps
from rlif.runs.shapes import model_shape
from rlif.runs.spec import RunSpec

PROBE_TEMPLATE = "slurm_probe.sh.j2"
PROBE_SUBDIR = PROBE_DIR
"""Probe scripts go to ``<out>/probe/<run>.sh``, beside the training scripts."""


@dataclass(frozen=True)
class ChainSource:
    """A chained run's resolution as its probe job needs it.

    Attributes:
        note: the winner's line (``Resolution.explain``), written into the script's header.
        inherited: the winner's values of the link's ``take`` keys (dotted key -> value), passed to the entry.
    """

    note: str
    inherited: Mapping[str, Any]


def probe_refusal(run: RunSpec) -> str:
    """Why ``run`` gets no probe job (empty when it does): a CPU-mode run has no base model to measure, and a
    judge-scored run needs the judge server its training job starts. (A chained run gets one once its chain is
    resolved; see ``render_probe_script``.)"""
    if run.cpu_mode:
        return f"{run.name}: a CPU-mode run has no probe (it builds its tiny model at run time)"
    if run.judge.enabled:
        return f"{run.name}: scores with the LLM judge ({run.judge.model}), served only by its training job; no probe"
    return ""


def plan_probe(run: RunSpec) -> tuple[EvalPlan, tuple[int, ...]]:
    """The probe's vLLM plan and the caps it measures.

    Raises:
        ValueError: no tensor-parallel size holds the probe's samples (see ``fit_tp``), or the model is unknown.
    """
    caps = probe_caps(run, model_shape(run.model).max_position)
    plan = fit_tp(run, caps[-1], run.train.rollout_n, "lower train.rollout_n or train.max_response_length")
    return plan, caps


def probe_command(run: RunSpec, plan: EvalPlan, prompts: int, chain: ChainSource | None = None) -> list[str]:
    """The arguments of ``python -m rlif.eval.probe`` in the job besides ``--model`` and ``--out`` (which the
    launcher adds), as bash words; for a chained run also each setting it takes from its winner."""
    words = [
        f"--run {shlex.quote(run.name)}",
        f"--model-id {shlex.quote(run.model)}",
        f"--prompts-per-interval {prompts}",
        f"--tensor-parallel-size {plan.tp}",
        f"--gpu-memory-utilization {run.eval.gpu_memory_utilization!r}",
        f"--max-model-len {plan.max_model_len}",
    ]
    for key, value in (chain.inherited if chain else {}).items():
        words.append(f"--winner-setting {shlex.quote(f'{key}={json.dumps(value, sort_keys=True)}')}")
    return words


def render_probe_script(
    run: RunSpec,
    env: jinja2.Environment,
    prompts: int = PROMPTS_PER_INTERVAL,
    root: Path | None = None,
    chain: ChainSource | None = None,
) -> str:
    """The probe sbatch script of ``run`` (site settings applied); ``root`` as for ``render_script`` (None: the
    portable form, run from the submit directory). A chained run must come resolved
    (``rlif.recipes.chained.resolve_selection``), with its resolution in ``chain``.

    Raises:
        ValueError: the run gets no probe (``probe_refusal``), a chained run comes without ``chain``, its plan does
            not fit (``plan_probe``), or ``root`` cannot be written into a script.
    """
    refusal = probe_refusal(run)
    if refusal:
        raise ValueError(refusal)
    if run.from_winner is not None and chain is None:
        raise ValueError(
            f"{run.name}: settings from a stage winner ({run.from_winner.describe()}); resolve its chain first "
            "(generate_train_recipes.py --probe resolves it from --eval-root, as generation does)"
        )
    plan, caps = plan_probe(run)
    return env.get_template(PROBE_TEMPLATE).render(
        run=run,
        slurm=run.slurm,
        resources=job_resources(run, plan),
        caps=caps,
        prompts=prompts,
        probe_args=probe_command(run, plan, prompts, chain),
        chain_note=chain.note if chain else "",
        launcher=LAUNCHER,
        root=template_root(root),
    )
