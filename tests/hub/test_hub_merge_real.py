"""The real path of ``hf_upload.py checkpoint``: a tiny FSDP2 checkpoint written by 2 gloo ranks on CPU, merged by
verl's own model merger, carded, and uploaded through the faked Hub HTTP layer."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from hub_fakes import ENDPOINT, fake_hub_transport

from rlif.hub_cli import upload as upload_cli

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]

COMPARE = """
import sys, torch
from safetensors.torch import load_file
merged = load_file(sys.argv[1] + "/model.safetensors")
reference = torch.load(sys.argv[2])
assert sorted(merged) == sorted(reference), (sorted(set(merged) ^ set(reference)))
print(len(merged), max((merged[k].float() - reference[k]).abs().max().item() for k in merged))
"""


def verl_python() -> str:
    """An interpreter with verl: this one, or the project venv's."""
    if importlib.util.find_spec("verl") is not None:
        return sys.executable
    venv = REPO_ROOT / ".venv" / "bin" / "python"
    if not venv.exists():
        pytest.fail("needs verl 0.9.1: run under the project venv or create .venv")
    return str(venv)


def test_tiny_fsdp2_checkpoint_is_merged_and_uploaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    python = verl_python()
    run = tmp_path / "checkpoints" / "tiny-run"
    written = subprocess.run(
        [python, str(Path(__file__).with_name("tiny_fsdp_checkpoint.py")), str(run / "global_step_4")],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert written.returncode == 0, written.stdout[-2000:] + written.stderr[-2000:]
    monkeypatch.setenv("HF_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("HF_TOKEN", "hf_tinyTOKEN")
    args = ["--env-file", str(tmp_path / "none.env"), "checkpoint", "--root", str(tmp_path / "checkpoints")]
    args += ["--repo-id", "me/tiny-qwen3", "--python", python, "--base-model", "Qwen/Qwen3-0.6B"]
    with fake_hub_transport() as hub:
        code = upload_cli.main(args)
        printed = capsys.readouterr()
        assert code == 0, printed.err
        repo = hub.repos[("model", "me/tiny-qwen3")]
    merged = run / "global_step_4" / "hf_merged"
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md"} <= set(repo.files)
    assert ".rlif_merge.json" not in repo.files
    assert repo.files["model.safetensors"] == (merged / "model.safetensors").read_bytes()
    assert b"base_model: Qwen/Qwen3-0.6B" in repo.files["README.md"]
    leaks = [name for name, content in repo.files.items() if str(tmp_path).encode() in content]
    assert leaks == [], "published files carry a path of the training machine"
    compared = subprocess.run(
        [python, "-c", COMPARE, str(merged), str(run / "global_step_4" / "reference_state.pt")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert compared.returncode == 0, compared.stderr[-2000:]
    tensors, max_diff = compared.stdout.split()
    assert int(tensors) == 14  # embed, lm_head, final norm; per layer 7 projections + 4 norms
    assert float(max_diff) < 1e-2  # the merger writes bf16
    assert "hf_tinyTOKEN" not in printed.out + printed.err
