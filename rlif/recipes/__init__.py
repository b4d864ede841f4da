"""Slurm recipe generator: experiment matrix -> validated verl overrides -> one sbatch script per run.

Layers, each importable without verl: ``matrix`` (load ``recipe/matrix.yaml`` into frozen run specs),
``overrides`` (a run spec -> verl Hydra overrides), ``checks`` (what verl's own validation misses),
``render`` (Jinja template -> script text), ``cli`` (the ``generate_train_recipes.py`` front end).
``rlif.verl_glue.config`` composes each run against verl's real config, in a subprocess of a Python that has verl.
"""
