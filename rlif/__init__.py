"""rlif: GRPO recipes on verl for instruction following, LogicIF and NP-hard graph problems."""
