"""The only rlif package that imports verl (tests/test_boundaries.py checks it).

``hooks``: what verl loads by ``pkg://`` path in every run; ``v1_feedback``: what only verl's V1 trainer loads (it
alone imports verl's V1 package and TransferQueue); ``buffer_options``: the names of the options the buffer
reads, written by ``overrides``. ``saved_config``: a saved run config's run-describing values,
read without verl. ``trainer_config/rlif_trainer.yaml``: verl's
``ppo_trainer`` with those hooks and the settings every run shares. ``overrides``: a matrix run as Hydra overrides of
that config. ``config``: compose it and check runs against it (the generator and the CPU demo). ``cpu_support``: the
CPU-only patches and environment, never imported on the GPU path. ``demo_phase``: one training phase of the CPU demo.

Importing this package imports nothing: the start-up hook of a CPU environment imports ``cpu_support`` through it.
"""
