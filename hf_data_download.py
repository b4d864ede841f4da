#!/usr/bin/env python3
"""Download the training mixtures and the evaluation file, validate every row, and only then put them in verl_data/.

Front end of ``rlif.hub_cli.data_download`` (``python hf_data_download.py --help`` lists the options and examples).
"""

import sys

from rlif.hub_cli.data_download import main

if __name__ == "__main__":
    sys.exit(main())
