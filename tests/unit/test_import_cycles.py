"""No import cycles anywhere in the repository.

The graph is static: every ``import`` / ``from ... import`` statement in every file, at module
level or inside a function, under ``if TYPE_CHECKING:`` or ``try:`` alike, is an edge. A package's
``__init__`` importing its own submodules is an edge like any other, so a submodule that imports
a name back from its package's ``__init__`` closes a cycle. In ``headrace/`` modules are named by
their package path; in the script folders (``benchmarks/``, ``scripts/``, ``tests/``) a bare
``import x`` names the sibling file ``x.py`` when there is one. Imports of anything outside the
repository are not edges.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("headrace",)
SCRIPT_DIRS = ("benchmarks", "scripts", "tests")


def _modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """``name -> (file, is_package)`` for package modules and script-folder files."""
    mods: dict[str, tuple[Path, bool]] = {}
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            mods[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    for d in SCRIPT_DIRS:
        for f in sorted((root / d).rglob("*.py")):
            # hidden folders hold environments and work files (benchmarks/.venv-peers), not ours
            if f.parent.joinpath("__init__.py").exists() or any(
                    p.startswith(".") for p in f.relative_to(root).parts[:-1]):
                continue
            mods[f"{f.parent.relative_to(root).as_posix()}/{f.stem}"] = (f, False)
    return mods


def _resolve(name: str, is_pkg: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the repository modules it imports (statically, function-local imports included)."""
    mods = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}

    def target(src: str, name: str) -> str | None:
        if name in mods:
            return name
        if "/" in src:  # a script: a bare name is a sibling file
            sib = f"{src.rsplit('/', 1)[0]}/{name.split('.')[0]}"
            if sib in mods:
                return sib
        return None

    for m, (f, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            found: list[str | None] = []
            if isinstance(node, ast.Import):
                found = [target(m, a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(m, is_pkg, node.level, node.module) if "/" not in m or node.level == 0 else ""
                for a in node.names:
                    found.append(target(m, f"{base}.{a.name}") or target(m, base))
            graph[m].update(t for t in found if t and t != m)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_repository_has_no_import_cycles():
    graph = import_graph()
    assert "headrace.mql.match" in graph and "benchmarks/run" in graph
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(
        "  " + ", ".join(c) + "\n" + "\n".join(f"    {m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found)


def test_the_check_finds_cycles(tmp_path):
    """Function-local imports, imports back from a package's __init__ and script siblings."""
    pkg = tmp_path / "headrace" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "headrace" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from . import helper\n")  # `helper` defined in sub/__init__
    (pkg / "b.py").write_text("def f():\n    from .c import x\n")
    (pkg / "c.py").write_text("from .b import f\n")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "one.py").write_text("def main():\n    import two\n")
    (tmp_path / "benchmarks" / "two.py").write_text("import one\nimport json\n")
    found = cycles(import_graph(tmp_path))
    assert ["headrace.sub", "headrace.sub.a"] in found
    assert ["headrace.sub.b", "headrace.sub.c"] in found
    assert ["benchmarks/one", "benchmarks/two"] in found
    assert len(found) == 3


def test_every_module_imports_without_a_spark_session():
    """Importing any module (the engine, the stage compilers, ...) needs no running SparkContext:
    Spark columns are built when a pipeline is compiled, not at import."""
    import subprocess
    import sys

    code = ("import importlib, pkgutil, headrace\n"
            "bad = []\n"
            "for m in pkgutil.walk_packages(headrace.__path__, 'headrace.'):\n"
            "    try:\n"
            "        importlib.import_module(m.name)\n"
            "    except Exception as exc:\n"
            "        bad.append(f'{m.name}: {exc!r}')\n"
            "print('\\n'.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", out.stdout
