"""Docstrings of stages and operators point at golden cases that show them working, and say
which operators have none yet; the cases they name exist and use the operator."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "golden" / "cases"
MARK = "Golden cases (``tests/golden/cases/<name>.json``):"
NONE_YET = "No golden case yet:"


def _doc(path: Path) -> str:
    text = path.read_text()
    return text[3:text.index('"""', 3)]


def _pipeline(name: str) -> str:
    return json.dumps(json.loads((CASES / f"{name}.json").read_text())["pipeline"])


def test_operator_docstrings_name_golden_cases_for_every_operator():
    import headrace.spark.expr  # noqa: F401  (registers the operators)
    import headrace.spark.query  # noqa: F401
    from headrace.spark.registry import EXPRESSIONS, QUERY_OPERATORS

    files = sorted((ROOT / "headrace" / "spark" / "expr").glob("*.py")) + [ROOT / "headrace" / "spark" / "query.py"]
    named: set[str] = set()
    for f in files:
        doc = " ".join(_doc(f).split())
        if MARK in doc:
            body = doc.split(MARK, 1)[1].split(NONE_YET)[0]
            for op, case in re.findall(r"``(\$\w+)`` (\w+)", body):
                assert (CASES / f"{case}.json").exists(), (f.name, op, case)
                assert f'"{op}"' in _pipeline(case), (f.name, op, case)
                named.add(op)
        if NONE_YET in doc:
            named.update(re.findall(r"``(\$\w+)``", doc.split(NONE_YET, 1)[1]))
    registered = set(EXPRESSIONS) | set(QUERY_OPERATORS)
    assert registered - named == set(), "operators whose docstrings name no golden case (nor say none yet)"


def test_stage_docstrings_point_at_existing_golden_cases():
    for f in sorted((ROOT / "headrace" / "spark" / "stages").glob("*.py")):
        if f.name in ("__init__.py", "base.py"):
            continue
        refs = re.findall(r"``(?:tests/golden/cases/)?([\w*]+\.json)``", _doc(f))
        assert refs, f"{f.name} names no golden case"
        for ref in refs:
            assert list(CASES.glob(ref)), (f.name, ref)


def test_golden_case_count():
    """Not a target: the count printed by ``pytest -s`` for the report."""
    n = len(list(CASES.glob("*.json")))
    print(f"{n} golden cases", file=sys.stderr)
    assert n >= 100
