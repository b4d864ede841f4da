#!/usr/bin/env python3
"""Download base models into HF_CACHE_DIR and verify every file.

Front end of ``rlif.hub_cli.model_download`` (``python hf_model_download.py --help`` lists the options and examples).
"""

import sys

from rlif.hub_cli.model_download import main

if __name__ == "__main__":
    sys.exit(main())
