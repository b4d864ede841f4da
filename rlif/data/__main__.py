"""Build, validate and cross-check rlif data files locally: ``python -m rlif.data <command>``.

Examples::

    python -m rlif.data eval --ifbench /work/shared/data/ifbench_test.jsonl \\
        --ifeval /work/shared/data/ifeval_input_data.jsonl --logicif logicifeval_mini.jsonl --out-dir verl_data
    python -m rlif.data mixture if1000_logicif1000 --seed 0 --sources if_multi.parquet logicif_train.jsonl \\
        --eval-file verl_data/ifbench_300_ifeval_541_logicif_749.parquet --out-dir verl_data
    python -m rlif.data math --qwen-dir Qwen2.5-Math/evaluation/data --math500 MATH-500/test.jsonl \\
        --aime25 aime_2025.jsonl --out-dir verl_data   # verl_data/math/<benchmark>.parquet
    python -m rlif.data graph --volume 45000 --out verl_data/graph/6np_45000   # rlif.data.graph_build's options
    python -m rlif.data grapharena dataset/MCP_easy.pkl dataset/TSP_hard.pkl --out-dir verl_data/grapharena
    python -m rlif.data graphwiz test_set/cycle_test.json test_set/flow_test.json --out-dir verl_data/graphwiz
    python -m rlif.data reasoning-gym --tasks maze string_insertion --size 200 --levels 0 1 2 \\
        --out verl_data/reasoning_gym/train.parquet   # rlif.data.reasoning_gym_build's options
    python -m rlif.data validate verl_data/*.parquet verl_data/graph/6np_45000/*.parquet --resolve 200
    python -m rlif.data convert rlif_repo/if1000_logicif1000.parquet --out-dir verl_data   # RLIF's row format
    python -m rlif.data overlap verl_data/if1000_logicif1000.parquet \\
        verl_data/ifbench_300_ifeval_541_logicif_749.parquet
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from rlif.data.cli import DefaultsHelpFormatter
from rlif.data.convert import convert_rlif_file, needs_conversion
from rlif.data.files import read_source_rows
from rlif.data.mixtures import (
    MixtureSpec,
    PoolReport,
    build_eval_rows,
    build_mixture,
    find_overlap,
    load_rows,
    write_eval,
    write_mixture,
)
from rlif.data.schema import FileSummary, validate_parquet
from rlif.data.summary import file_kind, format_table, summary_table


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rlif.data", description=__doc__, formatter_class=DefaultsHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    new = functools.partial(sub.add_parser, formatter_class=DefaultsHelpFormatter)

    mixture = new("mixture", help="build if{X}_logicif{Y}.parquet from IF and LogicIF source files")
    mixture.add_argument("name", help="mixture name if{X}_logicif{Y}: X IF rows and Y LogicIF rows")
    mixture.add_argument("--sources", type=Path, nargs="+", required=True, help="IF and LogicIF source files")
    mixture.add_argument("--seed", type=int, default=0, help="seed of the draw and shuffle")
    mixture.add_argument("--eval-file", type=Path, help="evaluation parquet; overlapping training rows are dropped")
    mixture.add_argument("--out-dir", type=Path, default=Path("verl_data"), help="output folder")

    evaluation = new("eval", help="build ifbench_{B}_ifeval_{E}_logicif_{L}.parquet")
    evaluation.add_argument("--ifbench", type=Path, nargs="*", default=[], help="IFBench jsonl files")
    evaluation.add_argument("--ifeval", type=Path, nargs="*", default=[], help="IFEval jsonl files")
    evaluation.add_argument("--logicif", type=Path, nargs="*", default=[], help="LogicIFEval-mini rows")
    evaluation.add_argument(
        "--training-file",
        type=Path,
        help="training file (if40000_logicif40000.parquet) whose LogicIF curriculum cut (10 intervals, initial share "
        "0.3, whole functions) each LogicIF row is placed in, as extra_info.training_interval",
    )
    evaluation.add_argument("--out-dir", type=Path, default=Path("verl_data"), help="output folder")

    from rlif.data.math_sets import QWEN_BENCHMARKS, TEMPLATES

    maths = new(
        "math",
        help="build mathematics evaluation files, one per benchmark (verl_data/math/<name>.parquet)",
        description="Read the Qwen2.5-Math harness's data/<name>/test.jsonl files and the published MATH-500 and\n"
        "AIME 2025 files; free-form questions go to math/<name>, multiple-choice ones to math_choice/<name>\n"
        "(docs/math-evaluation.md lists each benchmark's gold field and grading).",
    )
    maths.add_argument("--qwen-dir", type=Path, help="the harness's evaluation/data folder")
    maths.add_argument(
        "--sets",
        nargs="+",
        default=[],
        metavar="NAME",
        help="harness sets to build (default: every one with a file): " + ", ".join(b.name for b in QWEN_BENCHMARKS),
    )
    maths.add_argument("--math500", type=Path, help="MATH-500 test.jsonl (HuggingFaceH4/MATH-500)")
    maths.add_argument("--aime25", type=Path, help="AIME 2025 file (question or problem, and answer)")
    maths.add_argument("--template", choices=TEMPLATES, default=TEMPLATES[0], help="prompt template")
    maths.add_argument("--out-dir", type=Path, default=Path("verl_data"), help="output folder")

    sub.add_parser(
        "graph",
        add_help=False,
        help="build NP-graph data with exact optima (options of python -m rlif.data.graph_build)",
    )
    sub.add_parser(
        "grapharena",
        add_help=False,
        help="import GraphArena's problem sets with its own text and checks (python -m rlif.data.grapharena)",
    )
    sub.add_parser(
        "graphwiz",
        add_help=False,
        help="import GraphWiz's test set with its question text, scored exactly (python -m rlif.data.graphwiz)",
    )
    sub.add_parser(
        "reasoning-gym",
        add_help=False,
        help="build rows of reasoning-gym tasks at curriculum levels (python -m rlif.data.reasoning_gym_build)",
    )
    validate = new(
        "validate",
        help="validate verl parquet files and print a table",
        description="Check every row of each file (schema, ground truth, graph witnesses) and re-solve a sample\n"
        "of the graph optima exactly. Each failing file is one error line; exit status 1 if any file fails.",
    )
    validate.add_argument("files", type=Path, nargs="+")
    validate.add_argument(
        "--resolve",
        type=int,
        default=100,
        metavar="N",
        help="graph rows per file whose optimum is re-solved exactly (all of a file with fewer; 0: none)",
    )
    validate.add_argument("--seed", type=int, default=0, help="seed of the re-solve sample")

    convert = new(
        "convert",
        help="convert files in RLIF's row format (if{X}_logicif{Y}.parquet) to rlif's schema",
        description="Convert RLIF-format parquet files with the mixture builder's converter (ground truth\n"
        "canonicalised, LogicIF difficulty from the complexity score), keeping every row in order, then validate.",
    )
    convert.add_argument("files", type=Path, nargs="+", help="RLIF-format parquet files")
    convert.add_argument("--out-dir", type=Path, default=Path("verl_data"), help="output folder (same file names)")

    overlap = new("overlap", help="fail if training rows occur in the evaluation file")
    overlap.add_argument("train", type=Path)
    overlap.add_argument("eval", type=Path)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; return 0 on success, 1 on a data error (printed with file, row and field)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["graph"]:
        from rlif.data.graph_build import main as build_graph

        return build_graph(argv[1:])
    if argv[:1] == ["grapharena"]:
        from rlif.data.grapharena import main as import_grapharena

        return import_grapharena(argv[1:])
    if argv[:1] == ["graphwiz"]:
        from rlif.data.graphwiz import main as import_graphwiz

        return import_graphwiz(argv[1:])
    if argv[:1] == ["reasoning-gym"]:
        from rlif.data.reasoning_gym_build import main as build_reasoning_gym

        return build_reasoning_gym(argv[1:])
    args = _parser().parse_args(argv)
    try:
        if args.command == "mixture":
            return _mixture(args)
        if args.command == "eval":
            return _eval(args)
        if args.command == "math":
            return _math(args)
        if args.command == "validate":
            return _validate(args.files, resolve=args.resolve, seed=args.seed)
        if args.command == "convert":
            return _convert(args)
        return _overlap(args)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


def _validate(files: list[Path], *, resolve: int, seed: int) -> int:
    """Validate each file on its own, so one bad file does not hide the state of the others."""
    from rlif.data.graph_rows import GRAPH_PREFIX
    from rlif.data.graph_verify import resolve_sample

    if resolve < 0:
        raise ValueError(f"--resolve must be >= 0, got {resolve}")
    summaries: list[FileSummary] = []
    notes: list[str] = []
    errors: list[str] = []
    for path in files:
        try:
            summary = validate_parquet(path)
            if resolve and any(s.startswith(GRAPH_PREFIX) for s in summary.sources):
                report = resolve_sample(path, resolve, seed)
                notes.append(f"{path}: re-solved {report.resolved} of {report.graph_rows} graph optima (seed {seed})")
        except ValueError as err:
            errors.append(str(err))
            continue
        summaries.append(summary)
    if summaries:
        print(summary_table(summaries))
    for note in notes:
        print(note)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


def _convert(args: argparse.Namespace) -> int:
    summaries = []
    for path in args.files:
        if not needs_conversion(path):
            raise ValueError(f"{path}: not in RLIF's row format (already rlif's schema, or not a verl parquet file)")
        split = "test" if file_kind(path) == "eval" else "train"
        conversion = convert_rlif_file(path, args.out_dir / path.name, split=split, source_id=f"file:{path.name}")
        summaries.append(validate_parquet(conversion.target))
    return _print_validated(summaries)


def _mixture(args: argparse.Namespace) -> int:
    spec = MixtureSpec.from_name(args.name, seed=args.seed)
    eval_rows = list(read_source_rows(args.eval_file)) if args.eval_file else []
    if args.eval_file is None:
        # Said out loud: a mixture built without it may hold evaluation prompts, which inflates validation scores.
        print(
            "warning: no --eval-file given, so the train/eval overlap check was SKIPPED: rows that also occur in the "
            "evaluation file are not removed (check later with `python -m rlif.data overlap <mixture> <eval file>`)",
            file=sys.stderr,
        )
    report = PoolReport()
    rows = build_mixture(spec, load_rows(args.sources), eval_rows=eval_rows, report=report)
    path = write_mixture(rows, spec, args.out_dir)
    print(
        format_table(
            ["family", "read", "duplicates", "eval overlap", "taken"],
            [
                [f, str(report.read[f]), str(report.duplicates[f]), str(report.eval_overlap[f]), str(n)]
                for f, n in (("if", spec.if_count), ("logicif", spec.logicif_count))
            ],
        )
    )
    return _print_validated([validate_parquet(path)])


def _eval(args: argparse.Namespace) -> int:
    rows = build_eval_rows(
        ifbench=args.ifbench, ifeval=args.ifeval, logicif=args.logicif, training_file=args.training_file
    )
    return _print_validated([validate_parquet(write_eval(rows, args.out_dir))])


def _math(args: argparse.Namespace) -> int:
    from rlif.data.math_sets import build_math_files

    skipped: list[str] = []
    paths = build_math_files(
        skipped=skipped,
        qwen_dir=args.qwen_dir,
        names=args.sets,
        math500=args.math500,
        aime25=args.aime25,
        out_dir=args.out_dir,
        template=args.template,
    )
    if skipped:
        print(f"left out {len(skipped)} rows: {', '.join(skipped)}", file=sys.stderr)
    return _print_validated([validate_parquet(path) for path in paths])


def _overlap(args: argparse.Namespace) -> int:
    overlap = find_overlap(read_source_rows(args.train), list(read_source_rows(args.eval)))
    print(f"{args.train}: {len(overlap.same_prompt)} rows share a prompt with {args.eval}")
    print(f"{args.train}: {len(overlap.same_task)} LogicIF rows share a task_id with {args.eval}")
    for item_id in (overlap.same_prompt + overlap.same_task)[:20]:
        print(f"  {item_id}")
    return 1 if overlap else 0


def _print_validated(summaries: list[FileSummary]) -> int:
    print(summary_table(summaries))
    for s in summaries:
        print(f"wrote {s.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
