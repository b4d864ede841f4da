"""Write a verl-layout FSDP2 checkpoint of a tiny random Qwen3 (test fixture) with 2 gloo ranks on CPU.

Run with an interpreter that has torch, transformers and tokenizers (the verl venv):
``python tiny_fsdp_checkpoint.py <global_step_dir>``. Produces ``<dir>/actor/model_world_size_2_rank_{0,1}.pt``
(DTensor shards, as verl's FSDP checkpoint manager saves them), ``fsdp_config.json``, ``huggingface/`` (config
and a word-level tokenizer) and ``<dir>/reference_state.pt`` (the full float32 weights, to compare a merge with).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from tokenizers import Tokenizer, models, pre_tokenizers
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, Qwen3Config

WORLD_SIZE = 2
VOCAB = ["<pad>", "<eos>", "<unk>"] + [f"w{i}" for i in range(61)]


def tiny_config() -> Qwen3Config:
    """Qwen3 with 1 layer and hidden size 16: 14 tensors, merged in well under a second."""
    return Qwen3Config(
        vocab_size=len(VOCAB),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        max_position_embeddings=64,
        tie_word_embeddings=False,
        architectures=["Qwen3ForCausalLM"],
        pad_token_id=0,
        eos_token_id=1,
    )


def save_tokenizer(path: Path) -> None:
    """A word-level tokenizer over VOCAB, saved in Hugging Face format."""
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    tokenizer.save_pretrained(path)


def worker(rank: int, step_dir: str, port: int) -> None:
    """One rank: build the same model, shard it over 2 ranks, save this rank's shard."""
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(tiny_config()).to(torch.float32)
    actor = Path(step_dir) / "actor"
    if rank == 0:
        actor.mkdir(parents=True, exist_ok=True)
        torch.save(
            {k: v.detach().clone() for k, v in model.state_dict().items()}, Path(step_dir) / "reference_state.pt"
        )
        tiny_config().save_pretrained(actor / "huggingface")
        save_tokenizer(actor / "huggingface")
        (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": WORLD_SIZE}))
    dist.barrier()
    mesh = init_device_mesh("cpu", (WORLD_SIZE,), mesh_dim_names=("fsdp",))
    fully_shard(model, mesh=mesh)
    torch.save(model.state_dict(), actor / f"model_world_size_{WORLD_SIZE}_rank_{rank}.pt")
    dist.barrier()
    dist.destroy_process_group()


def main() -> int:
    """Spawn the two ranks."""
    step_dir = sys.argv[1]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    mp.spawn(worker, args=(step_dir, port), nprocs=WORLD_SIZE, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
