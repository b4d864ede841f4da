"""Built-in assets for the CPU demo: a tiny tokenizer, a tiny random Qwen3 model and a small mixed dataset.

Nothing here comes from the hub: the tokenizer is a byte-level BPE trained on a few hundred built-in sentences,
the model is randomly initialised, and the dataset is a handful of hand-written IF, LogicIF and graph items whose
ground truth goes through the same build-time normalisers and checks as real data. The model learns nothing useful;
the point is that every rlif hook runs inside verl's real training loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}"
)
"""ChatML with Qwen3's thinking switch: ``enable_thinking=False`` pre-fills an empty thinking section."""

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]


@dataclass(frozen=True)
class DemoItem:
    """One built-in training or validation item before it becomes a parquet row."""

    data_source: str
    prompt: str
    raw_ground_truth: Any
    difficulty: float
    item_id: str


# --- instruction following: IFEval constraints whose pass rate on the demo model's random text is near 0.5 -------
# (docs/verl-integration.md), so every GRPO group of 4 has reward variance with high probability and the demo's
# gradient is not zero.
def _letters(letter: str, count: int, relation: str = "at least") -> dict[str, Any]:
    return {"letter": letter, "let_frequency": count, "let_relation": relation}


_IF_ITEMS = [
    (
        "Describe a quiet morning in a small town. Use the letter e at least 5 times.",
        ["keywords:letter_frequency"],
        [_letters("e", 5)],
    ),
    (
        "Write a short note to a friend about a trip. Use the letter t at least 3 times.",
        ["keywords:letter_frequency"],
        [_letters("t", 3)],
    ),
    (
        "List three reasons to learn to cook. Use the letter o at least 3 times.",
        ["keywords:letter_frequency"],
        [_letters("o", 3)],
    ),
    (
        "Explain why the sky looks blue. Use the letter a fewer than 3 times.",
        ["keywords:letter_frequency"],
        [_letters("a", 3, "less than")],
    ),
    (
        "Give advice to a new student in at least 8 words, without commas.",
        ["length_constraints:number_words", "punctuation:no_comma"],
        [{"num_words": 8, "relation": "at least"}, {}],
    ),
    (
        "Tell a very short story about a cat. Use the letter r at least 3 times.",
        ["keywords:letter_frequency"],
        [_letters("r", 3)],
    ),
]

# --- LogicIF: tiny functions; expected output and stats are computed by running them when the data is built ------
_LOGICIF_FUNCTIONS = [
    (
        "count_evens",
        "def f(values):\n"
        "    evens = 0\n"
        "    checks = 0\n"
        "    for v in values:\n"
        "        checks += 1\n"
        "        if v % 2 == 0:\n"
        "            evens += 1\n"
        "    return evens, {'checks': checks}\n",
        [[1, 2, 3, 4], [5, 7, 8]],
    ),
    (
        "running_max",
        "def f(values):\n"
        "    best = values[0]\n"
        "    updates = 0\n"
        "    for v in values[1:]:\n"
        "        if v > best:\n"
        "            best = v\n"
        "            updates += 1\n"
        "    return best, {'updates': updates}\n",
        [[3, 1, 4, 1, 5], [9, 2, 6]],
    ),
]

_LOGICIF_PROMPT = (
    "Follow the function step by step for the input below and report what it returns.\n\n{source}\n"
    "Input: {args}\n"
    'Present the result as JSON: {{"output": <main_result_value>, "stats": {{"stat_key": integer_value}}}}'
)


def if_items() -> list[DemoItem]:
    """The built-in instruction-following items (source ``iftrain``)."""
    return [
        DemoItem(
            data_source="iftrain",
            prompt=prompt,
            raw_ground_truth={"instruction_id_list": ids, "kwargs": kwargs},
            difficulty=0.0,
            item_id=f"demo-if-{i}",
        )
        for i, (prompt, ids, kwargs) in enumerate(_IF_ITEMS)
    ]


def logicif_items() -> list[DemoItem]:
    """The built-in LogicIF items: expected values come from running each function on its inputs."""
    from rlif.data.logicif_complexity import complexity_score

    items = []
    for name, source, inputs in _LOGICIF_FUNCTIONS:
        namespace: dict[str, Callable[..., Any]] = {}
        exec(source, namespace)  # our own built-in source, run once at build time to get the expected values
        for case, args in enumerate(inputs):
            output, stats = namespace["f"](list(args))
            items.append(
                DemoItem(
                    data_source="logicif",
                    prompt=_LOGICIF_PROMPT.format(source=source, args=json.dumps(args)),
                    raw_ground_truth={"task_id": name, "code_output": {"output": output, "stats": stats}},
                    difficulty=complexity_score(source),
                    item_id=f"demo-logicif-{name}-{case}",
                )
            )
    return items


def graph_items(tasks: tuple[str, ...] = ("mcp", "mis", "mvc", "tsp"), seed: int = 0) -> list[DemoItem]:
    """One small instance per task from the real instance builder, exact optimum included."""
    from rlif.data.graph_rows import item_row
    from rlif.graphs.items import make_item

    items = []
    for task in tasks:
        row = item_row(make_item(task, "small", seed, 0), "train")
        items.append(
            DemoItem(
                data_source=row["data_source"],
                prompt=row["prompt"][0]["content"],
                raw_ground_truth=row["reward_model"]["ground_truth"],
                difficulty=float(row["extra_info"]["difficulty"]),
                item_id=str(row["extra_info"]["item_id"]),
            )
        )
    return items


def reasoning_gym_items(task: str, levels: tuple[int, ...] = (0, 1), size: int = 2) -> list[DemoItem]:
    """``size`` items of a reasoning-gym task per level, from rlif's builder (``rlif.data.reasoning_gym_build``);
    the prompt is its system prompt and the question in one user message."""
    from rlif.data.reasoning_gym_build import build_rows

    return [
        DemoItem(
            data_source=row["data_source"],
            prompt="\n\n".join(message["content"] for message in row["prompt"]),
            raw_ground_truth=row["reward_model"]["ground_truth"],
            difficulty=float(row["extra_info"]["difficulty"]),
            item_id=str(row["extra_info"]["item_id"]),
        )
        for row in build_rows([task], size, levels)
    ]


def reasoning_gym_sources(tasks: Sequence[str]) -> list[str]:
    """The demo's data sources of reasoning-gym ``tasks`` (``reasoning_gym/<task>``), in their order.

    Raises:
        ValueError: a task rlif does not support (the message lists those it does), or a task named twice.
    """
    from rewards.reasoning_gym_tasks import PREFIX
    from rlif.data.reasoning_gym_build import check_task

    for task in tasks:
        check_task(task)
    if len(set(tasks)) != len(tasks):
        raise ValueError(f"reasoning-gym tasks {list(tasks)}: name each task once")
    return [PREFIX + task for task in tasks]


JUDGE_SOURCE = "judge/demo"
"""The demo's judged source (the ``judge`` reward family: soft constraints put to an LLM judge)."""

# --- judged items: soft constraints only a judge can check, each row but one gated by an IFEval rule check. Pass
# rates of the rule checks on 200 answers of the untrained demo model: no commas 0.93, at least 8 words 0.39, so
# most responses reach the judge and some are gated (docs/verl-integration.md).
_JUDGE_ITEMS = [
    (
        "Write a short thank-you note to a neighbour who lent you a ladder. Do not use any commas.",
        {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
        [("tone", "warm and grateful"), ("content", "thanks the neighbour for lending the ladder")],
    ),
    (
        "Describe a rainy afternoon in at least 8 words.",
        {
            "instruction_id_list": ["length_constraints:number_words"],
            "kwargs": [{"num_words": 8, "relation": "at least"}],
        },
        [("style", "concrete images rather than abstract statements")],
    ),
    (
        "Give one tip to a new cook in a calm, encouraging voice.",
        None,
        [("tone", "calm and encouraging"), ("content", "gives exactly one practical cooking tip")],
    ),
]


def judge_items() -> list[DemoItem]:
    """The built-in judged items (source ``JUDGE_SOURCE``), in the judge family's ground-truth format."""
    return [
        DemoItem(
            data_source=JUDGE_SOURCE,
            prompt=prompt,
            raw_ground_truth={
                "prompt": prompt,
                "hard": hard,
                "soft": [{"kind": kind, "constraint": text} for kind, text in soft],
            },
            difficulty=0.0,
            item_id=f"demo-judge-{i}",
        )
        for i, (prompt, hard, soft) in enumerate(_JUDGE_ITEMS)
    ]


def normalise_ground_truth(item: DemoItem, where: str) -> str:
    """Turn an item's raw ground truth into the canonical JSON string its family scores, checked as data is."""
    from rewards import check_row, normalize_ground_truth

    ground_truth = normalize_ground_truth(item.data_source, item.raw_ground_truth, where=where)
    check_row(item.data_source, ground_truth, None)
    return ground_truth


def demo_rows(split: str, reasoning_gym_tasks: Sequence[str] = (), judge: bool = False) -> list[dict[str, Any]]:
    """All built-in items as verl parquet rows (``data_source, prompt, ability, reward_model, extra_info``), plus
    rows of each reasoning-gym task in ``reasoning_gym_tasks`` (levels 0 and 1, ``reasoning_gym_items``) and the
    judged items (``judge_items``) with ``judge``.

    Raises:
        ValueError: a reasoning-gym task named twice, or one rlif does not support.
    """
    from rlif.data.rows import verl_row

    items = if_items() + logicif_items() + graph_items()
    reasoning_gym_sources(reasoning_gym_tasks)
    for task in reasoning_gym_tasks:
        items += reasoning_gym_items(task)
    if judge:
        items += judge_items()
    rows = []
    for index, item in enumerate(items):
        where = f"built-in demo data row {index} field reward_model.ground_truth"
        source = item.data_source if split == "train" else _val_source(item.data_source)
        extra_info = {"split": split, "index": index, "item_id": item.item_id, "difficulty": item.difficulty}
        rows.append(verl_row(source, item.prompt, normalise_ground_truth(item, where), extra_info))
    return rows


def _val_source(source: str) -> str:
    return "ifeval" if source == "iftrain" else source


def _corpus() -> list[str]:
    """Text the tokenizer is trained on: the demo prompts plus plain English, so random output looks word-like
    and the long graph prompts fit the demo's prompt length."""
    sentences = [item.prompt for item in if_items() + logicif_items() + graph_items()]
    sentences += [
        "The quick brown fox jumps over the lazy dog.",
        "A small town wakes up slowly, and the bakery opens first.",
        "Cooking at home saves money, time and keeps you healthy.",
        "Light from the sun scatters in the air; blue light scatters most.",
        "Students should sleep well, ask questions and take notes.",
        "The cat sat by the window and watched the birds all day.",
        'Answer: {"output": 2, "stats": {"checks": 4}}',
        "[Alice, Bob, Carol] [0, 1, 2], [1, 2, 3] [AAA, BBB, CCC, AAA]",
    ]
    return sentences * 4


def build_tokenizer(out_dir: Path) -> Any:
    """Train a tiny byte-level BPE tokenizer with a ChatML template and save it in Hugging Face format."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = CHAT_TEMPLATE
    out_dir.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(out_dir)
    return fast


def build_model(out_dir: Path, vocab_size: int, eos_token_id: int, pad_token_id: int, seed: int = 0) -> Path:
    """Save a randomly initialised 2-layer Qwen3 (head_dim 64: vLLM's CPU attention rejects smaller heads)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=vocab_size,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        eos_token_id=eos_token_id,
        pad_token_id=pad_token_id,
        bos_token_id=None,
        dtype="float32",
    )
    model = Qwen3ForCausalLM(config)
    model.generation_config.eos_token_id = eos_token_id
    model.generation_config.pad_token_id = pad_token_id
    model.save_pretrained(out_dir)
    return out_dir


@dataclass(frozen=True)
class DemoAssets:
    """Where ``prepare`` put everything."""

    model_dir: Path
    train_file: Path
    val_file: Path

    def as_json(self) -> str:
        return json.dumps({k: str(v) for k, v in self.__dict__.items()}, indent=2)


def prompt_tokens(tokenizer: Any, prompt: list[dict[str, str]], enable_thinking: bool) -> int:
    """The length of a row's prompt as verl's overlong-prompt filter counts it: the chat template applied with the
    generation prompt and the run's ``enable_thinking``, then tokenized without special tokens."""
    text = tokenizer.apply_chat_template(
        prompt, add_generation_prompt=True, tokenize=False, enable_thinking=enable_thinking
    )
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def overlong_prompts(
    tokenizer: Any, rows: Sequence[dict[str, Any]], max_prompt_length: int, enable_thinking: bool
) -> dict[str, list[int]]:
    """Source -> the token lengths of its prompts longer than ``max_prompt_length`` (``prompt_tokens``)."""
    over: dict[str, list[int]] = {}
    for row in rows:
        length = prompt_tokens(tokenizer, list(row["prompt"]), enable_thinking)
        if length > max_prompt_length:
            over.setdefault(row["data_source"], []).append(length)
    return over


def check_prompt_lengths(
    tokenizer: Any, rows: Sequence[dict[str, Any]], max_prompt_length: int, enable_thinking: bool
) -> None:
    """Refuse data with a prompt verl's overlong-prompt filter would drop: the demo's sampler gives each source a
    weight, so a source the filter empties stops the run inside verl, and a reasoning-gym task would lose a level.

    Raises:
        ValueError: a prompt is longer than ``max_prompt_length``; the message names each such source with its
            prompt lengths and, for a reasoning-gym source, the supported tasks whose demo prompts all fit.
    """
    from rewards.reasoning_gym_tasks import PREFIX, TASKS

    over = overlong_prompts(tokenizer, rows, max_prompt_length, enable_thinking)
    if not over:
        return
    problems = "; ".join(f"{source} has prompts of {lengths} tokens" for source, lengths in over.items())
    message = (
        f"the CPU demo's prompts must fit its {max_prompt_length}-token limit (the demo run's "
        f"train.max_prompt_length, with the demo tokenizer), or verl drops them: {problems}"
    )
    if any(source.startswith(PREFIX) for source in over):
        fitting = [
            task
            for task in TASKS
            if not overlong_prompts(
                tokenizer,
                [row for row in demo_rows("train", (task,)) if row["data_source"] == PREFIX + task],
                max_prompt_length,
                enable_thinking,
            )
        ]
        message += f"; the reasoning-gym tasks whose demo prompts fit: {', '.join(fitting) or 'none'}"
    raise ValueError(message)


def prepare(
    workdir: Path,
    reasoning_gym_tasks: Sequence[str] = (),
    judge: bool = False,
    *,
    max_prompt_length: int | None = None,
    enable_thinking: bool = False,
) -> DemoAssets:
    """Build tokenizer, model and data under ``workdir`` (rebuilt every time: it takes a few seconds); the data
    gets rows of each reasoning-gym task in ``reasoning_gym_tasks`` and the judged items with ``judge``
    (``demo_rows``).

    Args:
        workdir: where the model, tokenizer and data go.
        reasoning_gym_tasks: reasoning-gym tasks whose rows (levels 0 and 1) the data gets.
        judge: add the judged items.
        max_prompt_length: the run's prompt limit; every training prompt must fit it (``check_prompt_lengths``)
            before the model and data are written. None: no check.
        enable_thinking: the run's thinking switch, which the chat template's length depends on.

    Raises:
        ValueError: see ``demo_rows`` and ``check_prompt_lengths``.
    """
    from rlif.data.files import write_rows_atomic

    train_rows = demo_rows("train", reasoning_gym_tasks, judge)
    model_dir = workdir / "model"
    tokenizer = build_tokenizer(model_dir)
    if max_prompt_length is not None:
        check_prompt_lengths(tokenizer, train_rows, max_prompt_length, enable_thinking)
    build_model(model_dir, len(tokenizer), tokenizer.eos_token_id, tokenizer.pad_token_id)
    train_file = write_rows_atomic(train_rows, workdir / "data" / "train.parquet")
    val_file = write_rows_atomic(demo_rows("val", reasoning_gym_tasks, judge), workdir / "data" / "val.parquet")
    return DemoAssets(model_dir=model_dir, train_file=train_file, val_file=val_file)
