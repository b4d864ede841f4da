"""GraphArena-style NP-hard graph tasks: instance generation, exact optima and verl parquet building.

The six tasks are maximum clique (``mcp``), maximum independent set (``mis``), minimum vertex cover (``mvc``),
travelling salesman (``tsp``), graph edit distance (``ged``) and maximum common induced subgraph (``mcs``). Every
exact optimum is computed here, when the data is built, so training only verifies answers (``rewards/graph``).
See docs/np-graph-data.md.
"""
