"""Runs: the run spec, the experiment matrix that declares runs and the planner that sizes them.

The vocabulary the rest of rlif speaks: the Slurm generator (``rlif.recipes``), verl's glue, evaluation, the
simulator and the CPU demo import from here; nothing here imports them.
"""
