"""The probe job's entry (``rlif.eval.probe``): stratification by the run's sampler intervals, rollout sampling,
scoring with the run's rewards, the probe file it writes, resuming, and one-line errors. The engine is a fake here;
``test_eval_probe_vllm.py`` runs vLLM's CPU build."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from eval_testkit import verl_file
from run_matrices import with_shipped_defaults
from synthetic_evals import graph_records, write_evaluation

from rlif.demo_assets import demo_rows
from rlif.eval.eval_rows import load_eval_rows
from rlif.eval.generation import Completion
from rlif.eval.probe import build_parser, main, rollout_sampling, run_probe, stratify
from rlif.recipes.cli import main as recipes_main
from rlif.runs.matrix import load_matrix
from rlif.runs.probe import load_probe

RUN = "probe_demo"


def write_matrix(tmp_path: Path, train_file: Path, sampler: str) -> Path:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        with_shipped_defaults(
            f"runs:\n  - name: {RUN}\n    stage: test\n    description: probe on the demo data\n"
            "    model: Qwen/Qwen3-1.7B\n"
            f"    train_files: [{train_file}]\n"
            "    train: {max_response_length: 8, max_prompt_length: 1000, rollout_n: 2, temperature: 0.9}\n"
            f"    sampler: {sampler}\n"
        ),
        encoding="utf-8",
    )
    return matrix


CURRICULUM = (
    "{name: reward_curriculum, params: {curriculum_sources: [logicif], initial_fraction: 0.25, num_intervals: 3}}"
)


@pytest.fixture
def demo(tmp_path):
    train = verl_file(tmp_path / "train.parquet", demo_rows("train"))
    return train, write_matrix(tmp_path, train, CURRICULUM)


class FakeEngine:
    """Responses of a length fixed by the prompt's id: some stop early, some reach the longer cap."""

    def __init__(self, sampling):
        self.sampling = sampling
        self.calls = 0

    def generate(self, requests):
        self.calls += 1
        out = []
        for request in requests:
            long = request.row.item_id.endswith(("0", "2"))
            tokens = self.sampling.max_tokens if long else 5
            reason = "length" if long else "stop"
            out.append([Completion("no answer", reason, tokens) for _ in range(request.n)])
        return out


def fake_ids(model, rows, think):
    return {row.item_id: [1] * (len(row.prompt) // 4 + 10) for row in rows}


def probe_args(matrix: Path, out: Path, *extra: str):
    return build_parser().parse_args(["--matrix", str(matrix), "--run", RUN, "--model", "Qwen/Qwen3-1.7B",
                                      "--out", str(out), *extra])  # fmt: skip


def test_strata_are_the_run_samplers_intervals(demo):
    train, matrix = demo
    run = load_matrix(matrix).select([RUN])[0]
    rows = load_eval_rows([train])
    strata = stratify(rows, run, per_interval=1, seed=0, where=str(train))
    keys = [(s.source, s.interval) for s in strata]
    # logicif's 4 rows: 1 in the initial interval, then 3 intervals of one row; every other source whole
    graphs = [(f"graph/{task}", "all") for task in ("mcp", "mis", "mvc", "tsp")]
    logicif = [("logicif", str(interval)) for interval in range(4)]
    assert keys == [*graphs, ("iftrain", "all"), *logicif]
    assert [s.rows for s in strata] == [1, 1, 1, 1, 6, 1, 1, 1, 1]
    assert all(len(s.chosen) == 1 for s in strata)
    # the same seed draws the same prompts; another seed may draw others from the 6 iftrain rows
    again = stratify(rows, run, per_interval=1, seed=0, where=str(train))
    assert [s.chosen for s in again] == [s.chosen for s in strata]
    assert len({stratify(rows, run, 1, seed, str(train))[4].chosen[0].item_id for seed in range(20)}) > 1
    with pytest.raises(ValueError, match="--prompts-per-interval 0"):
        stratify(rows, run, per_interval=0, seed=0, where=str(train))


def test_a_row_without_its_difficulty_is_named(tmp_path, capsys):
    rows = demo_rows("train")
    logicif = next(r for r in rows if r["data_source"] == "logicif")
    logicif["extra_info"] = {k: v for k, v in logicif["extra_info"].items() if k != "difficulty"}
    train = verl_file(tmp_path / "train.parquet", rows)
    matrix = write_matrix(tmp_path, train, CURRICULUM)
    code = main(["--matrix", str(matrix), "--run", RUN, "--model", "m", "--out", str(tmp_path / "o")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {train}: row 6 field extra_info.difficulty is missing (source 'logicif')")
    assert err.count("\n") == 1


def test_rollout_sampling_is_the_runs(demo):
    run = load_matrix(demo[1]).select([RUN])[0]
    sampling = rollout_sampling(run, 32, seed=3)
    assert (sampling.think, sampling.n, sampling.temperature, sampling.top_p, sampling.top_k) == (True, 2, 0.9, 1.0, -1)
    assert sampling.max_tokens == 32


def test_probe_writes_a_file_the_planner_reads_and_resumes(demo, tmp_path, capsys):
    _, matrix = demo
    out = tmp_path / "probe" / RUN
    engines = []

    def factory(model, sampling, token_ids, args):
        engines.append(FakeEngine(sampling))
        return engines[-1]

    path = run_probe(probe_args(matrix, out, "--prompts-per-interval", "3"), factory, fake_ids)
    assert path == out / "probe.json"
    probe = load_probe(path)
    assert (probe.model, probe.think, probe.caps) == ("Qwen/Qwen3-1.7B", True, (8, 32))
    iftrain = next(e for e in probe.entries if e.source == "iftrain")
    assert (iftrain.n_prompts, iftrain.rows) == (3, 6)
    assert engines[0].sampling.max_tokens == 32 and engines[0].sampling.n == 2
    # every long response stopped at the longer cap: truncated at both caps
    long_share = iftrain.truncation_rate[32]
    assert iftrain.truncation_rate[8] == long_share and 0 < long_share < 1
    assert iftrain.response_tokens.p99 == 32
    # a response cut at the run's cap counts as wrong there: the pass rate can only fall with the cap
    assert iftrain.pass_rate_by_cap[8] <= iftrain.pass_rate_by_cap[32] == iftrain.pass_rate
    timing = json.loads((out / "timing.json").read_text())
    assert timing["tokens"] > 0 and timing["gpus"] == 1
    err = capsys.readouterr().err
    assert "iftrain interval all: 3 of 6 rows" in err and "warning: probe_demo: iftrain interval all: truncation" in err

    before = path.read_bytes()
    run_probe(probe_args(matrix, out, "--prompts-per-interval", "3"), factory, fake_ids)
    assert len(engines) == 1  # nothing left to generate: no engine started
    assert "already have 2 samples" in capsys.readouterr().err
    assert json.loads(path.read_bytes())["entries"] == json.loads(before)["entries"]


def test_other_sampling_in_the_same_directory_is_one_line(demo, tmp_path):
    _, matrix = demo
    out = tmp_path / "o"
    factory = lambda model, sampling, ids, args: FakeEngine(sampling)  # noqa: E731
    assert run_probe(probe_args(matrix, out, "--prompts-per-interval", "1"), factory, fake_ids)
    with pytest.raises(ValueError, match=r"generation.json: the responses here were generated with seed=0"):
        run_probe(probe_args(matrix, out, "--prompts-per-interval", "1", "--seed", "5"), factory, fake_ids)


def test_unknown_run_and_missing_file_are_one_line(demo, tmp_path, capsys):
    _, matrix = demo
    assert main(["--matrix", str(matrix), "--run", "nope", "--model", "m", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("error: unknown run(s) ['nope']")
    assert main(["--matrix", str(tmp_path / "none.yaml"), "--run", RUN, "--model", "m"]) == 2
    assert "none.yaml: file not found" in capsys.readouterr().err


# ---- chained runs: generate_train_recipes.py --probe resolves the chain, the entry rebuilds the run -------------


def write_chain_matrix(tmp_path: Path, sign_off: bool = False) -> tuple[Path, Path, Path]:
    """Stage s1: run ``a`` on the iftrain rows only, run ``b`` on every demo row with the curriculum sampler; stage
    s2: run ``c``, another model, takes the winner's data and sampler. Returns (matrix, a's file, b's file)."""
    rows = demo_rows("train")
    small = verl_file(tmp_path / "small.parquet", [r for r in rows if r["data_source"] == "iftrain"])
    full = verl_file(tmp_path / "full.parquet", rows)
    link = f"{{stage: s1, metric: graph/optimal_rate, take: [train_files, sampler], sign_off: {str(sign_off).lower()}}}"
    matrix = tmp_path / "recipe" / "matrix.yaml"
    matrix.parent.mkdir(exist_ok=True)
    matrix.write_text(
        with_shipped_defaults(
            "defaults:\n  model: Qwen/Qwen3-1.7B\n"
            "  train: {max_response_length: 8, max_prompt_length: 1000, rollout_n: 2, temperature: 0.9,\n"
            "          train_batch_size: 2, ppo_mini_batch_size: 2, total_epochs: 200}\n  slurm: {gpus_per_node: 1}\n"
            "runs:\n"
            f"  - {{name: a, stage: s1, description: d, train_files: [{small}]}}\n"
            f"  - {{name: b, stage: s1, description: d, train_files: [{full}], sampler: {CURRICULUM}}}\n"
            f"  - {{name: c, stage: s2, description: d, model: Qwen/Qwen3-0.6B, from_winner: {link}}}\n"
        ),
        encoding="utf-8",
    )
    return matrix, small, full


def write_chain_results(eval_root: Path) -> None:
    """Final-step (500) evaluations where ``b`` wins stage s1 clearly."""
    for run, value, seed in (("a", 0.30, 1), ("b", 0.45, 2)):
        write_evaluation(eval_root / run / "500", graph_records(value, seed=seed))


def generate_probe(matrix: Path, tmp_path: Path, eval_root: Path, *selection: str) -> int:
    return recipes_main(["--matrix", str(matrix), *selection, "--out", str(tmp_path / "out"), "--eval-root",
                         str(eval_root), "--env-file", str(tmp_path / ".env")])  # fmt: skip


def script_probe_args(script: Path) -> list[str]:
    """The words of the script's ``PROBE_ARGS=( ... )``, as bash reads them."""
    text = script.read_text(encoding="utf-8")
    block = text[text.index("PROBE_ARGS=(\n") + len("PROBE_ARGS=(\n") : text.index("\n)\nprobe_run")]
    return shlex.split(block)


def test_a_chained_run_is_probed_with_its_winners_settings(tmp_path, capsys):
    matrix, small, full = write_chain_matrix(tmp_path)
    eval_root = tmp_path / "eval"
    write_chain_results(eval_root)
    assert generate_probe(matrix, tmp_path, eval_root, "--probe", "c") == 0
    out = capsys.readouterr().out
    winner = next(line for line in out.splitlines() if line.startswith("chain: stage s2: b wins stage s1"))
    script = tmp_path / "out" / "probe" / "c.sh"
    text = script.read_text(encoding="utf-8")
    assert f"# Settings from the ablation chain: {winner.removeprefix('chain: ')}\n" in text
    assert f'    "$RLIF_ROOT/{full}"\n' in text and str(small) not in text  # the winner's data is preflighted
    words = script_probe_args(script)
    assert words[words.index("--model-id") + 1] == "Qwen/Qwen3-0.6B"  # the chained run's own model
    settings = [words[i + 1] for i, word in enumerate(words) if word == "--winner-setting"]
    assert [s.partition("=")[0] for s in settings] == ["train_files", "sampler"]
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0

    # the job's entry rebuilds c with b's data and sampler: b's file, split into the curriculum's intervals
    probe_out = tmp_path / "probe" / "c"
    factory = lambda model, sampling, ids, args: FakeEngine(sampling)  # noqa: E731
    args = build_parser().parse_args(
        ["--matrix", str(matrix), "--model", "Qwen/Qwen3-0.6B", "--out", str(probe_out), *words]
    )
    path = run_probe(args, factory, fake_ids)
    assert f"of {len(demo_rows('train'))} rows ({full})" in capsys.readouterr().err
    probe = load_probe(path)
    assert probe.model == "Qwen/Qwen3-0.6B"
    assert {e.interval for e in probe.entries if e.source == "logicif"} == {"0", "1", "2", "3"}
    assert {e.source for e in probe.entries} > {"iftrain", "logicif"}

    # and plans c
    code = recipes_main(["--matrix", str(matrix), "--run", "c", "--eval-root", str(eval_root), "--dry-run",
                         "--skip-verl-check", "--skip-preflight", "--plan-from", str(path)])  # fmt: skip
    assert code == 0 and f"plan: c: measured ({path}): " in capsys.readouterr().out


def test_a_chained_run_without_results_is_skipped_or_refused_as_generation_does(tmp_path, capsys):
    matrix, _, _ = write_chain_matrix(tmp_path)
    no_results = tmp_path / "no-results"
    assert generate_probe(matrix, tmp_path, no_results, "--probe") == 0  # every run: c left out with one line
    probe_lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("chain: ")]
    assert generate_probe(matrix, tmp_path, no_results, "--dry-run", "--skip-verl-check", "--skip-preflight") == 0
    generation_lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("chain: ")]
    assert probe_lines == generation_lines
    assert len(probe_lines) == 1 and probe_lines[0].startswith(
        "chain: skipped c: stage s2 cannot choose from stage s1 by graph/optimal_rate: missing results for a (not "
        "evaluated), b (not evaluated)"
    )
    assert sorted(p.name for p in (tmp_path / "out" / "probe").glob("*.sh")) == ["a.sh", "b.sh"]
    assert generate_probe(matrix, tmp_path, no_results, "--probe", "c") == 1  # named: refused
    out = capsys.readouterr().out
    assert "error: stage s2 cannot choose from stage s1" in out and "evaluate those runs first" in out


def test_a_sign_off_stage_probes_once_accepted(tmp_path, capsys):
    matrix, _, _ = write_chain_matrix(tmp_path, sign_off=True)
    eval_root = tmp_path / "eval"
    write_chain_results(eval_root)
    assert generate_probe(matrix, tmp_path, eval_root, "--probe", "c") == 1
    assert "stage s2 waits for sign-off" in capsys.readouterr().out
    assert generate_probe(matrix, tmp_path, eval_root, "--probe", "c", "--accept", "s2") == 0
    assert (tmp_path / "recipe" / "decisions" / "s2.json").is_file()
    assert (tmp_path / "out" / "probe" / "c.sh").is_file()


def test_winner_settings_must_match_the_link(tmp_path, capsys):
    matrix, small, _ = write_chain_matrix(tmp_path)
    base = ["--matrix", str(matrix), "--model", "Qwen/Qwen3-0.6B", "--out", str(tmp_path / "o")]
    assert main([*base, "--run", "c"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "error: run c is chained (take train_files, sampler from the winner of s1 by graph/optimal_rate), "
        "--winner-setting gave none; write its probe job with generate_train_recipes.py --probe c, which resolves "
        "the chain\n"
    )
    assert main([*base, "--run", "a", "--winner-setting", f'train_files=["{small}"]']) == 2
    assert "error: --winner-setting: run a takes no settings from a stage winner" in capsys.readouterr().err
    assert main([*base, "--run", "c", "--winner-setting", "train_files=[x"]) == 2
    assert "error: --winner-setting train_files: the value is not JSON" in capsys.readouterr().err
