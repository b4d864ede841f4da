"""Function complexity score of a LogicIF task, computed from the function's Python source with ``ast``.

LogicIF ranks its functions by one number (LogicIFGen paper, arXiv 2508.09125, Eq. 1; ``ast_analyzer.py`` in the
reference repository)::

    score = 1 * cyclomatic_complexity + 3 * max_nesting_depth + 2 * function_calls + 0.5 * mean_function_length

rlif stores it in each row's ``extra_info`` so that curriculum samplers can order LogicIF rows from easy to hard.
The counting rules below reproduce the reference analyzer node for node, quirks included, because the point is to
agree with the ``complexity_score`` values shipped with the LogicIF data (e.g. 12.0 for the mini example
``CODEFORCES_883A`` and 54.5 for ``sorting_bubble_sort``):

- cyclomatic complexity = 1 + each ``if``/``elif``, ``for``, ``while`` + each ``except`` handler; boolean
  operators, comprehensions, conditional expressions and ``with`` add nothing;
- nesting depth counts ``if``/``for``/``while``/``try``/``with`` blocks and restarts at 0 inside every ``def``;
  an ``elif`` is an ``if`` nested in the ``else`` branch, so ``if/elif/elif`` is depth 3 while three flat ``if``
  statements are depth 1;
- every call counts (``len``, ``range``, methods such as ``.append``);
- function length is ``end_lineno - lineno + 1`` of each ``def`` (nested ones included), averaged over defs;
- ``async`` constructs, ``match`` and ``try/except*`` are not counted (the reference visits only the plain nodes).

The easy/medium/hard label uses the reference's fixed thresholds (``determine_difficulty_from_ast``), not the
paper's terciles, because terciles depend on the whole data set while a row's label should not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

CYCLOMATIC_WEIGHT = 1.0
NESTING_WEIGHT = 3.0
CALL_WEIGHT = 2.0
LENGTH_WEIGHT = 0.5

HARD_SCORE = 30.0
MEDIUM_SCORE = 15.0
VERY_DEEP_NESTING = 5
VERY_HIGH_CYCLOMATIC = 15
VERY_LONG_FUNCTION = 80.0
MANY_CONTROL_STRUCTURES = 12


@dataclass(frozen=True)
class ComplexityMetrics:
    """The components of the complexity score of one piece of source code.

    Attributes:
        cyclomatic_complexity: 1 + branches (see the module docstring for what counts).
        max_nesting_depth: deepest block nesting inside any one ``def`` (or at module level).
        function_calls: number of call expressions.
        function_count: number of ``def`` statements, nested ones included.
        total_function_lines: lines spanned by all ``def`` statements together.
        total_control_structures: ``if`` + ``for`` + ``while`` + ``try`` statements.
    """

    cyclomatic_complexity: int
    max_nesting_depth: int
    function_calls: int
    function_count: int
    total_function_lines: int
    total_control_structures: int

    @property
    def average_function_length(self) -> float:
        """Mean lines per ``def``; 0 for code without any."""
        return self.total_function_lines / self.function_count if self.function_count else 0.0

    @property
    def score(self) -> float:
        """The weighted complexity score, rounded to 2 decimals like the reference values."""
        raw = (
            CYCLOMATIC_WEIGHT * self.cyclomatic_complexity
            + NESTING_WEIGHT * self.max_nesting_depth
            + CALL_WEIGHT * self.function_calls
            + LENGTH_WEIGHT * self.average_function_length
        )
        return round(raw, 2)


class _Counter(ast.NodeVisitor):
    """Walks a module once and counts what the complexity score needs."""

    def __init__(self) -> None:
        self.cyclomatic = 1
        self.depth = 0
        self.max_depth = 0
        self.calls = 0
        self.functions = 0
        self.function_lines = 0
        self.control_structures = 0

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.functions += 1
        self.function_lines += (node.end_lineno or node.lineno) - node.lineno + 1
        outer_depth, self.depth = self.depth, 0
        self.generic_visit(node)
        self.depth = outer_depth

    def visit_If(self, node: ast.If) -> None:
        self._branching_block(node, branches=1)

    def visit_For(self, node: ast.For) -> None:
        self._branching_block(node, branches=1)

    def visit_While(self, node: ast.While) -> None:
        self._branching_block(node, branches=1)

    def visit_Try(self, node: ast.Try) -> None:
        self._branching_block(node, branches=len(node.handlers))

    def visit_With(self, node: ast.With) -> None:
        self._block(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.calls += 1
        self.generic_visit(node)

    def _branching_block(self, node: ast.AST, branches: int) -> None:
        self.cyclomatic += branches
        self.control_structures += 1
        self._block(node)

    def _block(self, node: ast.AST) -> None:
        self.depth += 1
        self.max_depth = max(self.max_depth, self.depth)
        self.generic_visit(node)
        self.depth -= 1


def complexity_metrics(source: str) -> ComplexityMetrics:
    """Count the components of the LogicIF complexity score in ``source``.

    Args:
        source: Python source code, typically one ``def f(...)`` returning ``(result, stats)``.

    Returns:
        The metrics; ``.score`` is the complexity score.

    Raises:
        ValueError: ``source`` is not valid Python (a data error: the row's function cannot be analysed), or it
            nests too deeply for the parser.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError) as error:
        raise ValueError(f"function source is not valid Python: {error}") from None
    counter = _Counter()
    try:
        counter.visit(tree)
    except RecursionError:
        raise ValueError("function source nests too deeply to analyse") from None
    return ComplexityMetrics(
        cyclomatic_complexity=counter.cyclomatic,
        max_nesting_depth=counter.max_depth,
        function_calls=counter.calls,
        function_count=counter.functions,
        total_function_lines=counter.function_lines,
        total_control_structures=counter.control_structures,
    )


def complexity_score(source: str) -> float:
    """The LogicIF complexity score of ``source`` (see the module docstring for the formula).

    Raises:
        ValueError: ``source`` is not valid Python.
    """
    return complexity_metrics(source).score


def difficulty_level(metrics: ComplexityMetrics) -> str:
    """Label a function ``easy``, ``medium`` or ``hard`` with the reference's fixed thresholds.

    Score >= 30 is hard and >= 15 medium; very deep nesting (>= 5) or very high cyclomatic complexity (>= 15)
    raise the label one step each, and very long functions (>= 80 lines) or many control structures (>= 12) lift
    an easy label to medium.
    """
    order = ("easy", "medium", "hard")
    score = metrics.score
    level = 2 if score >= HARD_SCORE else 1 if score >= MEDIUM_SCORE else 0
    if metrics.max_nesting_depth >= VERY_DEEP_NESTING:
        level = min(level + 1, 2)
    if metrics.cyclomatic_complexity >= VERY_HIGH_CYCLOMATIC:
        level = min(level + 1, 2)
    if level == 0 and (
        round(metrics.average_function_length, 2) >= VERY_LONG_FUNCTION
        or metrics.total_control_structures >= MANY_CONTROL_STRUCTURES
    ):
        level = 1
    return order[level]


def complexity_extra_info(source: str, *, where: str) -> dict[str, Any]:
    """The ``extra_info`` fields a LogicIF row carries for curricula.

    ``difficulty`` is the number samplers sort rows by (higher is harder); for LogicIF it is the complexity score
    itself, which is also stored under the reference name ``complexity_score``. ``difficulty_level`` is the
    easy/medium/hard label, kept for per-level evaluation breakdowns.

    Args:
        source: the row's ``function`` source.
        where: location for error messages, e.g. ``"logicif.jsonl row 7 field function"``.

    Returns:
        ``{"complexity_score": float, "difficulty": float, "difficulty_level": str}``.

    Raises:
        ValueError: the source is not a string or not valid Python; the message starts with ``where``.
    """
    if not isinstance(source, str):
        raise ValueError(f"{where}: function source must be a string, got {type(source).__name__}")
    try:
        metrics = complexity_metrics(source)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    return {
        "complexity_score": metrics.score,
        "difficulty": metrics.score,
        "difficulty_level": difficulty_level(metrics),
    }
