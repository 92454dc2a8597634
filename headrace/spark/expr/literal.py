"""``$literal``: the argument as a constant, unevaluated (``{$literal: "$a"}`` is the string).

Golden cases (``tests/golden/cases/<name>.json``): ``$literal`` project_literal.
"""
from __future__ import annotations

from typing import Any

from .. import values as V
from ..registry import Compiled, Ctx, expression


@expression("$literal")
def literal(arg: Any, ctx: Ctx) -> Compiled:
    return Compiled(V.lit_value(arg))
