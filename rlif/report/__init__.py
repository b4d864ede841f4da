"""Run comparison report: one self-contained HTML page (plots and a results table) plus PNGs for papers.

``python -m rlif.report RUN_DIR... --out report.html`` (see ``rlif.report.cli``).
"""
