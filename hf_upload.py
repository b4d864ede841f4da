#!/usr/bin/env python3
"""Publish to the Hub: a training checkpoint (merged from FSDP shards, with a model card) or the data files.

Front end of ``rlif.hub_cli.upload`` (``python hf_upload.py --help`` lists the options and examples).
"""

import sys

from rlif.hub_cli.upload import main

if __name__ == "__main__":
    sys.exit(main())
