"""Score one response against its instructions: strict and loose verdicts, the reward and IFEval's four metrics.

Verdicts follow IFEval's evaluation (google-research ``evaluation_lib``): an instruction is followed *strictly*
when the response is not blank and its checker passes; *loosely* when the checker passes on any of eight
variants (the response, without its first line, without its last line, without both, each also with every ``*``
removed; each variant must be non-blank). The reward uses strict verdicts, as RL rewards in open-instruct and
RLIF do: the fraction of instructions followed (open-instruct's ``IFEvalVerifier``, the default) or 1 only when
all are (RLIF's binary reward, ``if_reward="all"``).

Logged per prompt (verl averages them over the validation set per data source):
    ``if_prompt_strict`` / ``if_prompt_loose``: 1 if every instruction is followed, else 0 (IFEval's
        prompt-level accuracy once averaged).
    ``if_inst_strict`` / ``if_inst_loose``: the fraction of the prompt's instructions followed. Averaged over
        prompts this is a macro average; IFEval's instruction-level accuracy is the micro average (followed /
        total over all instructions). They are equal when every prompt has the same number of instructions.
    With ``if_reward="all"``, ``if_inst_strict`` still logs the partial progress the binary reward hides.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rewards.instruction_following.ground_truth import parse_canonical
from rewards.instruction_following.registry import get_instruction
from rewards.instruction_following.text import shared_work
from rewards.thinking import SplitResponse

IF_REWARDS = ("fraction", "all")
"""Values of the ``if_reward`` option: fraction of instructions followed (default), or all-or-nothing."""

MAX_ANSWER_CHARS = 12_000
"""Answers longer than this follow no instruction and are not checked.

About 3k tokens of English prose, 1.4 times the longest of the 294 IFBench sample responses (8.5 KB). The
bound is the reward's cost: a row of five instructions must score (strict and up to seven loose variants) in under
50 ms of CPU. Rows of IFEvalG rule-sentence checkers plus ``count:pronouns`` (Treebank over a lower-cased copy,
shared with nothing) cost CPU in proportion to the prose even with the work shared per row, so the cap is set where
such a row stays under the target with room for a loaded machine (measurements: docs/instruction-following.md,
"Robustness"). Longer answers score 0. The references have no limit: this is a deliberate deviation, and a model
trained with rlif learns that IF answers above it earn nothing. The reward option ``if_max_answer_chars`` changes it
(0: no limit, the references' semantics, at the references' cost)."""

METRIC_KEYS = (
    "if_prompt_strict",
    "if_prompt_loose",
    "if_inst_strict",
    "if_inst_loose",
    "if_inst_followed_strict",
    "if_inst_followed_loose",
    "if_inst_total",
    "if_over_length_cap",
)
"""Per-sample IF metrics. verl logs each key's mean per data source, so prompt-level accuracy is ``if_prompt_*``
directly, and IFEval's official instruction-level accuracy (a micro average: followed / total over all
instructions) is ``mean(if_inst_followed_*) / mean(if_inst_total)``; ``if_inst_*`` is the per-prompt fraction
(a macro average, which weighs prompts with more instructions less). ``if_over_length_cap`` is 1 when the answer
was longer than ``if_max_answer_chars`` and therefore checked against nothing: its logged mean is the share of IF
answers that scored 0 for their length alone, which would otherwise look like instructions not followed."""


def loose_variants(response: str) -> Iterator[str]:
    """Yield IFEval's loose variants of ``response`` other than the response itself, in the reference's order.

    Args:
        response: the graded answer.

    Yields:
        Without ``*``; without the first line; without the last line; without both; and the last three again
        without ``*``. Line-dropped variants are stripped, as in the reference.
    """
    lines = response.split("\n")
    without_first = "\n".join(lines[1:]).strip()
    without_last = "\n".join(lines[:-1]).strip()
    without_both = "\n".join(lines[1:-1]).strip()
    yield response.replace("*", "")
    yield without_first
    yield without_last
    yield without_both
    yield without_first.replace("*", "")
    yield without_last.replace("*", "")
    yield without_both.replace("*", "")


def follows(instruction_id: str, kwargs: Mapping[str, Any], response: str) -> bool:
    """Strict verdict for one instruction: the response is not blank and the checker passes.

    Args:
        instruction_id: a registered instruction id.
        kwargs: its normalised kwargs.
        response: the graded answer.

    Returns:
        The verdict.
    """
    return bool(response.strip()) and bool(get_instruction(instruction_id).check(response, **kwargs))


def verdicts(answer: str, ground_truth: str, max_answer_chars: int = MAX_ANSWER_CHARS) -> tuple[list[bool], list[bool]]:
    """Strict and loose verdicts for every instruction of ``ground_truth``.

    An answer longer than ``max_answer_chars`` (0: no limit) follows nothing. Loose variants are built only when some
    instruction fails strictly; blank variants and repeats (a response without ``*`` or with a single line yields
    several equal variants) are checked once, which cannot change a verdict because checkers are pure. For the
    same reason the checkers share sentence splits, tokens and languages per text (``text.shared_work``).

    Args:
        answer: the graded answer (thinking already removed).
        ground_truth: canonical ground truth (``normalize_ground_truth``).
        max_answer_chars: longest answer that is checked (``MAX_ANSWER_CHARS`` by default; 0 checks any length).

    Returns:
        ``(strict, loose)``, one bool per instruction, in order.
    """
    instructions = parse_canonical(ground_truth)
    if 0 < max_answer_chars < len(answer):
        return [False] * len(instructions), [False] * len(instructions)
    with shared_work():  # the row's checkers split and tokenise each text once between them
        strict = [follows(instruction_id, kwargs, answer) for instruction_id, kwargs in instructions]
        loose = list(strict)
        if not all(strict):
            unique = dict.fromkeys(loose_variants(answer))
            variants = [variant for variant in unique if variant != answer and variant.strip()]
            for index, (instruction_id, kwargs) in enumerate(instructions):
                if not loose[index]:
                    loose[index] = any(follows(instruction_id, kwargs, variant) for variant in variants)
    return strict, loose


def check_if_reward(if_reward: object) -> None:
    """Raise ``ValueError`` unless ``if_reward`` is one of ``IF_REWARDS`` (a configuration error)."""
    if if_reward not in IF_REWARDS:
        raise ValueError(f"if_reward must be one of {list(IF_REWARDS)}, got {if_reward!r}")


def check_max_answer_chars(max_answer_chars: object) -> None:
    """Raise ``ValueError`` unless ``max_answer_chars`` is an int >= 0 (a configuration error)."""
    if isinstance(max_answer_chars, bool) or not isinstance(max_answer_chars, int) or max_answer_chars < 0:
        raise ValueError(f"if_max_answer_chars must be an int >= 0 (0: no limit), got {max_answer_chars!r}")


def score_instruction_following(
    response: SplitResponse,
    ground_truth: str,
    extra_info: Mapping[str, Any] | None = None,
    *,
    if_reward: str = "fraction",
    if_max_answer_chars: int = MAX_ANSWER_CHARS,
) -> dict[str, float]:
    """The IF task family's scorer (``rewards.registry.ScoreFn``).

    Args:
        response: the response split by ``rewards.thinking.split_thinking``; only ``answer`` is graded, and an
            unclosed thinking section has an empty answer, so it scores 0.
        ground_truth: canonical ground truth.
        extra_info: the row's ``extra_info`` (unused).
        if_reward: ``"fraction"`` (default) or ``"all"``.
        if_max_answer_chars: longest answer checked; longer ones follow nothing (0: no limit, as the references).

    Returns:
        ``score`` (the reward, in [0, 1]), ``acc`` (prompt-level strict, 0 or 1) and ``METRIC_KEYS``, among them
        ``if_over_length_cap`` (1.0 when the answer exceeded the cap and was not checked, else 0.0).

    Raises:
        ValueError: ``if_reward`` is not one of ``IF_REWARDS`` (a configuration error).
    """
    del extra_info
    check_if_reward(if_reward)
    strict, loose = verdicts(response.answer, ground_truth, if_max_answer_chars)
    frac_strict = sum(strict) / len(strict)
    prompt_strict = float(all(strict))
    return {
        "score": frac_strict if if_reward == "fraction" else prompt_strict,
        "acc": prompt_strict,
        "if_prompt_strict": prompt_strict,
        "if_prompt_loose": float(all(loose)),
        "if_inst_strict": frac_strict,
        "if_inst_loose": sum(loose) / len(loose),
        "if_inst_followed_strict": float(sum(strict)),
        "if_inst_followed_loose": float(sum(loose)),
        "if_inst_total": float(len(strict)),
        "if_over_length_cap": float(0 < if_max_answer_chars < len(response.answer)),
    }
