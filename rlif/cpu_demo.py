"""The CPU demo: verl 0.9.1's real GRPO loop with every rlif hook, on a machine with no GPU.

``python -m rlif.cpu_demo`` builds a tiny random Qwen3 model, a local tokenizer and a small mixed IF / LogicIF /
graph dataset (rlif.demo_assets), trains 2 GRPO steps with vLLM's CPU build as rollout, rlif's reward entry and
sampling hooks and the recipes' KL loss against an fsdp2 reference model, saves a checkpoint, then resumes from it
for a 3rd step. It prints per-source rewards, sampler metrics and where every output went. Its config is the
matrix's CPU run with the demo's changes (``demo_run``), mapped to verl overrides as the generator maps a run. Each
training phase runs in a child process (rlif.verl_glue.demo_phase) with the CPU environment of
rlif.verl_glue.cpu_support, so this module itself never imports verl nor patches anything.

With ``--judge`` the data also holds a judged source (``judge/demo``: soft constraints gated by IF rule checks,
the ``judge`` reward family), scored by an OpenAI-compatible judge: the stand-in of rlif.demo_judge, which the demo
serves on loopback for the run's duration (deterministic, not a real judge), or the endpoint of ``--judge-url``.
With ``--reasoning-gym TASK`` (repeatable) it also holds that task's rows at levels 0 and 1 (``reasoning_gym/<task>``,
the ``reasoning_gym`` reward family). Every added source joins the sampler's weights in one place
(``_with_sources``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlif.demo_assets import JUDGE_SOURCE, reasoning_gym_sources
from rlif.demo_judge import STAND_IN_MODEL

if TYPE_CHECKING:
    from rlif.demo_assets import DemoAssets
    from rlif.runs.spec import RunSpec

DEFAULT_WORKDIR = Path("outputs/cpu_demo")
PROJECT = "rlif"
EXPERIMENT = "cpu_demo"


@dataclass(frozen=True)
class DemoLayout:
    """Every path the demo writes, under one work directory."""

    workdir: Path

    @property
    def checkpoints(self) -> Path:
        return self.workdir / "checkpoints" / PROJECT / EXPERIMENT

    def metrics_file(self, phase: int) -> Path:
        return self.workdir / "log" / f"metrics_phase{phase}.jsonl"

    def log_file(self, phase: int) -> Path:
        return self.workdir / "log" / f"phase{phase}.log"

    @property
    def legacy_metrics_file(self) -> Path:
        """Where rlif's dataset logs its sampler metrics with verl's legacy trainer (``hooks.LEGACY_METRICS``)."""
        return self.checkpoints / "rlif_sampler_metrics.jsonl"

    @property
    def legacy_resume_copy(self) -> Path:
        """The first step-3 ``data.pt`` of the legacy demo, kept before step 3 is trained again."""
        return self.workdir / "log" / "global_step_3_data_first.pt"


MATRIX = Path(__file__).resolve().parents[1] / "recipe" / "matrix.yaml"
"""The experiment matrix whose run ``cpu_demo`` the demo trains."""


def demo_matrix_run(matrix_path: Path = MATRIX) -> RunSpec:
    """The matrix's run ``cpu_demo``: every setting of the demo except the steps a phase trains to and the trainer.

    Raises:
        ValueError: the matrix has no run of that name (the message names the file and the run).
    """
    from rlif.runs.matrix import load_matrix

    matrix = load_matrix(matrix_path)
    if EXPERIMENT not in matrix.names():
        raise ValueError(f"{matrix_path}: the CPU demo trains the matrix run {EXPERIMENT!r}, which is missing")
    (run,) = matrix.select(names=[EXPERIMENT])
    return run


JUDGE_WEIGHT = 4
"""The judged source's ``fixed_ratio`` weight beside the matrix run's (13 in all): with the sampler's seed it is
drawn at each of the demo's three steps, and the IF source still is too."""

REASONING_GYM_WEIGHT = 4
"""Each reasoning-gym source's ``fixed_ratio`` weight, added after the judged source: with the sampler's seed a
demo with ``family_relationships`` (or ``base_conversion``) beside the judged source draws both at steps 1 and 3,
one in each phase, and the IF source at every step."""


@dataclass(frozen=True)
class DemoJudge:
    """The judge that scores the demo's judged source (``rlif.demo_assets.JUDGE_SOURCE``).

    Attributes:
        url: an OpenAI-compatible endpoint (``http://host:port/v1``); empty: the stand-in judge
            (``rlif.demo_judge.StandInJudge``), which ``run_demo`` starts on loopback and fills in.
        model: the model the endpoint serves.
    """

    url: str = ""
    model: str = STAND_IN_MODEL


def demo_run(
    total_steps: int,
    trainer: str = "v1_sync",
    matrix_path: Path = MATRIX,
    judge: DemoJudge | None = None,
    reasoning_gym: Sequence[str] = (),
) -> RunSpec:
    """The demo's run for one phase: the matrix's ``cpu_demo`` run trained up to ``total_steps`` with ``trainer``.

    Args:
        total_steps: the step the phase trains up to (2, then 3 after resuming).
        trainer: the run's ``train.trainer`` (``v1_sync``, ``v1_colocate_async`` or ``legacy``).
        matrix_path: the matrix holding the ``cpu_demo`` run.
        judge: with a judged source, its judge (its ``url`` set): the run's ``judge:`` setting names it, which
            fills the reward's ``judge_url`` and ``judge_model``, and the sampler weighs the source
            ``JUDGE_WEIGHT``.
        reasoning_gym: reasoning-gym tasks whose sources (``reasoning_gym/<task>``) the sampler weighs
            ``REASONING_GYM_WEIGHT`` each, after the judged source.

    Raises:
        ValueError: a judge on the legacy trainer (only rlif's V1 replay buffer takes unjudged samples out of the
            loss), a judge without a URL or model, a reasoning-gym task rlif does not support or named twice, or a
            matrix run whose sampler has no ``weights`` to add a source to.
    """
    run = demo_matrix_run(matrix_path)
    train = dataclasses.replace(run.train, total_training_steps=total_steps, trainer=trainer)
    run = dataclasses.replace(run, train=train)
    added: dict[str, float] = {}
    if judge is not None:
        run = _with_judge(run, judge)
        added[JUDGE_SOURCE] = JUDGE_WEIGHT
    added |= {source: REASONING_GYM_WEIGHT for source in reasoning_gym_sources(reasoning_gym)}
    return _with_sources(run, added, matrix_path)


def check_judge_trainer(trainer: str) -> None:
    """Refuse a judged source on the legacy trainer, whose batches never pass rlif's V1 replay buffer.

    Raises:
        ValueError: ``trainer`` is ``legacy``.
    """
    if trainer == "legacy":
        raise ValueError(
            "a judged source needs a V1 trainer (v1_sync or v1_colocate_async): only rlif's V1 replay buffer takes "
            "samples the judge gave no verdict for out of the loss; drop --judge or pick another --trainer"
        )


def _with_judge(run: RunSpec, judge: DemoJudge) -> RunSpec:
    """``run`` with ``judge`` in its ``judge:`` setting (the sampler's weight is ``_with_sources``'s)."""
    from rlif.runs.spec import JudgeSpec, judge_problems, with_judge_options

    check_judge_trainer(run.train.trainer)
    spec = JudgeSpec(model=judge.model, gpus=0, port=run.judge.port, url=judge.url)
    problems = judge_problems(spec, run.slurm) if judge.url else ["the judge has no URL"]
    if problems:
        raise ValueError("the CPU demo's judge: " + "; ".join(problems))
    return dataclasses.replace(run, judge=spec, reward=with_judge_options(run.reward, spec))


def _with_sources(run: RunSpec, weights: dict[str, float], matrix_path: Path) -> RunSpec:
    """``run`` whose sampler also weighs the data sources the demo adds (``weights``, in that order: the sampler's
    draws follow the order of its weights), the one way a source joins the demo run's sampler."""
    if not weights:
        return run
    current = run.sampler.params.get("weights")
    if not isinstance(current, dict):
        raise ValueError(
            f"{matrix_path}: run {EXPERIMENT!r} needs a sampler with params.weights to add the sources "
            f"{', '.join(weights)} to (its sampler is {run.sampler.name!r})"
        )
    params = {**run.sampler.params, "weights": {**current, **weights}}
    return dataclasses.replace(run, sampler=dataclasses.replace(run.sampler, params=params))


def demo_overrides(
    model_dir: Path,
    train_file: Path,
    val_file: Path,
    layout: DemoLayout,
    total_steps: int,
    *,
    trainer: str = "v1_sync",
    resume_from: int | None = None,
    matrix_path: Path = MATRIX,
    judge: DemoJudge | None = None,
    reasoning_gym: Sequence[str] = (),
) -> list[str]:
    """The demo's Hydra overrides: ``demo_run``'s overrides as the generator builds them, the CPU overrides
    included, with the demo's model, data and checkpoint paths. A key the CPU overrides set again keeps its place
    and takes their value, so each key appears once. ``resume_from``: resume from that step's checkpoint instead
    of the newest; ``judge``: the judge of a judged source, ``reasoning_gym``: the reasoning-gym tasks of the data
    (``demo_run``)."""
    from rlif.verl_glue.overrides import Override, all_overrides, runtime_values, substitute

    run = demo_run(total_steps, trainer, matrix_path, judge, reasoning_gym)
    values = runtime_values(run, str(MATRIX.parents[1]), str(model_dir.resolve()))
    values |= {
        "TRAIN_FILES": f"[{train_file.resolve()}]",
        "VAL_FILES": f"[{val_file.resolve()}]",
        "CKPT_DIR": str(layout.checkpoints.resolve()),
    }
    merged: dict[str, Override] = {}
    for override in all_overrides(run):
        merged[override.key] = override
    if resume_from is not None:
        merged["trainer.resume_mode"] = Override("trainer.resume_mode", "resume_path")
        step_dir = layout.checkpoints.resolve() / f"global_step_{resume_from}"
        merged["trainer.resume_from_path"] = Override("trainer.resume_from_path", str(step_dir))
    return [substitute(override, values) for override in merged.values()]


@dataclass(frozen=True)
class PhaseStats:
    """Wall time and peak resident memory of one phase's whole process tree (Ray, vLLM and FSDP workers)."""

    wall_s: float
    peak_rss_gib: float


def run_phase(phase: int, overrides: Sequence[str], layout: DemoLayout, total_steps: int) -> PhaseStats:
    """Run one training phase (``rlif.verl_glue.demo_phase``) in a child process with the CPU environment, showing
    its progress live.

    Raises:
        RuntimeError: the phase failed; the message names its log file.
    """
    from rlif.verl_glue.cpu_support import cpu_env, is_installed

    if not is_installed():
        raise RuntimeError(
            "the CPU start-up hook is not installed: run `python -m rlif.verl_glue.cpu_support install` first"
        )
    log_file = layout.log_file(phase)
    metrics_file = layout.metrics_file(phase)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    spec = json.dumps({"overrides": list(overrides), "metrics_file": str(metrics_file)})
    env = {**os.environ, **cpu_env(), "PYTHONUNBUFFERED": "1"}
    start = time.monotonic()
    with open(log_file, "w", encoding="utf-8") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "rlif.verl_glue.demo_phase", spec],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        peak = _show_progress(child, phase, log_file, start, total_steps)
    elapsed = time.monotonic() - start
    if child.returncode != 0:
        raise RuntimeError(f"training phase {phase} failed (exit {child.returncode}); see {log_file}")
    return PhaseStats(wall_s=elapsed, peak_rss_gib=peak / 2**30)


def _tree_rss(root: Any) -> int:
    """Resident memory of a process and all its descendants, in bytes (processes that vanish are skipped)."""
    import psutil

    total = 0
    try:
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    for process in processes:
        try:
            total += process.memory_info().rss
        except psutil.Error:
            continue
    return total


MILESTONES = (
    ("Started a local Ray instance", "verl's config and dataset"),
    ("create worker group", "the FSDP actor and reference workers"),
    ("actor and ref model engine initialized", "the reward workers and the vLLM rollout server"),
    ("vLLMHttpServer, replica_rank", "the vLLM rollout server (CPU build: about a minute)"),
    ("ready to fit", "rollout of step {next}: vLLM generates, rlif scores, the sampler gets feedback"),
    ("Saving checkpoint to", "the step-{next} checkpoint to be written"),
)
"""Lines of a verl 0.9.1 V1 run's log that mark start-up stages, in order, and what the run waits for after each
(``{next}`` is the step in progress)."""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STEP_DONE = re.compile(r"\bstep:(\d+) - ")
_RESUMED = re.compile(r"setting global step to (\d+)")


@dataclass(frozen=True)
class Progress:
    """Where a training phase is, read from its log.

    Attributes:
        done: steps finished (a resumed run starts at its checkpoint's step).
        total: the step the phase trains up to.
        waiting_for: what the run is doing now, in words.
    """

    done: int
    total: int
    waiting_for: str

    def line(self, phase: int, elapsed: float) -> str:
        """``phase 1 [ 95s] step 0/2 done, waiting for: ...``"""
        return f"phase {phase} [{elapsed:4.0f}s] step {self.done}/{self.total} done, waiting for: {self.waiting_for}"


def parse_progress(log_text: str, total: int) -> Progress:
    """Progress of a verl run from its (possibly partial) log.

    The step count comes from verl's console logger (``step:N - ...``) and, for a resumed run, its ``setting
    global step to N`` line; before the first step the last start-up milestone says what it waits for.
    """
    text = _ANSI.sub("", log_text)
    done = max((int(m) for m in _STEP_DONE.findall(text)), default=0)
    done = max(done, *(int(m) for m in _RESUMED.findall(text)), 0)
    waiting = "Ray to start"
    last_at = -1
    for marker, description in MILESTONES:
        at = text.rfind(marker)
        if at > last_at:
            last_at, waiting = at, description
    last_step = max((m.start() for m in _STEP_DONE.finditer(text)), default=-1)
    if last_step > last_at:
        waiting = "rollout of step {next}: vLLM generates, rlif scores, the sampler gets feedback"
    if done >= total:
        waiting = "Ray to shut down"
    return Progress(done=done, total=total, waiting_for=waiting.format(next=done + 1))


HEARTBEAT_S = 30.0
"""Without a terminal, the progress line is printed when it changes, and at least this often."""


def _show_progress(
    child: subprocess.Popen, phase: int, log_file: Path, start: float, total: int, *, poll_s: float = 1.0
) -> int:
    """Report the phase's progress until it ends (a live status line on a terminal, dated lines in a log); return
    the peak resident memory of its process tree."""
    import psutil
    from rich.console import Console

    console = Console(stderr=True)
    root = psutil.Process(child.pid)
    peak = 0

    def current() -> Progress:
        try:
            text = log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        return parse_progress(text, total)

    if console.is_terminal:
        with console.status(f"phase {phase}") as status:
            while child.poll() is None:
                peak = max(peak, _tree_rss(root))
                status.update(current().line(phase, time.monotonic() - start))
                time.sleep(poll_s)
        return peak
    shown, shown_at = "", 0.0
    while child.poll() is None:
        peak = max(peak, _tree_rss(root))
        progress = current()
        now = time.monotonic()
        if progress.waiting_for != shown or now - shown_at >= HEARTBEAT_S:
            print(progress.line(phase, now - start), file=sys.stderr, flush=True)
            shown, shown_at = progress.waiting_for, now
        time.sleep(poll_s)
    return peak


def read_metrics(path: Path) -> dict[int, dict[str, Any]]:
    """Step -> metrics from verl's file logger (JSON lines of ``{"step", "data"}``)."""
    steps: dict[int, dict[str, Any]] = {}
    if not path.exists():
        return steps
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            steps.setdefault(int(entry["step"]), {}).update(entry["data"])
    return steps


def _number(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


NO_VERDICT_PREFIX = "sampler/no_verdict/"
"""The replay buffer's metrics of samples without a verdict (``rlif.verl_glue.v1_feedback.drop_no_verdict``)."""


def summarise(steps: dict[int, dict[str, Any]]) -> list[str]:
    """The demo's result as two plain-text tables.

    Per step: verl's mean score and gradient norm, and the mean reward of each data source with its response count
    (``train/<source>/reward_mean`` and ``/count``, logged by rlif's feedback hook). Per source after the last step:
    the sampler's weight and its cumulative draws (``sampler/weight/<source>``, ``sampler/draws/<source>/<interval>``
    summed over intervals); any other ``sampler/`` metric follows on one line. Then the exposure per source since
    the start (``exposure/cum_prompts``, ``unique_prompts``, ``cum_tokens``, ``cum_truncated_share``), which a
    sampler changes along with the mix. Last, the judged sources per step (``judge_summary``), whose
    ``sampler/no_verdict/*`` metrics are left out of the other sampler metrics.
    """
    from rlif.data.summary import format_table

    if not steps:
        return ["no metrics were logged"]
    sources = sorted(
        {key[len("train/") : -len("/reward_mean")] for m in steps.values() for key in m if key.endswith("/reward_mean")}
    )
    rows = []
    for step in sorted(steps):
        metrics = steps[step]
        cells = [str(step), _number(metrics.get("critic/score/mean")), _number(metrics.get("actor/grad_norm"))]
        for source in sources:
            mean, count = metrics.get(f"train/{source}/reward_mean"), metrics.get(f"train/{source}/count")
            cells.append("-" if mean is None else f"{mean:.2f} ({count:g})" if count is not None else f"{mean:.2f}")
        rows.append(cells)
    lines = ["reward per step (mean reward per data source, responses in brackets):"]
    lines += format_table(["step", "score", "grad norm", *sources], rows).splitlines()
    last_step = max(steps)
    last = steps[last_step]
    draws: dict[str, float] = {}
    weights: dict[str, float] = {}
    other = {}
    for key, value in sorted(last.items()):
        if key.startswith("sampler/draws/"):
            source = key[len("sampler/draws/") :].rsplit("/", 1)[0]
            draws[source] = draws.get(source, 0.0) + value
        elif key.startswith("sampler/weight/"):
            weights[key[len("sampler/weight/") :]] = value
        elif key.startswith("sampler/") and not key.startswith(NO_VERDICT_PREFIX):
            other[key] = value
    if draws or weights:
        lines.append(f"sampler after step {last_step} (weights and cumulative draws per data source):")
        table = [[s, _number(weights.get(s)), f"{draws.get(s, 0):g}"] for s in sorted({*draws, *weights})]
        lines += format_table(["source", "weight", "draws"], table).splitlines()
    if other:
        lines.append("other sampler metrics: " + ", ".join(f"{k}={v:g}" for k, v in other.items()))
    exposure = {"prompts": "exposure/cum_prompts/", "unique": "exposure/unique_prompts/"}
    exposure.update({"tokens": "exposure/cum_tokens/", "truncated": "exposure/cum_truncated_share/"})
    exposed = sorted({k[len(exposure["prompts"]) :] for k in last if k.startswith(exposure["prompts"])})
    if exposed:
        lines.append(f"exposure after step {last_step} (prompts trained, unique rows drawn, tokens, truncated share):")
        table = [[s, *(_number(last.get(prefix + s)) for prefix in exposure.values())] for s in exposed]
        lines += format_table(["source", *exposure], table).splitlines()
    return lines + judge_summary(steps)


def judge_summary(steps: dict[int, dict[str, Any]]) -> list[str]:
    """The judged sources per step, as a plain-text table (nothing when no step scored one).

    From the reward flags the replay buffer reads (``train/<source>/judge_gated`` and ``/judge_no_verdict``, over
    every response of the source): the share the judge gave a verdict for (the rest: 1 minus both, since every
    judged row of the demo has soft constraints), the share a rule check gated, the share without a verdict. Then
    the mean reward and response count the sampler was given (``train/<source>/reward_mean``, ``/count``: judged
    responses only) and the buffer's own no-verdict rate and dropped responses (``sampler/no_verdict/*``).
    """
    from rlif.data.summary import format_table

    suffix = "/judge_no_verdict"
    rows = []
    for step in sorted(steps):
        metrics = steps[step]
        for key in sorted(k for k in metrics if k.startswith("train/") and k.endswith(suffix)):
            source = key[len("train/") : -len(suffix)]
            no_verdict, gated = metrics[key], metrics.get(f"train/{source}/judge_gated", 0.0)
            mean, count = metrics.get(f"train/{source}/reward_mean"), metrics.get(f"train/{source}/count")
            rows.append(
                [
                    str(step),
                    source,
                    _number(max(0.0, 1.0 - gated - no_verdict), 2),
                    _number(gated, 2),
                    _number(no_verdict, 2),
                    "-" if mean is None else f"{mean:.3f} ({count:g})",
                    _number(metrics.get(NO_VERDICT_PREFIX + "rate"), 2),
                    _number(metrics.get(NO_VERDICT_PREFIX + "dropped_responses"), 0),
                ]
            )
    if not rows:
        return []
    header = ["step", "source", "judged", "gated", "no verdict", "sampler reward", "buffer no-verdict", "dropped"]
    lines = ["judge per step (share of the source's responses; reward the sampler got, responses in brackets):"]
    return lines + format_table(header, rows).splitlines()


def prepare_data(workdir: Path, judge: bool = False, reasoning_gym: Sequence[str] = ()) -> DemoAssets:
    """The demo's model, tokenizer and data (``rlif.demo_assets.prepare``), every training prompt checked against
    the demo run's prompt limit with its thinking switch, as verl's overlong-prompt filter counts it.

    Raises:
        ValueError: see ``rlif.demo_assets.prepare``.
    """
    from rlif.demo_assets import prepare

    run = demo_matrix_run()
    return prepare(
        workdir, reasoning_gym, judge, max_prompt_length=run.train.max_prompt_length, enable_thinking=run.think
    )


def run_demo(
    workdir: Path, trainer: str = "v1_sync", judge: DemoJudge | None = None, reasoning_gym: Sequence[str] = ()
) -> int:
    """Prepare assets, train 2 steps with checkpoints, resume for a 3rd; print results and output locations.

    ``trainer`` is the run's ``train.trainer``. With ``v1_colocate_async`` (verl's V1 async trainer) the demo trains
    the 2 steps only: it shows rlif's feedback hook working there; resuming is the same code as with ``v1_sync``.
    With ``legacy`` verl gives no feedback after a run's last step, so the demo trains 3 steps and then trains step
    3 again from the step-2 checkpoint, which a run that never stopped would also resume from: the two step-3
    checkpoints' sampler states must be equal (``legacy_resume_copy`` keeps the first).

    ``judge`` adds the judged source to the data and scores it with that judge; a judge without a URL is the
    stand-in (``rlif.demo_judge.StandInJudge``), served on loopback from before phase 1 until the summary.
    ``reasoning_gym`` adds the rows of those reasoning-gym tasks (levels 0 and 1) as sources the sampler weighs.

    Returns:
        0, or 2 when the data is refused before any training (``prepare_data``: a reasoning-gym task rlif does not
        support, names twice, or whose demo prompts exceed the run's prompt limit), the reason printed on one line.

    Raises:
        ValueError: a judge with the legacy trainer (``check_judge_trainer``).
    """
    if judge is not None:
        check_judge_trainer(trainer)
    if judge is None or judge.url:
        return _run_demo(workdir, trainer, judge, reasoning_gym)
    from rlif.demo_judge import StandInJudge

    with StandInJudge(judge.model) as stand_in:
        code = _run_demo(workdir, trainer, DemoJudge(url=stand_in.url, model=stand_in.model), reasoning_gym)
        print(
            f"[rlif demo] the stand-in judge at {stand_in.url} answered {stand_in.requests} requests "
            "(rlif/demo_judge.py: each answer is a hash of the request, not a judgement)"
        )
    return code


def _run_demo(workdir: Path, trainer: str, judge: DemoJudge | None, reasoning_gym: Sequence[str]) -> int:
    """``run_demo`` with the judge, if any, already reachable at its URL."""
    layout = DemoLayout(workdir)
    data = "IF/LogicIF/graph" + ("/reasoning-gym" if reasoning_gym else "") + ("/judged" if judge is not None else "")
    print(f"[rlif demo] building tiny model, tokenizer and mixed {data} data in {workdir}")
    if judge is not None:
        print(f"[rlif demo] judged source {JUDGE_SOURCE}: judge {judge.model} at {judge.url}")
    if reasoning_gym:
        sources = ", ".join(reasoning_gym_sources(reasoning_gym))
        print(f"[rlif demo] reasoning-gym sources {sources}: levels 0 and 1, weight {REASONING_GYM_WEIGHT} each")
    try:
        assets = prepare_data(workdir, judge is not None, reasoning_gym)
    except ValueError as err:
        print(f"[rlif demo] error: {err}", file=sys.stderr)
        return 2
    for stale in (layout.metrics_file(1), layout.metrics_file(2)):
        stale.unlink(missing_ok=True)
    if layout.checkpoints.exists():
        import shutil

        shutil.rmtree(layout.checkpoints)
    start = time.monotonic()
    first_steps = 3 if trainer == "legacy" else 2
    print(f"[rlif demo] phase 1: {first_steps} GRPO steps ({trainer} trainer), a checkpoint after each")
    overrides = demo_overrides(
        assets.model_dir,
        assets.train_file,
        assets.val_file,
        layout,
        first_steps,
        trainer=trainer,
        judge=judge,
        reasoning_gym=reasoning_gym,
    )
    phase1 = run_phase(1, overrides, layout, total_steps=first_steps)
    print(f"[rlif demo] phase 1 done in {phase1.wall_s:.0f}s, peak memory {phase1.peak_rss_gib:.1f} GiB")
    phases = [1]
    if trainer != "v1_colocate_async":
        resume_from = None
        if trainer == "legacy":
            import shutil

            resume_from = 2
            last = layout.checkpoints / "global_step_3" / "data.pt"
            shutil.copyfile(last, layout.legacy_resume_copy)
        print("[rlif demo] phase 2: resume from the step-2 checkpoint for step 3")
        overrides = demo_overrides(
            assets.model_dir,
            assets.train_file,
            assets.val_file,
            layout,
            3,
            trainer=trainer,
            resume_from=resume_from,
            judge=judge,
            reasoning_gym=reasoning_gym,
        )
        phase2 = run_phase(2, overrides, layout, total_steps=3)
        print(f"[rlif demo] phase 2 done in {phase2.wall_s:.0f}s, peak memory {phase2.peak_rss_gib:.1f} GiB")
        phases.append(2)
    steps: dict[int, dict[str, Any]] = {}
    for phase in phases:
        steps.update(read_metrics(layout.metrics_file(phase)))
    for step, metrics in read_metrics(layout.legacy_metrics_file).items():
        steps.setdefault(step, {}).update(metrics)
    print("\n".join(summarise(steps)))
    print(f"[rlif demo] total training wall time {time.monotonic() - start:.0f}s")
    print(f"[rlif demo] model and tokenizer: {assets.model_dir}")
    print(f"[rlif demo] data: {assets.train_file}, {assets.val_file}")
    print(f"[rlif demo] checkpoints: {layout.checkpoints}")
    metrics_files = [str(layout.metrics_file(p)) for p in phases]
    if trainer == "legacy":
        metrics_files.append(f"{layout.legacy_metrics_file} (rlif's sampler metrics)")
    print(f"[rlif demo] metrics: {', '.join(metrics_files)}")
    print(f"[rlif demo] full logs: {', '.join(str(layout.log_file(p)) for p in phases)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry: the whole demo, or only its model, tokenizer and data."""
    from rewards.reasoning_gym_tasks import TASKS

    parser = argparse.ArgumentParser(prog="python -m rlif.cpu_demo", description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, help="where every output goes")
    parser.add_argument("--prepare", type=Path, metavar="DIR", help="only build model, tokenizer and data in DIR")
    parser.add_argument(
        "--trainer",
        choices=("v1_sync", "v1_colocate_async", "legacy"),
        default="v1_sync",
        help="the run's train.trainer (v1_colocate_async trains 2 steps without the resume phase)",
    )
    parser.add_argument(
        "--reasoning-gym",
        action="append",
        default=[],
        choices=TASKS,
        metavar="TASK",
        help=f"add the rows of this reasoning-gym task (levels 0 and 1) as a source the sampler weighs "
        f"{REASONING_GYM_WEIGHT}; repeat for more tasks ({', '.join(TASKS)}; the demo's prompt limit takes "
        "base_conversion and family_relationships)",
    )
    parser.add_argument(
        "--judge",
        action="store_true",
        help=f"add the judged source {JUDGE_SOURCE} (soft constraints gated by IF rule checks) and score it with a "
        "judge: by default a stand-in the demo serves on loopback (rlif/demo_judge.py; deterministic, not a real "
        "judge)",
    )
    parser.add_argument(
        "--judge-url",
        metavar="URL",
        help="with --judge: ask this OpenAI-compatible endpoint (http://host:port/v1) instead of the stand-in",
    )
    parser.add_argument("--judge-model", metavar="NAME", help="the model the --judge-url endpoint serves")
    args = parser.parse_args(argv)
    if (args.judge_url or args.judge_model) and not args.judge:
        parser.error("--judge-url and --judge-model go with --judge")
    if bool(args.judge_url) != bool(args.judge_model):
        parser.error("--judge-url and --judge-model go together: name the endpoint and the model it serves")
    if args.prepare:
        try:
            print(prepare_data(args.prepare, args.judge, args.reasoning_gym).as_json())
        except ValueError as err:
            parser.error(str(err))
        return 0
    judge = None
    if args.judge:
        judge = DemoJudge(url=args.judge_url, model=args.judge_model) if args.judge_url else DemoJudge()
        try:
            check_judge_trainer(args.trainer)
            if judge.url:
                demo_run(2, args.trainer, judge=judge)  # a bad URL is refused before any work
        except ValueError as err:
            parser.error(str(err))
    return run_demo(args.workdir, args.trainer, judge, args.reasoning_gym)


if __name__ == "__main__":
    sys.exit(main())
