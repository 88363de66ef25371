"""The package's import graph reads top-down: no circle, no import of a higher layer, no reach
into another package's private names.

Layers, lowest first (a module may import its own layer's packages and any lower layer):

0. ``recmeta`` itself, ``recmeta.files`` (atomic writes), ``recmeta.analyses`` (the analysis
   cache), ``recmeta.arrays`` (sort-based set operations), ``recmeta.data``: datasets, splits,
   popularity, description;
1. ``recmeta.metrics``: the metric engine and the measure registry;
2. ``recmeta.recommenders``, ``recmeta.sampled``, ``recmeta.protocols``, ``recmeta.metaeval``;
3. ``recmeta.ledger``: claims, rules, the store;
4. ``recmeta.book``: chapter execution, profiles, cost plans;
5. ``recmeta.papers``, ``recmeta.compare``: the five studies and the practical API;
6. ``recmeta.cli``: the command line, and ``recmeta.__main__`` (``python -m recmeta``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "recmeta"

assert (ROOT / "__init__.py").exists(), f"the package is not at {ROOT}"

LAYERS: dict[str, int] = {
    "recmeta": 0,
    "files": 0,
    "analyses": 0,
    "arrays": 0,
    "data": 0,
    "metrics": 1,
    "recommenders": 2,
    "sampled": 2,
    "protocols": 2,
    "metaeval": 2,
    "ledger": 3,
    "book": 4,
    "papers": 5,
    "compare": 5,
    "cli": 6,
    "__main__": 6,
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, list[str], int, bool]]:
    """(imported module, names, line, at module top) of every recmeta import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    top = set(map(id, tree.body))
    typing_only = {  # imports under ``if TYPE_CHECKING:`` are for annotations, never run
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            name, names = node.names[0].name, []
        else:
            continue
        if name == "recmeta" or name.startswith("recmeta."):
            found.append((name, names, node.lineno, id(node) in top))
    return found


def _layer_key(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "recmeta"


def _graph() -> dict[str, set[str]]:
    """Module -> the recmeta modules it imports (``from pkg import sub`` counts as ``pkg.sub``)."""
    modules = {_module(p) for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for p in ROOT.rglob("*.py"):
        for name, names, _, _ in _imports(p):
            targets = {f"{name}.{n}" for n in names if f"{name}.{n}" in modules} or {name}
            graph[_module(p)] |= targets
    return graph


def test_no_import_of_a_higher_layer():
    bad = []
    for p in ROOT.rglob("*.py"):
        here = _layer_key(_module(p))
        for name, _, line, _ in _imports(p):
            there = _layer_key(name)
            if there in LAYERS and LAYERS.get(here, 0) < LAYERS[there]:
                bad.append(f"{p.relative_to(ROOT.parent)}:{line} ({here}) imports {name} ({there})")
    assert not bad, "imports that run up the layers:\n" + "\n".join(bad)


def test_every_package_has_a_layer():
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    modules = {
        p.stem for p in ROOT.glob("*.py") if p.name != "__init__.py" and not p.stem.startswith("_")
    }
    missing = sorted((packages | modules) - set(LAYERS))
    assert not missing, f"no layer for {missing}: add them to LAYERS (and the docstring)"


def test_no_import_circle():
    graph = _graph()
    seen: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node: str) -> None:
        seen[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt == node or nxt.startswith(node + "."):
                continue  # a package importing its own submodules
            if seen.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in seen:
                visit(nxt)
        stack.pop()
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    assert not cycles, "import circles:\n" + "\n".join(cycles)


def test_no_reach_into_another_package_private_names():
    bad = []
    for p in ROOT.rglob("*.py"):
        here = _module(p)
        here_pkg = ".".join(here.split(".")[:2])
        for name, names, line, _ in _imports(p):
            there_pkg = ".".join(name.split(".")[:2])
            if there_pkg == here_pkg:
                continue
            private_module = any(
                part.startswith("_") and part != "__init__" for part in name.split(".")
            )
            private_names = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private_module or private_names:
                bad.append(
                    f"{p.relative_to(ROOT.parent)}:{line} imports {name} {private_names or ''}"
                )
    assert not bad, "reaches into another package's private names:\n" + "\n".join(bad)


@pytest.mark.parametrize("limit", [600])
def test_no_module_over_the_limit(limit):
    exempt = {
        "recmeta/metrics/_kernel.py"
    }  # the compiled kernel: one numba pass, see its docstring
    long = [
        f"{p.relative_to(ROOT.parent)}: {n} lines"
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit
        and str(p.relative_to(ROOT.parent)) not in exempt
    ]
    assert not long, f"modules over {limit} lines:\n" + "\n".join(long)
