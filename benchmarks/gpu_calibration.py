"""GPU calibration of the run planner: one actor micro-batch and a decode proxy per model, fitted to planner constants.

The planner's memory and time constants (docs/run-planning.md) are fitted on CPU or assumed. This script measures,
on random-weight models built from the planner's own config table (no download):

- one actor micro-batch, forward and backward, with and without gradient checkpointing, bf16 autocast over fp32
  master weights as verl's FSDP2 mixed-precision policy computes: peak memory, time, and the bytes each decoder
  layer saves for backward per token (counted with saved-tensor hooks);
- a transformers static-KV-cache greedy decode of a batch at a given context, a stated proxy for vLLM's decode
  (vLLM's paged attention and CUDA graphs are faster, so the proxy bounds the bandwidth from below).

It fits the planner's constants: activation bytes per token per layer (against ``ModelShape``'s formula), the
effective decode bandwidth (``plan.hbm_tb_per_s``) and the training MFU (``plan.mfu``), and writes them as JSON and
markdown.

    python benchmarks/gpu_calibration.py                       # on a GPU: Qwen3-1.7B and Qwen3-8B
    python benchmarks/gpu_calibration.py --device cpu --tiny   # a two-layer toy config, seconds on CPU
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from rlif.runs.shapes import BUILTIN_CONFIGS, ModelShape
from rlif.runs.timing import attention_flops_per_token

TINY = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 4096}  # fmt: skip
"""A toy Qwen3 config for the CPU mode."""


def build_model(name: str, tiny: bool, device: str) -> tuple[torch.nn.Module, ModelShape]:
    """A random-weight fp32 model of the planner's config for ``name`` (or the toy config) and its planner shape."""
    from transformers import AutoModelForCausalLM, Qwen3Config

    raw = {**BUILTIN_CONFIGS[name], **(TINY if tiny else {})}
    fields = {k: v for k, v in raw.items() if k != "model_type"}
    config = Qwen3Config(**fields, attn_implementation="sdpa", dtype="float32")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32).to(device)
    return model, ModelShape.from_config(name, {**raw, "model_type": "qwen3"})


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _reset_peak(device: str) -> int:
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        return torch.cuda.memory_allocated()
    return 0


def _peak(device: str, base: int) -> int | None:
    return torch.cuda.max_memory_allocated() - base if device.startswith("cuda") else None


def saved_bytes_per_layer(model: torch.nn.Module, ids: torch.Tensor, device: str) -> float:
    """Bytes the decoder layers save for backward per token per layer, each layer's input excluded (no checkpointing).

    The layer input is the residual stream the checkpointed variant keeps and the planner counts apart (2h bytes).
    """
    layers = model.model.layers
    current: dict[str, object] = {"layer": None, "input": None}
    seen: set[tuple[int, int]] = set()
    total = [0]

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        layer = current["layer"]
        if layer is not None and tensor is not current["input"]:
            key = (tensor.untyped_storage().data_ptr(), id(layer))
            if key not in seen:
                seen.add(key)
                total[0] += tensor.untyped_storage().nbytes()
        return tensor

    def pre(module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        current["layer"], current["input"] = module, args[0] if args else kwargs.get("hidden_states")

    def post(module: torch.nn.Module, args: tuple, kwargs: dict, output: object) -> None:
        current["layer"] = None

    handles = [h for layer in layers for h in (layer.register_forward_pre_hook(pre, with_kwargs=True),
                                               layer.register_forward_hook(post, with_kwargs=True))]  # fmt: skip
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), _autocast(device):
            hidden = model.model(input_ids=ids).last_hidden_state
        del hidden
    finally:
        for handle in handles:
            handle.remove()
    return total[0] / ids.numel() / len(layers)


def _autocast(device: str) -> torch.autocast:
    return torch.autocast(device_type="cuda" if device.startswith("cuda") else "cpu", dtype=torch.bfloat16)


def micro_batch(model: torch.nn.Module, ids: torch.Tensor, device: str, checkpointing: bool, repeats: int) -> dict:
    """Peak memory and time of one forward and backward of a packed micro-batch (loss on the last hidden state, so
    the lm_head's logits, which verl's fused kernel chunks, do not dominate)."""
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_disable()
    model.train()
    times = []
    base = _reset_peak(device)
    for _ in range(repeats + 1):
        model.zero_grad(set_to_none=True)
        _sync(device)
        start = time.perf_counter()
        with _autocast(device):
            hidden = model.model(input_ids=ids).last_hidden_state
        hidden.float().pow(2).mean().backward()
        _sync(device)
        times.append(time.perf_counter() - start)
    model.zero_grad(set_to_none=True)
    return {"checkpointing": checkpointing, "seconds": min(times[1:]), "peak_bytes": _peak(device, base)}


def decode(model: torch.nn.Module, shape: ModelShape, args: argparse.Namespace, batch: int, context: int) -> dict:
    """Seconds per decode step of a static-cache greedy decode (``generate`` with N steps minus with 1 step)."""
    model = model.to(torch.bfloat16).eval()
    ids = torch.randint(0, shape.vocab, (batch, context), device=args.device)
    kwargs = {"do_sample": False, "cache_implementation": "static", "pad_token_id": 0, "eos_token_id": None}

    def run(steps: int) -> float:
        _sync(args.device)
        start = time.perf_counter()
        with torch.no_grad():
            model.generate(ids, max_new_tokens=steps, min_new_tokens=steps, **kwargs)
        _sync(args.device)
        return time.perf_counter() - start

    run(2)  # warm-up (compilation of the static cache's graphs)
    step = max(1e-9, (run(args.decode_steps + 1) - run(1)) / args.decode_steps)
    mean_context = context + args.decode_steps / 2
    read = 2 * shape.params + batch * mean_context * shape.kv_bytes_per_token(1)
    return {"batch": batch, "context": context, "seconds_per_step": step, "tokens_per_s": batch / step,
            "effective_tb_per_s": read / step / 1e12}  # fmt: skip


def calibrate(name: str, args: argparse.Namespace) -> dict:
    """Every measurement of one model and the planner constants fitted from them."""
    model, shape = build_model(name, args.tiny, args.device)
    ids = torch.randint(0, shape.vocab, (1, args.tokens), device=args.device)
    saved = saved_bytes_per_layer(model, ids, args.device)
    runs = [micro_batch(model, ids, args.device, checkpointing, args.repeats) for checkpointing in (False, True)]
    forwards = 4  # forward, backward (2), checkpoint recompute; the loss skips the lm_head
    per_token = 2 * (shape.params - shape.embedding_params) + attention_flops_per_token(shape, args.tokens / 2)
    flops = forwards * per_token * args.tokens
    with_gc = runs[1]
    decodes = [decode(model, shape, args, batch, args.decode_context) for batch in args.decode_batch]
    del model
    formula = shape.activation_bytes_per_token_layer()
    return {
        "model": name + (" (tiny)" if args.tiny else ""),
        "tokens": args.tokens,
        "micro_batch": runs,
        "decode": decodes,
        "fitted": {
            "activation_bytes_per_token_layer": saved,
            "activation_formula_ratio": saved / formula,
            "mfu": flops / with_gc["seconds"] / (args.peak_tflops * 1e12),
            "hbm_tb_per_s": max(d["effective_tb_per_s"] for d in decodes),
            "decode_bandwidth_efficiency": max(d["effective_tb_per_s"] for d in decodes) / args.peak_tb_per_s,
        },
    }


def markdown(results: list[dict], args: argparse.Namespace) -> str:
    """The results as a markdown page."""
    lines = [
        "# GPU calibration of the run planner",
        "",
        f"`python benchmarks/gpu_calibration.py {' '.join(args.argv)}` on {args.device_name}, "
        f"torch {torch.__version__}.",
        f"Micro-batch of {args.tokens} packed tokens, bf16 autocast over fp32 weights; decode proxy: transformers "
        f"static-cache greedy decode at context {args.decode_context}, {args.decode_steps} steps.",
        "",
        "| model | saved B/token/layer (formula ratio) | fwd+bwd s (GC off / on) | peak GiB (GC off / on) | MFU | "
        "decode tok/s by batch | effective TB/s (efficiency) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        f, (off, on) = r["fitted"], r["micro_batch"]
        peaks = " / ".join("n/a" if m["peak_bytes"] is None else f"{m['peak_bytes'] / 2**30:.2f}" for m in (off, on))
        rates = ", ".join(f"{d['batch']}: {d['tokens_per_s']:.0f}" for d in r["decode"])
        lines.append(
            f"| {r['model']} | {f['activation_bytes_per_token_layer']:.0f} ({f['activation_formula_ratio']:.2f}) | "
            f"{off['seconds']:.3f} / {on['seconds']:.3f} | {peaks} | {f['mfu']:.3f} | {rates} | "
            f"{f['hbm_tb_per_s']:.2f} ({f['decode_bandwidth_efficiency']:.2f}) |"
        )
    lines += ["", 'Planner settings these give (docs/run-planning.md, "Calibration"): `plan.mfu`, `plan.hbm_tb_per_s`.']
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    parser.add_argument("--tiny", action="store_true", help="a two-layer toy config instead of the real ones")
    parser.add_argument(
        "--models",
        nargs="+",
        default=["Qwen/Qwen3-1.7B", "Qwen/Qwen3-8B"],
        choices=sorted(n for n, c in BUILTIN_CONFIGS.items() if c["model_type"] == "qwen3"),
    )
    parser.add_argument("--tokens", type=int, default=8192, help="packed tokens of the micro-batch")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats after one warm-up")
    parser.add_argument("--decode-batch", type=int, nargs="+", default=[16, 64, 128])
    parser.add_argument("--decode-context", type=int, default=2048)
    parser.add_argument("--decode-steps", type=int, default=64)
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 peak (H100 SXM 989)")
    parser.add_argument("--peak-tb-per-s", type=float, default=3.35, help="HBM peak (H100 SXM 3.35)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/gpu_calibration"),
                        help="writes OUT.json and OUT.md")  # fmt: skip
    args = parser.parse_args(argv)
    if args.tiny:
        args.models, args.tokens = args.models[:1], min(args.tokens, 256)
        args.decode_batch, args.decode_context, args.decode_steps = [2], min(args.decode_context, 32), 4
        args.repeats = 1
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> int:
    """Measure every model, write OUT.json and OUT.md, print where they went."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device: run on a GPU node, or pass --device cpu --tiny to check the script", file=sys.stderr)
        return 2
    args.device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    results = [calibrate(name, args) for name in args.models]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"device": args.device_name, "torch": torch.__version__, "argv": argv, "results": results}
    args.out.with_suffix(".json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(results, args), encoding="utf-8")
    print(f"wrote {args.out.with_suffix('.json')} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
