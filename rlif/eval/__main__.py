"""``python -m rlif.eval``: see ``rlif.eval.cli``."""

import sys

from rlif.eval.cli import main

sys.exit(main())
