"""Ground-truth normalisation: every published form gives the same canonical string; bad rows fail loudly."""

from __future__ import annotations

import json
from typing import Any

import if_corpus
import pytest

from rewards.instruction_following import check_ground_truth, normalize_ground_truth
from rewards.instruction_following.ground_truth import parse_canonical

CANONICAL = (
    '{"instruction_ids":["punctuation:no_comma","length_constraints:number_words"],'
    '"kwargs":[{},{"num_words":300,"relation":"at least"}]}'
)

EQUIVALENT_FORMS: list[Any] = [
    # IFEval row (whole row, as in the jsonl) and its HF copy padded with nulls and float counts
    {
        "key": 1000,
        "prompt": "p",
        "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
        "kwargs": [{}, {"relation": "at least", "num_words": 300}],
    },
    {
        "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
        "kwargs": [{"num_words": None, "keywords": None}, {"relation": "at least", "num_words": 300.0, "letter": None}],
    },
    # RLIF form, as mapping and as JSON
    {
        "instruction_ids": ["punctuation:no_comma", "length_constraints:number_words"],
        "kwargs": [None, {"num_words": 300, "relation": "at least"}],
    },
    json.dumps(
        {
            "instruction_ids": ["punctuation:no_comma", "length_constraints:number_words"],
            "kwargs": [{}, {"num_words": 300, "relation": "at least"}],
        }
    ),
    # open-instruct: Python literal, JSON with null kwargs, list object, and a list holding a JSON string
    "[{'instruction_id': ['punctuation:no_comma', 'length_constraints:number_words'], "
    "'kwargs': [None, {'num_words': 300, 'relation': 'at least'}]}]",
    '[{"instruction_id": ["punctuation:no_comma", "length_constraints:number_words"], '
    '"kwargs": [null, {"num_words": 300, "relation": "at least"}]}]',
    [
        {
            "instruction_id": ["punctuation:no_comma", "length_constraints:number_words"],
            "kwargs": [{}, {"num_words": 300, "relation": "at least"}],
        }
    ],
    [
        json.dumps(
            {
                "instruction_id": ["punctuation:no_comma", "length_constraints:number_words"],
                "kwargs": [{}, {"num_words": 300, "relation": "at least"}],
            }
        )
    ],
    CANONICAL,
]


@pytest.mark.parametrize("raw", EQUIVALENT_FORMS)
def test_every_form_normalises_to_one_canonical_string(raw: Any) -> None:
    assert normalize_ground_truth(raw, where="t") == CANONICAL


def test_canonical_string_passes_the_build_check_and_parses() -> None:
    check_ground_truth(CANONICAL)
    assert parse_canonical(CANONICAL) == (
        ("punctuation:no_comma", {}),
        ("length_constraints:number_words", {"num_words": 300, "relation": "at least"}),
    )


def test_non_canonical_ground_truth_fails_the_build_check() -> None:
    with pytest.raises(ValueError, match="not in canonical form"):
        check_ground_truth(json.dumps({"instruction_ids": ["punctuation:no_comma"], "kwargs": [{}]}, indent=1))
    with pytest.raises(ValueError, match="expected the canonical JSON string"):
        check_ground_truth({"instruction_ids": ["punctuation:no_comma"], "kwargs": [{}]})


BAD_ROWS: list[tuple[Any, str]] = [
    ({"instruction_ids": ["keywords:nope"], "kwargs": [{}]}, "unknown instruction id 'keywords:nope'"),
    (
        {"instruction_ids": ["length_constraints:number_words"], "kwargs": [{"num_words": 5}]},
        r"missing required kwarg\(s\) \['relation'\]",
    ),
    ({"instruction_ids": ["punctuation:no_comma"], "kwargs": [{"extra": 1}]}, r"unknown kwarg\(s\) \['extra'\]"),
    (
        {
            "instruction_ids": ["length_constraints:number_words"],
            "kwargs": [{"num_words": 5.5, "relation": "at least"}],
        },
        "must be an integer",
    ),
    (
        {
            "instruction_ids": ["length_constraints:number_words"],
            "kwargs": [{"num_words": True, "relation": "at least"}],
        },
        "must be an integer",
    ),
    (
        {"instruction_ids": ["length_constraints:number_words"], "kwargs": [{"num_words": -1, "relation": "at least"}]},
        "must not be negative",
    ),
    (
        {"instruction_ids": ["length_constraints:number_words"], "kwargs": [{"num_words": 5, "relation": "at most"}]},
        "must be one of",
    ),
    ({"instruction_ids": ["keywords:existence"], "kwargs": [{"keywords": "river"}]}, "must be a list of strings"),
    (
        {
            "instruction_ids": ["keywords:letter_frequency"],
            "kwargs": [{"letter": "ab", "let_frequency": 1, "let_relation": "at least"}],
        },
        "single character",
    ),
    ({"instruction_ids": ["startend:end_checker"], "kwargs": [{"end_phrase": 3}]}, "must be a string"),
    (
        {"instruction_ids": ["punctuation:no_comma", "startend:quotation"], "kwargs": [{}]},
        "2 instruction ids but 1 kwargs",
    ),
    ({"instruction_ids": [], "kwargs": []}, "no instructions"),
    ({"instruction_ids": ["punctuation:no_comma"]}, "field 'kwargs' is missing"),
    ({"instruction_ids": ["punctuation:no_comma"], "kwargs": [{}], "prompt": "x"}, "unexpected field"),
    ({"func_name": "verify_paragraph_count", "N": 5}, "func_name"),
    ({"something": 1}, "expected 'instruction_ids'"),
    (
        "[{'instruction_id': ['punctuation:no_comma'], 'kwargs': [{}]}, {'instruction_id': [], 'kwargs': []}]",
        "one-element list",
    ),
    ("not json at all {", "neither JSON nor a Python literal"),
    (42, "unsupported ground truth type int"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_ROWS)
def test_bad_ground_truth_raises_naming_where(raw: Any, message: str) -> None:
    where = "if_train.parquet row 17 field reward_model.ground_truth"
    with pytest.raises(ValueError, match=message) as error:
        normalize_ground_truth(raw, where=where)
    assert str(error.value).startswith(where)


def test_all_ifeval_rows_normalise_and_round_trip() -> None:
    for index, row in enumerate(if_corpus.load_jsonl(if_corpus.IFEVAL_ROWS)):
        canonical = normalize_ground_truth(row, where=f"ifeval row {index}")
        check_ground_truth(canonical)
        assert [i for i, _ in parse_canonical(canonical)] == row["instruction_id_list"]


def test_ifevalg_corpus_kwargs_are_accepted() -> None:
    for instruction_id, kwargs in if_corpus.IFEVALG_INSTRUCTIONS:
        check_ground_truth(normalize_ground_truth({"instruction_ids": [instruction_id], "kwargs": [kwargs]}, where="g"))
