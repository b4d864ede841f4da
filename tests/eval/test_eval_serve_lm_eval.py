"""``python -m rlif.eval serve`` on the CPU demo model with vLLM's CPU build: the server renders with the run's
thinking setting, answers a chat request, and lm-evaluation-harness's chat-completions model runs a local task
(a JSONL dataset, no download) against it; ``import`` then reads lm-eval's files with every repeat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from eval_testkit import read_jsonl, write_jsonl

pytest.importorskip("vllm")
pytest.importorskip("lm_eval")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 600
REPEATS = 3
DOCS = 4

TASK_YAML = """\
task: rlif_tiny_chat
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{answer}}}}"
repeats: {repeats}
generation_kwargs:
  until: []
  max_gen_toks: 8
  temperature: 0.7
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
filter_list:
  - name: first
    filter:
      - function: take_first
  - name: maj
    filter:
      - function: majority_vote
      - function: take_first
metadata:
  version: 1.0
"""


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
        "VLLM_TARGET_DEVICE": "cpu",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """One server for the module (vLLM on CPU takes minutes to start): thinking off, any free port."""
    from rlif.demo_assets import prepare

    work = tmp_path_factory.mktemp("serve")
    model = prepare(work / "demo").model_dir
    command = [
        sys.executable, "-m", "rlif.eval", "serve", str(model), "--no-think", "--port", "0",
        "--served-model-name", "tiny", "--max-model-len", "512", "--ready-timeout", str(START_TIMEOUT),
        "--vllm-arg=--enforce-eager", "--vllm-arg=--dtype=float32",
    ]  # fmt: skip
    log = (work / "server.log").open("w")
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, env=_env())
    found: dict = {"model_dir": model, "log": work / "server.log"}
    try:
        for line in process.stdout or ():
            key, _, value = line.strip().partition(": ")
            if key in ("base_url", "model"):
                found[key] = value
            if {"base_url", "model"} <= found.keys():
                break
        assert {"base_url", "model"} <= found.keys(), (work / "server.log").read_text()[-3000:]
        found["start_seconds"] = time.monotonic() - started
        yield found
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        return json.loads(reply.read())


def test_serve_answers_a_chat_request_with_the_runs_thinking_setting(server: dict) -> None:
    from transformers import AutoTokenizer

    assert server["model"] == "tiny" and server["base_url"].startswith("http://127.0.0.1:")
    messages = [{"role": "user", "content": "Say hello."}]
    reply = _post(f"{server['base_url']}/chat/completions", {"model": "tiny", "messages": messages, "max_tokens": 8})
    assert isinstance(reply["choices"][0]["message"]["content"], str)
    assert reply["usage"]["completion_tokens"] >= 1
    root = server["base_url"].removesuffix("/v1")
    rendered = _post(f"{root}/tokenize", {"model": "tiny", "messages": messages, "add_generation_prompt": True})
    tokenizer = AutoTokenizer.from_pretrained(server["model_dir"])
    no_think = tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    assert no_think.endswith("<think>\n\n</think>\n\n")
    assert rendered["tokens"] == tokenizer(no_think, add_special_tokens=False)["input_ids"]


def test_lm_eval_chat_completions_runs_against_serve_and_imports(server: dict, tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "docs.jsonl", [{"question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(DOCS)]
    )
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "rlif_tiny_chat.yaml").write_text(TASK_YAML.format(data=data, repeats=REPEATS))
    out = tmp_path / "lm_eval_out"
    endpoint = f"{server['base_url']}/chat/completions"
    model_args = f"model={server['model']},base_url={endpoint},num_concurrent=1,max_retries=1"
    command = [
        sys.executable, "-m", "lm_eval", "run", "--model", "local-chat-completions", "--model_args", model_args,
        "--tasks", "rlif_tiny_chat", "--include_path", str(tasks), "--apply_chat_template",
        "--output_path", str(out), "--log_samples",
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path)
    seconds = time.monotonic() - started
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    (samples_file,) = out.rglob("samples_rlif_tiny_chat_*.jsonl")
    assert len(read_jsonl(samples_file)) == 2 * DOCS  # one line per document and filter

    evaluation = tmp_path / "eval" / "tiny" / "0"
    imported = subprocess.run(
        [sys.executable, "-m", "rlif.eval", "import", str(out), "--out", str(evaluation)],
        env=_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr[-3000:]
    samples = read_jsonl(evaluation / "samples.jsonl")
    assert len(samples) == REPEATS * DOCS
    assert sorted((s["id"], s["sample"]) for s in samples) == [(str(d), r) for d in range(DOCS) for r in range(REPEATS)]
    assert all(isinstance(s["response"], str) and s["prompt"].startswith("What is") for s in samples)
    metrics = json.loads((evaluation / "metrics.json").read_text())
    assert metrics["sources"]["lm_eval/rlif_tiny_chat"]["documents"] == DOCS
    assert {"lm_eval/rlif_tiny_chat/exact_match/first", "lm_eval/rlif_tiny_chat/exact_match/maj"} <= set(
        metrics["metrics"]
    )
    print(f"server start {server['start_seconds']:.0f} s; lm-eval {seconds:.0f} s")
