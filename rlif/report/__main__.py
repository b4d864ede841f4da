"""``python -m rlif.report``: see ``rlif.report.cli``."""

import sys

from rlif.report.cli import main

sys.exit(main())
