"""``python -m rlif.eval serve``'s command line, without starting vLLM: the thinking setting becomes the server's
default template argument, the run's sampling its default sampling, and a checkpoint is named by run and step."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from rlif.eval.cli import main
from rlif.eval.model_source import ModelSource, locate_model
from rlif.eval.serve import served_name
from rlif.hub.checkpoints import Checkpoint


def _model_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text('{"model_type": "qwen3"}')
    return path


def _flag(words: list[str], name: str) -> str:
    return words[words.index(name) + 1]


@pytest.mark.parametrize(("think", "expected"), [("--no-think", False), ("--think", True)])
def test_print_command_passes_thinking_and_sampling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], think: str, expected: bool
) -> None:
    model = _model_folder(tmp_path / "qwen3-tiny")
    argv = ["serve", str(model), think, "--port", "9001", "--print-command", "--vllm-arg=--enforce-eager"]
    assert main(argv) == 0
    words = shlex.split(capsys.readouterr().out)
    assert words[words.index("serve") + 1] == str(model)
    assert json.loads(_flag(words, "--default-chat-template-kwargs")) == {"enable_thinking": expected}
    sampling = json.loads(_flag(words, "--override-generation-config"))
    assert set(sampling) == {"temperature", "top_p", "top_k"}
    assert (_flag(words, "--served-model-name"), _flag(words, "--port")) == ("qwen3-tiny", "9001")
    assert words[-1] == "--enforce-eager"


def test_checkpoint_is_named_by_run_and_step(tmp_path: Path) -> None:
    source = ModelSource("my_run", "id", Checkpoint(tmp_path / "my_run", 20), "a checkpoint")
    assert served_name(source) == "my_run-step20"
    assert served_name(locate_model("Qwen/Qwen3-1.7B")) == "Qwen/Qwen3-1.7B"


def test_serve_refuses_a_bad_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
