"""Offline evaluation: generate responses with vLLM (from a model folder or a verl checkpoint) or take them from
anywhere, score them against evaluation files with rlif's reward families and compute the benchmarks' own metrics
(IFEval/IFBench, LogicIFEval, GraphArena, mathematics, pass@k).

``python -m rlif.eval generate --model M --eval-file E.parquet --out DIR`` and
``python -m rlif.eval score --responses R.jsonl --eval-file E.parquet --out DIR`` (see ``rlif.eval.cli``).
"""
