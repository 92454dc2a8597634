"""``$meta``: stream metadata from ``ctx.meta`` (``stream.source.*``, ``stream.window.start``,
``stream.window.end``); missing when the processor does not provide the name.

Golden cases (``tests/golden/cases/<name>.json``): ``$meta`` hopping_count.
"""
from __future__ import annotations

from typing import Any

from .. import values as V
from ..registry import Compiled, Ctx, expression


@expression("$meta")
def meta(arg: Any, ctx: Ctx) -> Compiled:
    col = ctx.meta.get(arg) if isinstance(arg, str) else None
    return Compiled(col if col is not None else V.MISSING)
