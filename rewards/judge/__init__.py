"""Soft constraints (style, tone, content) judged by an LLM, gated by rule checks of the hard ones: the ``judge``
task family.

Data sources ``judge/<name>`` are served. The ground truth is JSON ``{"prompt": <the user's request>, "hard": <IF
ground truth or null>, "soft": [{"kind": <constraint kind>, "constraint": <text>}, ...]}``: ``hard`` is checked by
the IF family's rule checkers (``rewards.instruction_following``, strict), each soft constraint is put to the judge
with its kind's template (``TEMPLATES``), whose reply gives a probability that it is followed: P("Yes") against
P("No") from the first token's ``top_logprobs`` where the server returns them, else the parsed verdict (``Score:
k/10``, or a leading Yes/No).

The combination follows VerIF (arXiv 2508.02150): the judge is asked only when every hard constraint passes (the
gate), and the reward is the rule reward times the judge's probability, so

    score = 0                                   if a hard constraint fails (judge not asked; ``judge_gated=1``)
    score = mean over soft constraints of p_i   if all hard constraints pass (1 times the judge probability)
    score = fraction of hard constraints passed for a row without soft constraints

``acc`` is 1 when every hard constraint passes and every soft constraint's probability is at least 0.5.

A judged sample that gets no verdict in time (slow server, garbage reply, closed port, after the bounded retries)
is neither a zero reward nor a crash: it returns ``judge_no_verdict=1`` with ``score`` 0 as a placeholder, and
rlif's V1 replay buffer (``rlif.verl_glue.v1_feedback``) removes such samples from the batch before advantages,
so they count neither in the loss nor in their group's statistics; the legacy trainer, which has no such buffer,
refuses the family. Verdicts are cached (``client.VerdictCache``) by judge model, mode and conversation, which holds
the prompt, the response and the constraint. docs/judge.md describes the family and the run settings.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from rewards.canonical import canonical_json, load_ground_truth
from rewards.instruction_following.ground_truth import normalize_ground_truth as normalize_if_ground_truth
from rewards.instruction_following.scoring import verdicts
from rewards.judge.client import JudgeSettings, VerdictCache, ask_all
from rewards.registry import Evaluation, Metric, Records, TaskFamily, mean, per_prompt, register_family
from rewards.thinking import SplitResponse

PREFIX = "judge/"
"""Every source of the family is ``judge/<name>``."""

TEMPLATES: dict[str, str] = {
    "style": (
        "You check whether a response follows a STYLE requirement (register, formality, voice, structure of the "
        "prose).\n\nRequest:\n{prompt}\n\nResponse:\n{response}\n\nRequirement: {constraint}\n\n"
        "Does the response follow the requirement? Answer with one word, Yes or No."
    ),
    "tone": (
        "You check whether a response keeps a required TONE (e.g. polite, enthusiastic, neutral, humorous).\n\n"
        "Request:\n{prompt}\n\nResponse:\n{response}\n\nRequired tone: {constraint}\n\n"
        "Does the response keep this tone throughout? Answer with one word, Yes or No."
    ),
    "content": (
        "You check whether a response satisfies a CONTENT requirement (what it must mention, cover, avoid or "
        "argue).\n\nRequest:\n{prompt}\n\nResponse:\n{response}\n\nContent requirement: {constraint}\n\n"
        "Does the response satisfy the requirement? Answer with one word, Yes or No."
    ),
    "other": (
        "You check whether a response follows an instruction that no rule can verify.\n\nRequest:\n{prompt}\n\n"
        "Response:\n{response}\n\nInstruction: {constraint}\n\n"
        "Does the response follow the instruction? Answer with one word, Yes or No."
    ),
}
"""The judge prompt of each constraint kind; the parsed-score fallback reads a leading Yes/No as well."""

MAX_SOFT_CONSTRAINTS = 8
"""Soft constraints per row (each is one judge request per response)."""

OPTIONS: dict[str, Any] = {
    "judge_url": "",
    "judge_model": "",
    "judge_timeout_s": 30.0,
    "judge_retries": 1,
    "judge_concurrency": 8,
    "judge_use_logprobs": True,
    "judge_cache_size": 65536,
    "judge_cache_dir": "",
}
"""The family's reward options (``reward.custom_reward_function.reward_kwargs``). ``judge_url`` and ``judge_model``
are empty by default because only a run with judge sources needs them; such a run must set them (the recipe
checks refuse one without)."""

METRIC_KEYS = ("judge_no_verdict", "judge_gated", "judge_probability", "judge_rule_fraction")


def parse_ground_truth(ground_truth: str) -> tuple[str, str | None, tuple[tuple[str, str], ...]]:
    """The prompt, the canonical IF ground truth of the hard constraints (or None) and the soft constraints.

    Raises:
        ValueError: not JSON, unknown keys, an empty prompt, bad hard constraints, an unknown kind, an empty
            constraint, more than ``MAX_SOFT_CONSTRAINTS``, or no constraint at all.
    """
    value = load_ground_truth(ground_truth, "judge")
    if not isinstance(value, Mapping) or set(value) != {"prompt", "hard", "soft"}:
        raise ValueError("judge ground truth must be an object with exactly the keys ['hard', 'prompt', 'soft']")
    prompt, hard, soft = value["prompt"], value["hard"], value["soft"]
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("judge ground truth: 'prompt' must be a non-empty string")
    hard_canonical = None if hard is None else normalize_if_ground_truth(hard, where="judge ground truth 'hard'")
    if not isinstance(soft, list) or len(soft) > MAX_SOFT_CONSTRAINTS:
        raise ValueError(f"judge ground truth: 'soft' must be a list of at most {MAX_SOFT_CONSTRAINTS} constraints")
    constraints = []
    for i, item in enumerate(soft):
        if not isinstance(item, Mapping) or set(item) != {"kind", "constraint"}:
            raise ValueError(f"judge ground truth: soft[{i}] must be {{'kind', 'constraint'}}")
        if item["kind"] not in TEMPLATES:
            raise ValueError(
                f"judge ground truth: soft[{i}] kind must be one of {sorted(TEMPLATES)}, got {item['kind']!r}"
            )
        if not isinstance(item["constraint"], str) or not item["constraint"].strip():
            raise ValueError(f"judge ground truth: soft[{i}] constraint must be a non-empty string")
        constraints.append((item["kind"], item["constraint"]))
    if hard_canonical is None and not constraints:
        raise ValueError("judge ground truth has neither hard nor soft constraints")
    return prompt, hard_canonical, tuple(constraints)


def normalize_ground_truth(raw: Any, *, where: str) -> str:
    """The canonical string of a judge ground truth (hard constraints in the IF family's canonical form).

    Raises:
        ValueError: see ``parse_ground_truth``; the message starts with ``where``.
    """

    def canonical(text: str) -> str:
        prompt, hard, soft = parse_ground_truth(text)
        return canonical_json(
            {
                "prompt": prompt,
                "hard": None if hard is None else json.loads(hard),
                "soft": [{"kind": kind, "constraint": text} for kind, text in soft],
            }
        )

    try:
        return canonical(raw if isinstance(raw, str) else canonical_json(raw))
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check of a row's ground truth.

    Raises:
        ValueError: not canonical, or see ``parse_ground_truth``.
    """
    del extra_info
    if not isinstance(ground_truth, str):
        raise ValueError(
            f"reward_model.ground_truth: expected the canonical JSON string, got {type(ground_truth).__name__}"
        )
    if normalize_ground_truth(ground_truth, where="reward_model.ground_truth") != ground_truth:
        raise ValueError("reward_model.ground_truth: not in canonical form; build rows with normalize_ground_truth")


def check_params(params: Mapping[str, Any]) -> None:
    """Check the judge options' values (the URL and model only when set: runs without judge sources leave them).

    Raises:
        ValueError: a bad value, naming the option.
    """
    if params["judge_url"] or params["judge_model"]:
        settings(params)
    else:
        JudgeSettings(
            url="http://unset/v1",
            model="unset",
            timeout_s=params["judge_timeout_s"],
            retries=params["judge_retries"],
            concurrency=params["judge_concurrency"],
        )
    if not isinstance(params["judge_cache_size"], int) or params["judge_cache_size"] < 0:
        raise ValueError(f"judge_cache_size must be a non-negative integer, got {params['judge_cache_size']!r}")


def settings(params: Mapping[str, Any]) -> JudgeSettings:
    """The client settings of a run's options.

    Raises:
        ValueError: see ``JudgeSettings``.
    """
    return JudgeSettings(
        url=str(params["judge_url"]),
        model=str(params["judge_model"]),
        timeout_s=float(params["judge_timeout_s"]),
        retries=params["judge_retries"],
        concurrency=params["judge_concurrency"],
        use_logprobs=bool(params["judge_use_logprobs"]),
    )


@functools.lru_cache(maxsize=4)
def _cache(size: int, directory: str) -> VerdictCache:
    """One verdict cache per process and setting."""
    return VerdictCache(size, directory)


@functools.lru_cache(maxsize=1024)
def _parsed(ground_truth: str) -> tuple[str, str | None, tuple[tuple[str, str], ...]]:
    return parse_ground_truth(ground_truth)


def conversation(prompt: str, response: str, kind: str, constraint: str) -> list[dict[str, str]]:
    """The judge's messages for one soft constraint."""
    text = TEMPLATES[kind].format(prompt=prompt, response=response, constraint=constraint)
    return [{"role": "user", "content": text}]


def score_judge(
    response: SplitResponse, ground_truth: str, extra_info: Mapping[str, Any] | None = None, **params: Any
) -> dict[str, float | None]:
    """The judge family's scorer (``rewards.registry.ScoreFn``), in [0, 1]; see the module docstring.

    It waits for the judge at most ``judge_timeout_s`` (all soft constraints asked concurrently).

    Raises:
        ValueError: the run has judge sources but no ``judge_url``/``judge_model`` (a configuration error).
    """
    del extra_info
    prompt, hard, soft = _parsed(ground_truth)
    answer = "" if response.think_unclosed else response.answer
    rule_fraction = 1.0
    if hard is not None:
        strict, _ = verdicts(answer, hard, 0)
        rule_fraction = sum(strict) / len(strict)
    if not soft:
        return _result(rule_fraction, acc=float(rule_fraction == 1.0), rule_fraction=rule_fraction)
    if rule_fraction < 1.0 or not answer:
        return _result(0.0, acc=0.0, rule_fraction=rule_fraction, gated=True)
    client = settings(params)
    cache = _cache(int(params["judge_cache_size"]), str(params["judge_cache_dir"]))
    conversations = [conversation(prompt, answer, kind, text) for kind, text in soft]
    keys = [VerdictCache.key(client, c) for c in conversations]
    probabilities = [cache.get(key) for key in keys]
    missing = [i for i, p in enumerate(probabilities) if p is None]
    if missing:
        for i, p in zip(missing, ask_all(client, [conversations[i] for i in missing]), strict=True):
            probabilities[i] = p
            if p is not None:
                cache.put(keys[i], p)
    if any(p is None for p in probabilities):
        return _result(0.0, acc=0.0, rule_fraction=rule_fraction, no_verdict=True)
    judged = [float(p) for p in probabilities if p is not None]
    probability = sum(judged) / len(judged)
    return _result(
        probability, acc=float(all(p >= 0.5 for p in judged)), rule_fraction=rule_fraction, probability=probability
    )


def _result(
    score: float,
    *,
    acc: float,
    rule_fraction: float,
    probability: float | None = None,
    gated: bool = False,
    no_verdict: bool = False,
) -> dict[str, float | None]:
    return {
        "score": score,
        "acc": acc,
        "judge_no_verdict": float(no_verdict),
        "judge_gated": float(gated),
        "judge_probability": probability,
        "judge_rule_fraction": rule_fraction,
    }


def judge_metrics(records: Records) -> dict[str, float]:
    """Accuracy and mean reward over samples with a verdict (an unjudged sample's 0 is a placeholder, not a
    failure), gate and no-verdict rates over all samples, and the mean judge probability of judged samples."""
    judged = [r["judge_probability"] for r in records if r.get("judge_probability") is not None]
    answered = [r for r in records if not r.get("judge_no_verdict")]
    return {
        "accuracy": mean(r.get("acc", 0.0) for r in answered),
        "mean_score": mean(r.get("score", 0.0) for r in answered),
        "gated_rate": mean(r.get("judge_gated") or 0.0 for r in records),
        "no_verdict_rate": mean(r.get("judge_no_verdict") or 0.0 for r in records),
        "mean_probability": mean(judged),
    }


class JudgedAccuracy:
    """``units`` of the judge's accuracy: per prompt, the mean ``acc`` of its samples with a verdict; a prompt with
    none is left out, since its placeholders say nothing. A small class, not a closure, so it pickles."""

    def __call__(self, records: Records) -> dict[str, tuple[float, float]]:
        out = {}
        for unit, samples in per_prompt(records).items():
            judged = [r for r in samples if not r.get("judge_no_verdict")]
            if judged:
                out[unit] = (mean(float(r.get("acc") or 0.0) for r in judged), 1.0)
        return out


EVALUATION = Evaluation(
    metrics=(
        Metric(
            "accuracy",
            "mean over prompts of the mean acc of the prompt's samples with a verdict (hard constraints pass, every "
            "soft p >= 0.5)",
            units=JudgedAccuracy(),
        ),
        Metric("mean_score", "mean reward over samples with a verdict"),
        Metric("gated_rate", "share of samples failing a hard constraint (judge not asked)"),
        Metric("no_verdict_rate", "share of samples the judge gave no verdict for", lower_is_better=True),
        Metric("mean_probability", "mean judge probability over judged samples"),
    ),
    headline="accuracy",
    compute=judge_metrics,
    title="soft constraints (rule-gated LLM judge)",
    table_order=48,
)


JUDGE_FAMILY = register_family(
    TaskFamily(
        name="judge",
        prefixes=(PREFIX,),
        ability="instruction_following",
        metric_keys=METRIC_KEYS,
        options=OPTIONS,
        score=score_judge,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        check_params=check_params,
        evaluation=EVALUATION,
        training_flags=("judge_no_verdict", "judge_gated"),
    )
)
