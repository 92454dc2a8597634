"""Window stage parsing: ``$tumblingWindow``, ``$hoppingWindow`` and ``$sessionWindow`` with
their durations, ``offset`` (``{offsetFromUtc, unit}``), boundary, lateness and idle timeout, and
the stages of the window's ``pipeline`` (stateless ones and ``$group``, ``$sort``, ``$limit``,
``$count``).
"""
from __future__ import annotations

from typing import Any

from ..errors import NotSupportedYet
from . import defaults
from .checks import _Ctx, _expression, _keys, _obj, _str, parse_duration
from .model import UNIT_MS, Stage, WindowSpec
from .shape import NOT_SUPPORTED_YET_STAGES, SINKS, STATELESS, WINDOW_ONLY, WINDOWS, _stage_pair
from .stages import spec_of
from .stateless import parse_stateless

OFFSET_FORM = '{"offsetFromUtc": <int>, "unit": "ms" | "second" | "minute" | "hour" | "day"}'


def parse_offset(v: Any, c: _Ctx, *path: Any) -> int:
    """A window ``offset`` as Atlas Stream Processing writes it, in milliseconds:
    ``{"offsetFromUtc": <int>, "unit": <unit>}`` (negative offsets allowed). The duration form
    ``{size, unit}`` is refused with ``WINDOW_OFFSET_FORM``, showing the right form."""
    d = _obj(v, c, *path, what=OFFSET_FORM)
    if "size" in d and "offsetFromUtc" not in d:
        raise c.err("WINDOW_OFFSET_FORM", "a window offset is written {offsetFromUtc, unit}, not {size, unit}",
                    *path, expected=OFFSET_FORM, found=d)
    _keys(d, ("offsetFromUtc", "unit"), c, *path)
    if "offsetFromUtc" not in d or "unit" not in d:
        missing = "offsetFromUtc" if "offsetFromUtc" not in d else "unit"
        raise c.err("MISSING_OPTION", f"offset is missing '{missing}'", *path, missing, expected=OFFSET_FORM, found=d)
    size, unit = d["offsetFromUtc"], d["unit"]
    if isinstance(size, float) and size.is_integer():
        size = int(size)
    if not isinstance(size, int) or isinstance(size, bool):
        raise c.err("TYPE_MISMATCH", "offsetFromUtc must be an integer", *path, "offsetFromUtc",
                    expected="an integer", found=size)
    if unit not in UNIT_MS:
        raise c.err("BAD_VALUE", "unknown offset unit", *path, "unit",
                    expected="one of " + ", ".join(map(repr, UNIT_MS)), found=unit)
    return size * UNIT_MS[unit]


def parse_window(name: str, arg: Any, c: _Ctx) -> WindowSpec:
    kind = WINDOWS[name]
    d = _obj(arg, c)
    common = ("pipeline", "offset", "boundary", "allowedLateness", "idleTimeout")
    allowed = {"tumbling": ("interval",) + common, "hopping": ("interval", "hopSize") + common,
               "session": ("partitionBy", "gap") + common}[kind]
    _keys(d, allowed, c)
    required = {"tumbling": ("interval", "pipeline"), "hopping": ("interval", "hopSize", "pipeline"),
                "session": ("partitionBy", "gap", "pipeline")}[kind]
    for r in required:
        if r not in d:
            raise c.err("MISSING_OPTION", f"needs '{r}'", r, expected=f"'{r}'", found=sorted(d))
    interval = parse_duration(d["interval"], c, "interval") if "interval" in d else None
    hop = parse_duration(d["hopSize"], c, "hopSize") if "hopSize" in d else None
    if hop and interval and hop.ms > interval.ms:
        raise c.err("WINDOW_HOP", "hopSize must not be larger than interval", "hopSize",
                    expected=f"at most {interval.size} {interval.unit}", found=d["hopSize"])
    gap = parse_duration(d["gap"], c, "gap") if "gap" in d else None
    if "partitionBy" in d:
        _expression(d["partitionBy"], c, "partitionBy")
    offset = parse_offset(d["offset"], c, "offset") if "offset" in d else 0
    boundary = _str(d["boundary"], c, "boundary", allowed=("eventTime", "processingTime")) \
        if "boundary" in d else defaults.BOUNDARY
    if boundary == "processingTime":
        for opt in ("allowedLateness", "idleTimeout"):
            if opt in d:
                raise c.err("WINDOW_PROCESSING_TIME_OPTION",
                            f"'{opt}' is not allowed with boundary 'processingTime'", opt,
                            expected="no " + opt + " for processing-time windows", found=d[opt])
    lateness = parse_duration(d["allowedLateness"], c, "allowedLateness", allow_zero=True).ms \
        if "allowedLateness" in d else (0 if boundary == "processingTime" else defaults.ALLOWED_LATENESS_MS)
    idle = parse_duration(d["idleTimeout"], c, "idleTimeout") if "idleTimeout" in d else None
    inner = d["pipeline"]
    if not isinstance(inner, list) or not inner:
        raise c.err("TYPE_MISMATCH", "must be a non-empty array of stages", "pipeline", expected="an array of stages",
                    found=inner)
    stages = tuple(_inner_stage(i, s, c) for i, s in enumerate(inner))
    return WindowSpec(kind, c.pos, interval, hop, gap, d.get("partitionBy"), offset, boundary, lateness, idle,
                      stages)


def _inner_stage(i: int, s: Any, c: _Ctx) -> Stage:
    name, arg = _stage_pair(s, c, "pipeline", i)
    ic = _Ctx(c.pos, c.stage, c.path("pipeline", i, name))
    if name in STATELESS:
        st = parse_stateless(name, arg, ic)
        return Stage(name, i, st.arg, st.spec)
    if name in WINDOW_ONLY:
        from ..mql import accumulators as acc

        validator = {"$group": acc.validate_group, "$sort": acc.validate_sort, "$limit": acc.validate_limit,
                     "$count": acc.validate_count}[name]
        ic.wrap(validator, arg, ic.path())
        return Stage(name, i, arg, spec_of(name, arg))
    if name in NOT_SUPPORTED_YET_STAGES:
        raise NotSupportedYet("STAGE_NOT_SUPPORTED_YET", f"stage {name} is not supported yet",
                              position=c.pos, stage=c.stage, path=c.path("pipeline", i, name))
    if name == "$source" or name in WINDOWS or name in SINKS:
        raise c.err("STAGE_ORDER", f"{name} is not allowed inside a window's pipeline", "pipeline", i,
                    expected="$group, $sort, $limit, $count or a stateless stage", found=name)
    raise c.err("STAGE_UNKNOWN", f"unknown stage {name}", "pipeline", i, expected="a stage name", found=name)
