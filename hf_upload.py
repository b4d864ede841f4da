#!/usr/bin/env python3
"""Publish to the Hub: a training checkpoint (merged from FSDP shards, with a model card) or the data files.

Front end of ``rlif.upload_cli`` (``python hf_upload.py --help`` lists the options and examples).
"""

import sys

from rlif.upload_cli import main

if __name__ == "__main__":
    sys.exit(main())
