#!/usr/bin/env python3
"""Validate the runs of recipe/matrix.yaml against verl 0.9.1 and write one sbatch script per run to recipe/rlif/.

    python generate_train_recipes.py --list
    python generate_train_recipes.py --stage stage2 --dry-run
    python generate_train_recipes.py --run slurm_qwen06b_think_if1000_logicif1000_grpo --submit

See docs/recipes.md.
"""

import sys

from rlif.recipes.cli import main

if __name__ == "__main__":
    sys.exit(main())
