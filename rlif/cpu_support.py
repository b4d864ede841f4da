"""The start-up hook's target in environments set up before the CPU support moved to ``rlif.verl_glue.cpu_support``.

Their ``rlif_cpu_support.pth`` imports this module when ``RLIF_CPU_MODE=1``; importing the real module here
installs the same patches. ``python -m rlif.verl_glue.cpu_support install`` (run by scripts/setup_env.sh) rewrites
the hook to import ``rlif.verl_glue.cpu_support`` directly; once every environment has re-run it, delete this file.
"""

import rlif.verl_glue.cpu_support  # noqa: F401  (imported for its start-up patches)
