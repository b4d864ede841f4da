"""rlif's data files: the verl row schema and its validation, source conversion, mixtures and the eval set."""
