#!/usr/bin/env python3
"""Evaluate a model or a training checkpoint on rlif evaluation files, or score responses made elsewhere.

    python evaluate.py generate --run slurm_qwen17b_think_if80000_grpo --n 8 \
        --model checkpoints/rlif/slurm_qwen17b_think_if80000_grpo         # latest checkpoint -> eval/<run>/<step>/
    python evaluate.py generate --model Qwen/Qwen3-1.7B --no-think --n 4 \
        --eval-file verl_data/ifbench_300_ifeval_541_logicif_749.parquet --out eval/qwen3-1.7b-base/0
    python evaluate.py score --responses responses.jsonl --eval-file verl_data/x.parquet --out eval/api_model

Safe to re-run: prompts whose samples are already in the output directory are skipped. See docs/evaluation.md.
"""

import sys

from rlif.eval.cli import main

if __name__ == "__main__":
    sys.exit(main())
