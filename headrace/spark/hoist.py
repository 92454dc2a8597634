"""Values evaluated once per stage: the :class:`Hoister`.

An expression reads a field path such as ``"$isbn"`` many times over: every type test and
conversion of an operator (``$substr`` coerces its input to a string in each of six type
branches) used to repeat ``variant_get(doc, '$.isbn')`` and the type dispatch over it, and an
operator's result that another operator uses several times was bound with a one-element
``transform`` (a lambda level, which Spark's analyzer pays for in passes over the whole plan).
One ``$substr`` analysed to 28 KB of plan, and Spark spent seconds per micro-batch analysing it.

A stage compiles its expressions with a hoister instead (``Ctx.hoist``, and :meth:`Hoister.active`
around the compilation). Then:

- a field path of the input document (``"$a.b"``, ``"$$CURRENT.a.b"`` while ``CURRENT`` is not
  rebound, ``"$$ROOT.a.b"``) becomes a reference to a column computed once per row;
- an operator's intermediate value passed through :func:`shared` (one
  that never raises) becomes such a column too, unless it is built inside a lambda body (it
  may read the lambda's variables);
- the MQL type code of any of those columns, and its typed values (its DOUBLE, its STRING...),
  when an operator asks for them, are more columns (:func:`headrace.spark.values.derived`).

:meth:`Hoister.apply` adds the columns to the DataFrame in layers (a column only reads columns of
earlier layers) before the stage's own projection, and the stage drops them after. The optimizer
keeps each layer as its own projection (it does not inline a costly expression used more than
once), so each value is computed once per row, on every row: a path, a type code and a typed
value never raise, and :func:`shared` is only used for values that do
not either. (A general ``let`` is not hoisted: its value may raise on rows where a condition
around it would have skipped it, such as ``floor`` of 1e300 under ANSI.)
"""
from __future__ import annotations

import contextvars
import re
import sys
from contextlib import AbstractContextManager as ContextManager

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from . import values as V
from .ctxvar import bound

__all__ = ["Hoister", "shared", "hoisted_python", "hoistable"]

_PREFIX = "_h"
_REFS = re.compile(r"(?<![\w'])_h\d+(?![\w'])")


#: The active :class:`Hoister`'s ``share`` while a stage compiles, else None.
SHARE: contextvars.ContextVar = contextvars.ContextVar("headrace_share", default=None)
_LAMBDA_CODE: list = []


def _in_lambda_body() -> bool:
    """Whether a PySpark lambda body (``transform``, ``filter``...) is being built on this stack:
    a value there may read the lambda's variables, so it cannot become a column."""
    if not _LAMBDA_CODE:
        from pyspark.sql.functions import builtin

        _LAMBDA_CODE.append(builtin._create_lambda.__code__)
    f = sys._getframe(1)
    while f is not None:
        if f.f_code is _LAMBDA_CODE[0]:
            return True
        f = f.f_back
    return False


def shared(c: Column) -> Column:
    """``c``, computed once per row while a stage's hoister is active (outside lambda bodies);
    else ``c`` itself, repeated where it is used. For an operator's intermediate value that it
    reads several times. ``c`` is then computed on every row, also where a condition around
    it would have skipped it, so it must never raise: built from compiled operand values
    (each total on its own), typed values and ``try_`` arithmetic, not from a raw intermediate
    that the operator only evaluates under a condition (``log(x) / log(base)``)."""
    share = SHARE.get()
    if share is None or V.is_simple(c) or _in_lambda_body():
        return c
    return share(c)



class Hoister:
    """The values one stage computes once per row (see the module docstring)."""

    def __init__(self) -> None:
        self._layers: list[dict[str, Column]] = []
        self._layer_of: dict[str, int] = {}
        self._paths: dict[str, str] = {}
        self._codes: dict[str, str] = {}
        self._derived: dict[tuple[str, str], str] = {}
        self._known: dict[str, int] = {}      # hoisted paths of known type: their type codes
        self.root: Column | None = None     # the stage's doc column (``Env.ctx`` sets it)

    def path(self, path: str) -> Column:
        """A reference to ``path`` of the input document (aggregation path semantics). A path
        of known type (:mod:`.values.facts`) stays :func:`~.values.known`, its typed reads
        columns of their own too (each read once per row, not once per use)."""
        name = self._paths.get(path)
        if name is None:
            value = V.get_path(F.col("doc") if self.root is None else self.root, path)
            name = self._paths[path] = self._place(value)
            if V.is_known(value):
                self._known[name] = V.known_type(value)
        if name in self._known:
            code = self._known[name]

            def read(t: str) -> Column:
                return self._derive(name, f"read:{t}", lambda c: V.variant_reader(c, "$", code)(t))
            return V.known(F.col(name), code, read)
        return self._ref(name)

    def share(self, value: Column) -> Column:
        """A reference to ``value`` (which reads no lambda variable), computed once."""
        return self._ref(self._place(value))

    def active(self) -> ContextManager:
        """While compiling: :func:`shared` values become hoisted columns."""
        return bound(SHARE, self.share)

    @property
    def names(self) -> list[str]:
        """The columns :meth:`apply` adds (to drop after the stage)."""
        return list(self._layer_of)

    def apply(self, df: DataFrame) -> DataFrame:
        """``df`` with the hoisted columns added, layer by layer."""
        for layer in self._layers:
            if layer:
                df = df.withColumns(layer)
        return df

    def _place(self, value: Column) -> str:
        """Name ``value`` in the first layer after every hoisted column it reads."""
        layer = 1 + max((self._layer_of.get(n, -1) for n in _REFS.findall(str(value))), default=-1)
        name = f"{_PREFIX}{len(self._layer_of)}"
        while len(self._layers) <= layer:
            self._layers.append({})
        self._layers[layer][name] = value
        self._layer_of[name] = layer
        return name

    def _ref(self, name: str) -> Column:
        return V.hoisted_ref(F.col(name), lambda: self._code(name),
                             lambda key, build: self._derive(name, key, build))

    def _derive(self, name: str, key: str, build) -> Column:
        d = self._derived.get((name, key))
        if d is None:
            d = self._derived[(name, key)] = self._place(build(F.col(name)))
        return F.col(d)

    def _code(self, name: str) -> Column:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = self._place(V._code_of(F.col(name)))
        return F.col(code)


def hoistable() -> bool:
    """Whether :func:`hoisted_python` can place a column here: a stage's hoister is active and no
    lambda body is being built."""
    return SHARE.get() is not None and not _in_lambda_body()


def hoisted_python(col: Column, op: str, where: str) -> Column:
    """``col``, a Python (pandas) UDF over values that read no lambda variable, as a column the
    stage's hoister computes before its projection: Spark refuses Python UDFs inside the lambdas
    expressions are built with, and a hoisted column is only referenced there. Raises
    ``EXPR_NOT_SUPPORTED_YET`` where there is no hoister (windows, ``$source``, sinks) or while a
    lambda body is built (``$map``/``$filter``/``$reduce``/``$let``); validation refuses those
    places before anything runs (:func:`headrace.mql.expressions.python_operator_path`)."""
    from ..errors import NotSupportedYet
    from ..mql.expressions import PYTHON_OPERATOR_PLACES

    if not hoistable():
        raise NotSupportedYet("EXPR_NOT_SUPPORTED_YET",
                              f"{op} runs in Python: it is supported in {PYTHON_OPERATOR_PLACES}, not inside "
                              "$map/$filter/$reduce/$let or a window yet", path=where or None)
    return SHARE.get()(col)
