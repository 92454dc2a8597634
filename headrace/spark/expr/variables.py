"""``$let``: ``{vars: {name: expr}, in: expr}``; the variables are evaluated once against the
enclosing scope and visible as ``$$name`` in ``in``.

Golden cases (``tests/golden/cases/<name>.json``): ``$let`` project_let.
"""
from __future__ import annotations

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import compile_child


@expression("$let")
def let(arg: dict, ctx: Ctx) -> Compiled:
    names = list(arg["vars"])
    compiled = [compile_child(arg["vars"][n], ctx, "$let", "vars", n) for n in names]
    if not names:
        return compile_child(arg["in"], ctx, "$let", "in")
    var_err = first_error(*[c.error for c in compiled])

    def body(*xs):
        inner = ctx.with_vars(**{n: Compiled(x) for n, x in zip(names, xs)})
        return compile_child(arg["in"], inner, "$let", "in")

    # bind the variables once: the body may use them many times
    probe = body(*[c.value for c in compiled])
    if probe.error is None:
        return Compiled(V.let_many([c.value for c in compiled], lambda *xs: body(*xs).value), var_err)
    import pyspark.sql.functions as F

    both = V.let_many([c.value for c in compiled],
                      lambda *xs: F.struct(body(*xs).value.alias("v"), body(*xs).error.alias("e")))
    return Compiled(both["v"], first_error(var_err, both["e"]))
