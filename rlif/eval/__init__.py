"""Offline evaluation: score responses against evaluation files with rlif's reward families and compute the
benchmarks' own metrics (IFEval/IFBench, LogicIFEval, GraphArena, mathematics, pass@k).

``python -m rlif.eval score --responses R.jsonl --eval-file E.parquet --out DIR`` (see ``rlif.eval.cli``).
"""
