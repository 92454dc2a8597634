"""The parse context and the small checks every stage parser uses.

:class:`_Ctx` (stage position, stage name, path prefix) builds :class:`~headrace.errors.PipelineError`
values that name where a problem is; the helpers check types (objects, non-empty strings, booleans),
option keys (unknown and not-yet-supported ones), durations ``{size, unit}``, and expressions and
queries (through :mod:`headrace.mql`). A leaf of :mod:`headrace.spec.parse`.
"""
from __future__ import annotations

from typing import Any, Callable

from ..errors import NotSupportedYet, PipelineError
from .model import UNIT_MS, Duration


def _err(code: str, msg: str, pos: int | None, stage: str | None, path: str | None,
         expected: str | None = None, found: Any = ...) -> PipelineError:
    return PipelineError(code, msg, position=pos, stage=stage, path=path, expected=expected, found=found)


class _Ctx:
    """Where we are while parsing: stage position, stage name, path prefix."""

    def __init__(self, pos: int, stage: str, prefix: str = ""):
        self.pos, self.stage, self.prefix = pos, stage, prefix

    def path(self, *parts: Any) -> str:
        items = [self.prefix] if self.prefix else []
        items += [str(p) for p in parts if p != ""]
        return ".".join(items)

    def err(self, code: str, msg: str, *parts: Any, expected: str | None = None, found: Any = ...) -> PipelineError:
        return _err(code, msg, self.pos, self.stage, self.path(*parts) or None, expected, found)

    def wrap(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a validator from ``headrace.mql``, placing its error at this stage."""
        try:
            return fn(*args)
        except PipelineError as e:
            raise e.at(self.pos, self.stage)

    def sub(self, key: str) -> "_Ctx":
        return _Ctx(self.pos, self.stage, self.path(key))


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "bool", int: "int", float: "double",
            type(None): "null"}.get(type(v), type(v).__name__)


def _obj(v: Any, c: _Ctx, *path: Any, what: str = "an object") -> dict:
    if not isinstance(v, dict):
        raise c.err("TYPE_MISMATCH", f"must be {what}", *path, expected=what, found=v)
    return v


def _keys(d: dict, allowed: tuple[str, ...], c: _Ctx, *path: Any, not_yet: tuple[str, ...] = ()) -> None:
    for k in d:
        if k in not_yet:
            raise NotSupportedYet("OPTION_NOT_SUPPORTED_YET", f"option '{k}' is not supported yet",
                                  position=c.pos, stage=c.stage, path=c.path(*path, k))
        if k not in allowed:
            raise c.err("UNKNOWN_OPTION", f"unknown option '{k}'", *path, k,
                        expected="one of " + ", ".join(allowed), found=k)


def _str(v: Any, c: _Ctx, *path: Any, allowed: tuple[str, ...] | None = None) -> str:
    if not isinstance(v, str) or not v:
        raise c.err("TYPE_MISMATCH", "must be a non-empty string", *path, expected="a non-empty string", found=v)
    if allowed and v not in allowed:
        raise c.err("BAD_VALUE", "value not allowed", *path, expected="one of " + ", ".join(map(repr, allowed)),
                    found=v)
    return v


def _bool(v: Any, c: _Ctx, *path: Any) -> bool:
    if not isinstance(v, bool):
        raise c.err("TYPE_MISMATCH", "must be a boolean", *path, expected="true or false", found=v)
    return v


def parse_duration(v: Any, c: _Ctx, *path: Any, allow_zero: bool = False) -> Duration:
    """``{"size": <int>, "unit": "ms"|"second"|"minute"|"hour"|"day"}``."""
    d = _obj(v, c, *path, what='a duration {"size": <int>, "unit": <unit>}')
    _keys(d, ("size", "unit"), c, *path)
    if "size" not in d or "unit" not in d:
        missing = "size" if "size" not in d else "unit"
        raise c.err("MISSING_OPTION", f"duration is missing '{missing}'", *path, missing,
                    expected='{"size": <int>, "unit": <unit>}', found=d)
    size, unit = d["size"], d["unit"]
    if isinstance(size, float) and size.is_integer():
        size = int(size)
    if not isinstance(size, int) or isinstance(size, bool):
        raise c.err("TYPE_MISMATCH", "duration size must be an integer", *path, "size", expected="an integer",
                    found=size)
    if size < 0 or (size == 0 and not allow_zero):
        raise c.err("BAD_VALUE", "duration size out of range", *path, "size",
                    expected="an integer >= 0" if allow_zero else "an integer > 0", found=size)
    if unit not in UNIT_MS:
        raise c.err("BAD_VALUE", "unknown duration unit", *path, "unit",
                    expected="one of " + ", ".join(map(repr, UNIT_MS)), found=unit)
    return Duration(size, unit)


def _expression(v: Any, c: _Ctx, *path: Any) -> None:
    from ..mql.expressions import validate_expression

    c.wrap(validate_expression, v, c.path(*path))


def _query(v: Any, c: _Ctx, *path: Any) -> None:
    from ..mql.query import validate_query

    _obj(v, c, *path, what="a query document")
    c.wrap(validate_query, v, c.path(*path))
