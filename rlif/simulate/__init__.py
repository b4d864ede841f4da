"""CPU simulation of the sampling policies on a synthetic learner: ``python -m rlif.simulate`` (``rlif.simulate.cli``).

``core`` is the learner and the built-in strategy comparison, ``rows`` the training rows a matrix run would see,
``exposure`` what each run was shown (shares, unique rows, draws per row) and the per-stage table.
"""

from rlif.simulate.cli import main, simulate_matrix_runs, simulate_stage
from rlif.simulate.core import (
    DATASETS,
    GRAPH_TASKS,
    LEARNERS,
    STRATEGIES,
    LearnerConfig,
    RunResult,
    Strategy,
    final_interval_success,
    interval_reward_span,
    parse_param,
    plot,
    plot_run,
    run_all,
    simulate,
    summarize,
    unlock_timeline,
)
from rlif.simulate.rows import parse_rows, rows_from_name, run_config, run_rows

__all__ = [
    "DATASETS",
    "GRAPH_TASKS",
    "LEARNERS",
    "STRATEGIES",
    "LearnerConfig",
    "RunResult",
    "Strategy",
    "final_interval_success",
    "interval_reward_span",
    "main",
    "parse_param",
    "parse_rows",
    "plot",
    "plot_run",
    "rows_from_name",
    "run_all",
    "run_config",
    "run_rows",
    "simulate",
    "simulate_matrix_runs",
    "simulate_stage",
    "summarize",
    "unlock_timeline",
]
