"""benchmarks/gpu_calibration.py in its CPU mode: it measures a toy Qwen3 config and writes the fitted constants."""

from __future__ import annotations

import importlib.util
import json
import math

from rlif.recipes.generate import REPO_ROOT


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_calibration", REPO_ROOT / "benchmarks" / "gpu_calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpu_tiny_mode_writes_the_fitted_constants(tmp_path):
    script = load_script()
    assert script.main(["--device", "cpu", "--tiny", "--out", str(tmp_path / "calibration")]) == 0
    result = json.loads((tmp_path / "calibration.json").read_text(encoding="utf-8"))
    (model,) = result["results"]
    assert [m["checkpointing"] for m in model["micro_batch"]] == [False, True]
    assert all(m["seconds"] > 0 for m in model["micro_batch"])
    fitted = model["fitted"]
    assert set(fitted) == {
        "activation_bytes_per_token_layer",
        "activation_formula_ratio",
        "mfu",
        "hbm_tb_per_s",
        "decode_bandwidth_efficiency",
    }
    assert all(math.isfinite(v) and v > 0 for v in fitted.values())
    # bf16 saved tensors of a toy layer: the same order as the planner's formula
    assert 0.5 < fitted["activation_formula_ratio"] < 2
    assert "| Qwen/Qwen3-1.7B (tiny) |" in (tmp_path / "calibration.md").read_text(encoding="utf-8")
