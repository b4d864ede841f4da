"""``python -m rlif.data math``: evaluation files from the Qwen2.5-Math harness layout, MATH-500 and AIME 2025."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from rlif.data.__main__ import main
from rlif.data.math_sets import SYSTEM_PROMPT, last_boxed
from rlif.data.schema import iter_parquet_rows

needs_math_verify = pytest.mark.skipif(
    importlib.util.find_spec("math_verify") is None, reason="math-verify is not installed"
)

HARNESS_ROWS = {
    "gsm8k": [{"question": "How many?", "answer": "2 + 2 = 4\n#### 1,204"}],
    "amc23": [{"problem": "How far?", "question": "How far?", "answer": 27.0}],
    "minerva_math": [{"problem": "Size?", "solution": "So $s=\\boxed{1.6} \\mathrm{~cm}$"}],
    "asdiv": [{"body": "Seven apples.", "question": "How many?", "answer": "9 (apples)"}],
    "svamp": [{"Body": "There are 290 bananas", "Question": "How big is each group?", "Answer": 145.0}],
    "gaokao2024_mix": [
        {"question": "Which set? A. x B. y C. z", "answer": "C. z", "choice_answer": "C"},
        {"question": "Find x.", "answer": "3", "choice_answer": ""},
    ],
    "gaokao2023en": [{"question": "Find M.", "answer": "$\\{x|x<1\\}$"}, {"question": "Broken.", "answer": ""}],
    "mmlu_stem": [{"question": "Pick.", "choices": ["one", "two", "three", "four"], "answer": 2}],
    "aqua": [{"question": "Speed?", "options": ["A)5", "B)6", "C)7", "D)8", "E)9"], "correct": "E"}],
    "sat_math": [{"question": "Which?", "options": "A) $1$ B) $2$ C) $3$ D) $4$", "Answer": "A"}],
}


def _write_harness(root: Path) -> Path:
    for name, rows in HARNESS_ROWS.items():
        (root / name).mkdir(parents=True)
        (root / name / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


def _rows(path: Path) -> list[dict]:
    return list(iter_parquet_rows(path))


@needs_math_verify
def test_each_harness_set_gets_its_own_file_gold_and_source(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = _write_harness(tmp_path / "data")
    assert main(["math", "--qwen-dir", str(data), "--out-dir", str(tmp_path / "out")]) == 0
    assert "gaokao2023en:1 (empty gold)" in capsys.readouterr().err
    out = tmp_path / "out" / "math"
    assert sorted(p.stem for p in out.glob("*.parquet")) == sorted(HARNESS_ROWS)
    golds = {
        name: [
            (r["data_source"], json.loads(r["reward_model"]["ground_truth"])) for r in _rows(out / f"{name}.parquet")
        ]
        for name in HARNESS_ROWS
    }
    assert golds["gsm8k"] == [("math/gsm8k", "1204")]
    assert golds["amc23"] == [("math/amc23", "27")]
    assert golds["minerva_math"] == [("math/minerva_math", "1.6")]
    assert golds["asdiv"] == [("math/asdiv", "9")]
    assert golds["svamp"] == [("math/svamp", "145")]
    assert golds["gaokao2023en"] == [("math/gaokao2023en", "\\{x|x<1\\}")]
    assert golds["gaokao2024_mix"] == [
        ("math_choice/gaokao2024_mix", {"answer": "C", "extraction": "final_answer"}),
        ("math/gaokao2024_mix", "3"),
    ]
    assert golds["mmlu_stem"] == [("math_choice/mmlu_stem", {"answer": "C", "extraction": "choice"})]
    assert golds["aqua"] == [("math_choice/aqua", {"answer": "E", "extraction": "choice"})]
    assert golds["sat_math"] == [("math_choice/sat_math", {"answer": "A", "extraction": "choice"})]


@needs_math_verify
def test_questions_follow_the_harness_and_its_template(tmp_path: Path) -> None:
    data = _write_harness(tmp_path / "data")
    assert (
        main(
            [
                "math",
                "--qwen-dir",
                str(data),
                "--sets",
                "mmlu_stem",
                "aqua",
                "sat_math",
                "svamp",
                "--out-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    [mmlu] = _rows(tmp_path / "math" / "mmlu_stem.parquet")
    assert mmlu["prompt"] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "Pick.\nAnswer Choices: (A) one (B) two (C) three (D) four"},
    ]
    [aqua] = _rows(tmp_path / "math" / "aqua.parquet")
    assert aqua["prompt"][1]["content"] == "Speed?\nAnswer Choices: (A) 5 (B) 6 (C) 7 (D) 8 (E) 9"
    [sat] = _rows(tmp_path / "math" / "sat_math.parquet")
    assert sat["prompt"][1]["content"] == "Which?\nAnswer Choices: (A) $1$ (B) $2$ (C) $3$ (D) $4$"
    [svamp] = _rows(tmp_path / "math" / "svamp.parquet")
    assert svamp["prompt"][1]["content"] == "There are 290 bananas. How big is each group?"
    assert svamp["extra_info"]["item_id"] == "svamp:0"


@needs_math_verify
def test_math500_and_aime25_from_their_published_files(tmp_path: Path) -> None:
    math500 = tmp_path / "test.jsonl"
    math500.write_text(
        json.dumps(
            {
                "problem": "Convert.",
                "answer": "\\left( 3, \\frac{\\pi}{2} \\right)",
                "subject": "Precalculus",
                "level": 2,
                "unique_id": "test/precalculus/807.json",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    aime25 = tmp_path / "aime25.jsonl"
    aime25.write_text(json.dumps({"question": "Find it.", "answer": "70"}) + "\n", encoding="utf-8")
    args = ["math", "--math500", str(math500), "--aime25", str(aime25), "--template", "user"]
    assert main([*args, "--out-dir", str(tmp_path / "out")]) == 0
    [row] = _rows(tmp_path / "out" / "math" / "math500.parquet")
    assert row["data_source"] == "math/math500"
    assert row["extra_info"]["difficulty"] == 2.0
    assert row["extra_info"]["subject"] == "Precalculus"
    assert row["prompt"] == [{"role": "user", "content": f"Convert.\n{SYSTEM_PROMPT}"}]
    [row] = _rows(tmp_path / "out" / "math" / "aime25.parquet")
    assert (row["data_source"], row["reward_model"]["ground_truth"]) == ("math/aime25", '"70"')


def test_errors_name_the_file_and_row(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "aqua").mkdir()
    (tmp_path / "aqua" / "test.jsonl").write_text(json.dumps({"question": "Q", "options": ["A)1"]}) + "\n")
    assert main(["math", "--qwen-dir", str(tmp_path), "--out-dir", str(tmp_path / "out")]) == 1
    assert "aqua/test.jsonl: row 0: no field 'correct'" in capsys.readouterr().err
    assert main(["math", "--qwen-dir", str(tmp_path), "--sets", "nope"]) == 1
    assert "unknown harness set 'nope'" in capsys.readouterr().err
    assert main(["math"]) == 1


def test_last_boxed_is_brace_matched() -> None:
    assert last_boxed("\\boxed{1} then \\boxed{\\frac{1}{2}} cm") == "\\frac{1}{2}"
    with pytest.raises(ValueError, match="no \\\\boxed"):
        last_boxed("no box")
