"""``python -m rlif.simulate``."""

import sys

from rlif.simulate.cli import main

sys.exit(main())
