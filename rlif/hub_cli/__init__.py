"""The Hub commands: data download (``hf_data_download.py``), model download (``hf_model_download.py``) and upload
(``hf_upload.py``), each also a ``[project.scripts]`` command.

They share one way of starting and failing (``common``): options documented by the module docstring with the Hub's
limits in the epilog, settings from the environment and ``--env-file``, and every error printed as one line with
the token redacted.
"""
