"""rlif's trainer config, ``rlif_trainer.yaml``: a package so that Hydra finds it as
``pkg://rlif.verl_glue.trainer_config`` wherever rlif is importable, the same way verl finds rlif's hooks."""
