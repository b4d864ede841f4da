"""The code base's import boundaries, checked statically on every import statement (those inside functions too).

- ``rewards`` and ``samplers`` are pure Python: they import nothing of verl, torch, ray or rlif, so a reward or a
  sampling policy runs (and is tested) anywhere.
- Only ``rlif.verl_glue`` imports verl, so a verl upgrade is a port of one package.
- rlif's packages are layered (``LAYERS``): a package imports only packages of lower layers, so no import cycle
  can form among them and the run spec stays the vocabulary everything else imports. A module name written as a
  string counts as an import where it is one (``importlib``, ``python -m`` arguments, ``pkg://`` config paths).
- Nothing on the GPU path imports the CPU-only support (``rlif.verl_glue.cpu_support``, whose start-up hook patches
  torch, verl and vLLM): the GPU path is what verl loads from rlif, what the job scripts under ``recipe/`` run with
  ``python -m``, and every module those import, at any depth.

The scan reads source, never imports it: ``import a.b``, ``from a import b`` (relative forms resolved), and
``importlib.import_module("a.b")`` / ``__import__("a.b")`` with a literal name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PURE_PACKAGES = ("rewards", "samplers")
"""Packages that stay importable without any of ``PURE_FORBIDDEN``."""

PURE_FORBIDDEN = frozenset({"verl", "torch", "ray", "rlif"})
"""Top-level packages a pure package may not import."""

VERL_GLUE = "rlif.verl_glue"
"""The one package allowed to import verl."""

CPU_SUPPORT = frozenset({"rlif.verl_glue.cpu_support"})
"""The CPU-only support, and the module older environments' start-up hook imports to reach it."""

GPU_PATH_ROOTS = ("rlif.verl_glue.hooks", "rlif.verl_glue.v1_feedback", *PURE_PACKAGES)
"""What verl loads from rlif (``pkg://rlif.verl_glue.hooks`` in every run, ``.v1_feedback`` with the V1 trainer) and
the packages it scores with; the job scripts' ``python -m`` modules are added by ``job_script_modules``."""

KNOWN_EXCEPTIONS: dict[str, str] = {}
"""Files that break a boundary today, with the reason; a listed file that no longer breaks one fails the test, so
the list only shrinks."""

SKIPPED_DIRS = frozenset({"tests", "outputs", "verl_data", "log", "checkpoints", "build", "dist", "node_modules"})
"""Top-level directories that hold no shipped Python code."""

LAYERS: tuple[tuple[str, ...], ...] = (
    ("rlif.atomic_files", "rlif.jsonl", "rlif.envfile", "rlif.redaction"),
    ("rlif.hub", "rlif.graphs"),
    ("rlif.data",),
    ("rlif.runs", "rlif.preflight"),
    ("rlif.eval", "rlif.verl_glue", "rlif.simulate", "rlif.demo_assets", "rlif.demo_judge"),
    ("rlif.recipes", "rlif.cpu_demo", "rlif.hub_cli"),
    ("rlif.report",),
)
"""rlif's packages and top-level modules from the bottom layer up; each imports only what lies in a lower layer.
The README's layout section draws the same picture (``layering_picture``)."""

_MINUS_M = re.compile(r"-m\s+(rlif(?:\.\w+)*)")


def python_modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every shipped ``.py`` file under ``root`` (tests and hidden dirs excluded)."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if parts[0] in SKIPPED_DIRS or any(p.startswith(".") or p == "__pycache__" for p in parts):
            continue
        names = list(parts[:-1]) if parts[-1] == "__init__.py" else [*parts[:-1], parts[-1].removesuffix(".py")]
        modules[".".join(names)] = path
    return modules


def imported_names(path: Path, module: str) -> set[str]:
    """Every module name ``path`` (the module ``module``) imports, wherever the import statement is.

    ``from a import b`` yields both ``a`` and ``a.b`` (``b`` may be a submodule); a relative import is resolved
    against ``module``'s package.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".") if package else []
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            if base:
                names.add(base)
            names.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
    return names


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in {"__import__", "import_module"}
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def named_modules(path: Path, modules: Mapping[str, Path]) -> set[str]:
    """Modules ``path`` names in a string that is a module reference (``"rlif.x.y"`` as a ``python -m`` argument,
    ``"pkg://rlif.x.y"``); docstrings and prose are not references."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            name = node.value.removeprefix("pkg://")
            if name in modules:
                found.add(name)
    return found


def layer_of(module: str) -> tuple[int, str] | None:
    """The layer index and the ``LAYERS`` entry a module belongs to (None for the ``rlif`` package itself and for
    modules outside rlif)."""
    for index, layer in enumerate(LAYERS):
        for unit in layer:
            if module == unit or module.startswith(unit + "."):
                return index, unit
    return None


def layering_violations(root: Path) -> list[str]:
    """Every import from one rlif package into another that is not in a lower layer, and every rlif package or
    top-level module that ``LAYERS`` does not place, one line each naming the file and the import."""
    modules = python_modules(root)
    problems: list[str] = []
    for name, path in sorted(modules.items()):
        if name.split(".")[0] != "rlif":
            continue
        where = path.relative_to(root)
        own = layer_of(name)
        if own is None and name != "rlif":
            problems.append(f"{where}: {name} is in no layer of LAYERS; place its package there")
            continue
        names = imported_names(path, name) | named_modules(path, modules)
        for target in sorted({t for n in names for t in local_targets(n, modules)}):
            other = layer_of(target)
            if other is None:
                continue
            if own is None:
                problems.append(f"{where}: the rlif package imports {target}; it must import none of its packages")
            elif other[1] != own[1] and other[0] >= own[0]:
                problems.append(
                    f"{where}: {own[1]} (layer {own[0]}) imports {target} ({other[1]}, layer {other[0]}); "
                    "a package may import only lower layers"
                )
    return problems


def layering_picture() -> str:
    """``LAYERS`` as the README draws it, top layer first."""
    lines = [" | ".join(unit.removeprefix("rlif.") for unit in layer) for layer in reversed(LAYERS)]
    return "\n".join(lines)


def job_script_modules(root: Path) -> set[str]:
    """The rlif modules the GPU jobs run with ``python -m``: the generated job scripts under ``recipe/`` and the
    launcher they source (``scripts/slurm_launch.sh``)."""
    found: set[str] = set()
    recipe = root / "recipe"
    scripts = sorted(recipe.rglob("*.sh")) if recipe.is_dir() else []
    launcher = root / "scripts" / "slurm_launch.sh"
    for script in [*scripts, *([launcher] if launcher.is_file() else [])]:
        found.update(_MINUS_M.findall(script.read_text(encoding="utf-8")))
    return found


def local_targets(name: str, modules: Mapping[str, Path]) -> list[str]:
    """The scanned modules an import of ``name`` executes: the named module and every package above it."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in modules]


def import_chain(roots: Iterable[str], target: frozenset[str], graph: Mapping[str, set[str]]) -> list[str] | None:
    """The shortest import chain from any of ``roots`` to a module of ``target`` (None when none reaches it)."""
    queue = [[root] for root in roots if root in graph]
    seen = {chain[0] for chain in queue}
    while queue:
        chain = queue.pop(0)
        if chain[-1] in target:
            return chain
        for nxt in sorted(graph.get(chain[-1], ())):
            if nxt not in seen:
                seen.add(nxt)
                queue.append([*chain, nxt])
    return None


def outermost(names: Iterable[str]) -> list[str]:
    """``names`` without those inside another one (``a.b`` covers ``a.b.c``), sorted."""
    found = set(names)
    return sorted(n for n in found if not any(n.startswith(other + ".") for other in found))


def boundary_violations(root: Path) -> list[str]:
    """Every broken boundary under ``root``, one line each naming the file and the import."""
    modules = python_modules(root)
    imports = {name: imported_names(path, name) for name, path in modules.items()}
    problems: list[str] = []
    for name, names in sorted(imports.items()):
        where = modules[name].relative_to(root)
        top = name.split(".")[0]
        if top in PURE_PACKAGES:
            for bad in outermost(n for n in names if n.split(".")[0] in PURE_FORBIDDEN):
                problems.append(f"{where}: imports {bad}; {top} must import nothing of {sorted(PURE_FORBIDDEN)}")
        if not (name == VERL_GLUE or name.startswith(VERL_GLUE + ".")):
            for bad in outermost(n for n in names if n.split(".")[0] == "verl"):
                problems.append(f"{where}: imports {bad}; only {VERL_GLUE} may import verl")
    graph = {name: {t for n in names for t in local_targets(n, modules)} for name, names in imports.items()}
    roots = sorted(
        {m for m in modules if m.split(".")[0] in PURE_PACKAGES}
        | {m for m in (*GPU_PATH_ROOTS, *job_script_modules(root)) if m in modules}
    )
    chain = import_chain(roots, CPU_SUPPORT, graph)
    if chain is not None:
        problems.append(
            f"{modules[chain[-2]].relative_to(root)}: the GPU path imports the CPU support: {' -> '.join(chain)}"
        )
    return problems


def test_the_repository_keeps_its_boundaries() -> None:
    problems = boundary_violations(REPO)
    known = [p for p in problems if p.split(":")[0] in KNOWN_EXCEPTIONS]
    assert [p for p in problems if p not in known] == []
    stale = sorted(set(KNOWN_EXCEPTIONS) - {p.split(":")[0] for p in known})
    assert stale == [], f"no longer break a boundary: delete from KNOWN_EXCEPTIONS: {stale}"


def test_rlif_packages_import_only_lower_layers() -> None:
    assert layering_violations(REPO) == []


def test_the_readme_draws_the_layers() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"```text\n{layering_picture()}\n```" in readme, f"README's layout must draw:\n{layering_picture()}"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"rlif/runs/spec.py": "def f():\n    from rlif.recipes import render\n", "rlif/recipes/render.py": ""},
            "rlif/runs/spec.py: rlif.runs (layer 3) imports rlif.recipes.render (rlif.recipes, layer 5)",
        ),
        (
            {"rlif/eval/cli.py": "import importlib\nm = importlib.import_module('rlif.verl_glue.hooks')\n"},
            "rlif/eval/cli.py: rlif.eval (layer 4) imports rlif.verl_glue.hooks (rlif.verl_glue, layer 4)",
        ),
        (
            {"rlif/data/cli.py": "CMD = ['python', '-m', 'rlif.recipes.cli']\n", "rlif/recipes/cli.py": ""},
            "rlif/data/cli.py: rlif.data (layer 2) imports rlif.recipes.cli",
        ),
        (
            {"rlif/newpkg/__init__.py": ""},
            "rlif/newpkg/__init__.py: rlif.newpkg is in no layer of LAYERS",
        ),
    ],
    ids=["function_level_upward", "importlib_same_layer", "minus_m_string", "unplaced_package"],
)
def test_an_upward_import_is_reported(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    base = {
        "rlif/__init__.py": "",
        "rlif/runs/__init__.py": "",
        "rlif/recipes/__init__.py": "from rlif.runs import spec\n",
        "rlif/runs/spec.py": "",
        "rlif/eval/__init__.py": "",
        "rlif/verl_glue/__init__.py": "",
        "rlif/verl_glue/hooks.py": "",
        "rlif/data/__init__.py": "",
    }
    write_tree(tmp_path, {**base, **files})
    problems = layering_violations(tmp_path)
    assert any(problem.startswith(expected) for problem in problems), problems


def test_a_layered_tree_passes(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "rlif/__init__.py": "",
            "rlif/runs/__init__.py": "",
            "rlif/runs/spec.py": "import rlif\n",
            "rlif/recipes/__init__.py": "def f():\n    from rlif.runs import spec\n",
            "rlif/eval/cli.py": "X = 'rlif.eval.cli'\n",
        },
    )
    assert layering_violations(tmp_path) == []


def test_the_gpu_path_roots_exist() -> None:
    """A renamed entry point would silently drop out of the CPU-support check."""
    modules = python_modules(REPO)
    missing = sorted(m for m in (*GPU_PATH_ROOTS, *job_script_modules(REPO)) if m not in modules)
    assert missing == []
    assert job_script_modules(REPO), "no job script under recipe/ runs an rlif module: is the scan still right?"


def write_tree(root: Path, files: Mapping[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


CLEAN_TREE = {
    "rewards/__init__.py": "from .core import score\n",
    "rewards/core.py": "import math\n\ndef score():\n    return math.pi\n",
    "samplers/__init__.py": "from rewards import core\n",
    "rlif/__init__.py": "",
    "rlif/verl_glue/__init__.py": "",
    "rlif/verl_glue/hooks.py": "from verl.utils import x\nimport rewards\n",
    "rlif/verl_glue/cpu_support.py": "def patch():\n    import verl.plugin\n",
    "rlif/demo.py": "from rlif.verl_glue import cpu_support\n",
    "recipe/job.sh": 'python -m rlif.verl_glue.hooks "$@"\n',
}
"""A tree that keeps every boundary: verl inside the glue, the CPU support imported only off the GPU path."""


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    write_tree(tmp_path, CLEAN_TREE)
    assert boundary_violations(tmp_path) == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"rewards/bad.py": "def f():\n    import torch.nn\n"},
            "rewards/bad.py: imports torch.nn; rewards must import nothing of",
        ),
        (
            {"samplers/bad.py": "from rlif.verl_glue import hooks\n"},
            "samplers/bad.py: imports rlif.verl_glue; samplers must import nothing of",
        ),
        (
            {"samplers/bad.py": "from . import core\nimport importlib\nray = importlib.import_module('ray')\n"},
            "samplers/bad.py: imports ray;",
        ),
        (
            {"rlif/report.py": "def plot():\n    from verl.trainer import main_ppo\n"},
            "rlif/report.py: imports verl.trainer; only rlif.verl_glue may import verl",
        ),
        (
            {"rlif/tool.py": "def f():\n    return __import__('verl')\n"},
            "rlif/tool.py: imports verl; only rlif.verl_glue may import verl",
        ),
        (
            {
                "rlif/verl_glue/hooks.py": "from rlif.util import helper\n",
                "rlif/util.py": "def helper():\n    from .verl_glue.cpu_support import patch\n",
            },
            "rlif/util.py: the GPU path imports the CPU support: "
            "rlif.verl_glue.hooks -> rlif.util -> rlif.verl_glue.cpu_support",
        ),
        (
            {"recipe/job.sh": "python -m rlif.entry\n", "rlif/entry.py": "import rlif.verl_glue.cpu_support\n"},
            "rlif/entry.py: the GPU path imports the CPU support: rlif.entry -> rlif.verl_glue.cpu_support",
        ),
    ],
    ids=["pure_torch_lazy", "pure_rlif", "pure_dynamic_ray", "verl_outside_glue", "dunder_import", "gpu_chain", "job"],
)
def test_a_broken_boundary_is_reported(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    write_tree(tmp_path, {**CLEAN_TREE, **files})
    problems = boundary_violations(tmp_path)
    assert any(problem.startswith(expected) for problem in problems), problems
