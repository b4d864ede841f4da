"""Options rlif's feedback replay buffer reads from ``trainer.v1.sampler.sampler_kwargs``.

Their names live here, apart from both sides: ``overrides`` writes them when it maps a run, ``v1_feedback`` reads
them inside verl's V1 trainer, and neither imports the other (the GPU path never imports the generator's CPU
support through ``overrides``).
"""

DROP_TIED_GROUPS_KEY = "rlif_drop_tied_groups"
"""Drop groups whose rewards all tie and refill them (a run's ``train.drop_tied_groups``: DAPO's dynamic sampling)."""
