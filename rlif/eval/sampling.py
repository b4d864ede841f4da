"""How an evaluation decodes: the model's recommended sampling, in thinking or no-thinking mode.

Qwen3 must not be decoded greedily in thinking mode; its model card recommends temperature 0.6, top-p 0.95, top-k 20
with thinking and 0.7, 0.8, 20 without. The experiment matrix already holds these per run as the run's
``validation`` settings (``rlif.runs.matrix.ValidationSpec``: the defaults are Qwen3's, and a run of another model
family carries its own), so the evaluation of a run decodes exactly as its in-loop validation does. Precedence, per
setting: an explicit command-line value, then the named run, then the matrix defaults. The chosen values and where
each came from are recorded with the results, so a number can always be traced to how it was sampled.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

from rlif.runs.matrix import default_run
from rlif.runs.spec import RunSpec


@dataclass(frozen=True)
class Sampling:
    """The decoding of one evaluation.

    Attributes:
        think: Qwen3's ``enable_thinking`` passed to the chat template.
        n: samples per prompt.
        temperature: sampling temperature.
        top_p: nucleus mass.
        top_k: top-k cut (-1 or 0: none).
        max_tokens: generation limit per sample.
        seed: base seed; each prompt's request is seeded from it and the prompt's id (``request_seed``).
        origin: where each setting came from (``option``, ``run <name>``, ``defaults``).
    """

    think: bool
    n: int
    temperature: float
    top_p: float
    top_k: int
    max_tokens: int
    seed: int
    origin: dict[str, str]

    def settings(self) -> dict[str, Any]:
        """The settings that make samples comparable (``origin`` left out): what a resumed run must match."""
        values = asdict(self)
        values.pop("origin")
        return values


def choose_sampling(
    run: RunSpec | None = None,
    *,
    think: bool | None = None,
    n: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    top_k: int | None = None,
    max_tokens: int | None = None,
    seed: int = 0,
) -> Sampling:
    """Pick every decoding setting: an explicit value, else the run's, else the matrix defaults.

    The mode (``think``) is chosen first, because it selects which of the two recommended samplings applies: a
    run trained without thinking is evaluated with its no-thinking sampling unless thinking is asked for.

    Raises:
        ValueError: a setting out of range (``n`` or ``max_tokens`` below 1, a negative temperature, ``top_p``
            outside (0, 1]), named by its option.
    """
    origin: dict[str, str] = {}

    def pick(name: str, explicit: Any, from_run: Any, default: Any) -> Any:
        if explicit is not None:
            origin[name] = "option"
            return explicit
        if run is not None:
            origin[name] = f"run {run.name}"
            return from_run
        origin[name] = "defaults"
        return default

    defaults = default_run()
    validation = run.validation if run is not None else defaults.validation
    mode = pick("think", think, run.think if run else None, defaults.think)
    spec = validation.think if mode else validation.no_think
    default_spec = defaults.validation.think if mode else defaults.validation.no_think
    chosen = Sampling(
        think=mode,
        n=pick("n", n, validation.n, defaults.validation.n),
        temperature=pick("temperature", temperature, spec.temperature, default_spec.temperature),
        top_p=pick("top_p", top_p, spec.top_p, default_spec.top_p),
        top_k=pick("top_k", top_k, spec.top_k, default_spec.top_k),
        max_tokens=pick(
            "max_tokens", max_tokens, run.train.max_response_length if run else None, defaults.train.max_response_length
        ),
        seed=seed,
        origin=origin,
    )
    _check(chosen)
    return chosen


def _check(sampling: Sampling) -> None:
    if sampling.n < 1:
        raise ValueError(f"--n {sampling.n}: need at least one sample per prompt")
    if sampling.max_tokens < 1:
        raise ValueError(f"--max-tokens {sampling.max_tokens}: need at least one token")
    if sampling.temperature < 0:
        raise ValueError(f"--temperature {sampling.temperature}: must be >= 0")
    if not 0 < sampling.top_p <= 1:
        raise ValueError(f"--top-p {sampling.top_p}: must be in (0, 1]")
    if sampling.top_k < -1:
        raise ValueError(f"--top-k {sampling.top_k}: must be -1 (off), 0 (off) or a positive count")


def request_seed(base_seed: int, item_id: str, first_sample: int) -> int:
    """The seed of one prompt's request: fixed by the prompt and which samples it draws, not by batching.

    A resumed or re-chunked evaluation therefore asks for the same random stream per prompt, and the extra
    samples of a prompt whose ``n`` grew get a stream of their own instead of repeating the first ones.
    """
    digest = hashlib.sha256(f"{base_seed}\0{item_id}\0{first_sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
