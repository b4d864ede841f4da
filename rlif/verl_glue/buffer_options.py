"""Options rlif's feedback replay buffer reads from ``trainer.v1.sampler.sampler_kwargs``.

Their names live here, apart from both sides: ``overrides`` writes them when it maps a run, ``v1_feedback`` reads
them inside verl's V1 trainer, and neither imports the other (the GPU path never imports the generator's CPU
support through ``overrides``).
"""

DROP_TIED_GROUPS_KEY = "rlif_drop_tied_groups"
"""Drop groups whose rewards all tie and refill them (a run's ``train.drop_tied_groups``: DAPO's dynamic sampling)."""

OVERLONG_KEY = "rlif_overlong"
"""What a truncated response does to the loss: ``none``, ``soft_punish`` or ``mask`` (a run's ``train.overlong``)."""

OVERLONG_BUFFER_KEY = "rlif_overlong_buffer"
"""DAPO's overlong buffer length in tokens (``train.overlong_buffer_tokens``)."""

OVERLONG_PENALTY_KEY = "rlif_overlong_penalty"
"""DAPO's overlong penalty factor (``train.overlong_penalty``)."""

MAX_RESPONSE_KEY = "rlif_max_response_length"
"""The response cap the buffer compares lengths with (``data.max_response_length``)."""

OVERLONG_MODES = ("none", "soft_punish", "mask")
"""The values of ``train.overlong``."""
