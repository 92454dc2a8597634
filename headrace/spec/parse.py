"""Parse a pipeline document into :class:`~headrace.spec.model.Pipeline`, validating everything.

Shape rules (spec section 1): ``$source`` first and once; then stateless stages; at most one
window stage; one sink last (``$merge`` or ``$emit``), optional in ephemeral runs. ``$group``,
``$sort``, ``$limit`` and ``$count`` only inside a window's ``pipeline``.

The parts live next to this module: :mod:`.checks` (parse context and shared checks, durations),
:mod:`.shape` (stage-name tables), :mod:`.source` (``$source``), :mod:`.stateless`,
:mod:`.windows` and :mod:`.sinks` (``$merge``, ``$emit``). This module parses the options and
the whole pipeline, and re-exports the parts' public names.
"""
from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

from .. import ejson
from ..errors import NotSupportedYet, PipelineError
from . import defaults
from .checks import _bool, _Ctx, _err, _keys, _obj, _str, parse_duration
from .model import DlqSpec, Options, Pipeline, SourceSpec, Stage, WindowSpec
from .shape import NOT_SUPPORTED_YET_STAGES, SINKS, STATELESS, WINDOW_ONLY, WINDOWS, _stage_pair
from .sinks import OUTPUT_FORMATS, parse_emit, parse_merge
from .source import (DEDUP_FORM, KEY_FORMATS, SOURCE_KEYS, SOURCE_NOT_SUPPORTED_YET, SOURCE_OTHER_CONFIG,
                     SOURCE_STRING_CONFIG, parse_dedup, parse_source)
from .stateless import parse_stateless
from .windows import OFFSET_FORM, parse_offset, parse_window

__all__ = ["STATELESS", "WINDOWS", "WINDOW_ONLY", "SINKS", "NOT_SUPPORTED_YET_STAGES", "SOURCE_KEYS", "KEY_FORMATS",
           "SOURCE_STRING_CONFIG", "SOURCE_OTHER_CONFIG", "SOURCE_NOT_SUPPORTED_YET", "parse_duration",
           "OFFSET_FORM", "parse_offset", "parse_source", "DEDUP_FORM", "parse_dedup", "parse_stateless",
           "parse_window", "parse_merge", "OUTPUT_FORMATS", "parse_emit", "parse_options", "EJSON_WRAPPERS",
           "typed_constants", "parse_pipeline", "load_pipeline_file"]


def parse_options(opts: Any) -> Options:
    c = _Ctx(None, None, "options")  # type: ignore[arg-type]
    d = _obj(opts, c)
    _keys(d, ("dlq", "streamMeta", "guarantee"), c)
    dlq = None
    if "dlq" in d:
        x = _obj(d["dlq"], c, "dlq")
        _keys(x, ("connectionName", "db", "coll"), c, "dlq")
        for k in ("connectionName", "db", "coll"):
            if k not in x:
                raise c.err("MISSING_OPTION", f"dlq needs '{k}'", "dlq", k, expected="a string", found=x)
        dlq = DlqSpec(*(_str(x[k], c, "dlq", k) for k in ("connectionName", "db", "coll")))
    sm = _bool(d["streamMeta"], c, "streamMeta") if "streamMeta" in d else defaults.STREAM_META
    g = _str(d["guarantee"], c, "guarantee", allowed=("exactlyOnce", "atLeastOnce")) if "guarantee" in d \
        else defaults.GUARANTEE
    return Options(dlq, sm, g)


#: single-key Extended JSON wrappers that stand for one typed BSON value
EJSON_WRAPPERS = ("$date", "$oid", "$numberLong", "$numberInt", "$numberDouble", "$numberDecimal", "$minKey",
                  "$maxKey", "$binary", "$timestamp")


def typed_constants(v: Any, c: _Ctx, *path: Any) -> Any:
    """``v`` with every Extended JSON constant (``{"$date": ...}``, ``{"$numberDecimal": "1.5"}``,
    ``{"$numberLong": "5"}``, ``{"$oid": ...}`` ...) replaced by its typed value of the
    :mod:`headrace.ejson` value model, so expressions, queries and stage options see typed
    literals (the spec reads pipelines as Extended JSON; mongosh's ``NumberDecimal("1.5")`` is
    ``{"$numberDecimal": "1.5"}``). A malformed wrapper is ``BAD_VALUE`` at its path."""
    if isinstance(v, list):
        return [typed_constants(x, c, *path, i) for i, x in enumerate(v)]
    if not isinstance(v, dict):
        return v
    if (len(v) == 1 and next(iter(v)) in EJSON_WRAPPERS) or (len(v) == 2 and set(v) == {"$binary", "$type"}):
        try:
            out = ejson.from_plain(v)
        except (ejson.EJSONError, ValueError, TypeError, decimal.InvalidOperation) as exc:
            key = next(iter(v))
            raise c.err("BAD_VALUE", f"invalid Extended JSON {key}: {exc}", *path, key,
                        expected=f"a valid {key} value", found=v[key]) from None
        if not isinstance(out, dict):
            return out
    return {k: typed_constants(x, c, *path, k) for k, x in v.items()}


def _refuse_python_operators(arg: Any, c: _Ctx) -> None:
    """A stage outside ``PYTHON_OPERATOR_STAGES`` holding an operator that runs in Python."""
    from ..mql.expressions import PYTHON_OPERATOR_PLACES, python_operator_path

    path = python_operator_path(arg)
    if path:
        op = path.rsplit(".", 1)[-1]
        raise NotSupportedYet("EXPR_NOT_SUPPORTED_YET",
                              f"{op} runs in Python: it is supported in {PYTHON_OPERATOR_PLACES}, not in this stage yet",
                              position=c.pos, stage=c.stage, path=f"{c.stage}.{path}",
                              expected="an operator that runs in Spark here", found=op)


def parse_pipeline(obj: Any) -> Pipeline:
    """Validate a whole pipeline (and options) before anything runs."""
    from ..mql.expressions import PYTHON_OPERATOR_STAGES

    options: Any = {}
    stages = obj
    if isinstance(obj, dict):
        extra = set(obj) - {"pipeline", "options"}
        if extra or "pipeline" not in obj:
            raise _err("PIPELINE_SHAPE", "expected {\"pipeline\": [...], \"options\": {...}}", None, None,
                       ", ".join(sorted(extra)) or None, expected="keys 'pipeline' and optional 'options'",
                       found=sorted(obj))
        stages, options = obj["pipeline"], obj.get("options", {})
    if not isinstance(stages, list) or not stages:
        raise _err("PIPELINE_SHAPE", "a pipeline is a non-empty array of stages", None, None, None,
                   expected="an array of stages", found=stages)
    opts = parse_options(options)
    source: SourceSpec | None = None
    before: list[Stage] = []
    after: list[Stage] = []
    window: WindowSpec | None = None
    sink = None
    for pos, s in enumerate(stages):
        name, arg = _stage_pair(s, None, pos)
        c = _Ctx(pos, name)
        arg = typed_constants(arg, c)
        if sink is not None:
            raise c.err("STAGE_ORDER", f"{name} comes after the sink; the sink must be the last stage",
                        expected="no stage after $merge/$emit", found=name)
        if name not in PYTHON_OPERATOR_STAGES:
            _refuse_python_operators(arg, c)
        if name == "$source":
            if pos != 0:
                raise c.err("STAGE_ORDER", "$source must be the first stage and appear once",
                            expected="$source at position 0", found=pos)
            source = parse_source(arg, c)
            continue
        if pos == 0:
            raise c.err("STAGE_ORDER", "a pipeline starts with $source", expected="$source", found=name)
        if name in STATELESS:
            (after if window else before).append(parse_stateless(name, arg, c))
        elif name in WINDOWS:
            if window is not None:
                raise c.err("STAGE_ORDER", "at most one window stage per pipeline",
                            expected="one window stage", found=name)
            window = parse_window(name, arg, c)
        elif name == "$merge":
            sink = parse_merge(arg, c)
        elif name == "$emit":
            sink = parse_emit(arg, c)
        elif name in WINDOW_ONLY:
            raise c.err("STAGE_ORDER", f"{name} is allowed only inside a window's pipeline",
                        expected="a window stage holding " + name, found=name)
        elif name in NOT_SUPPORTED_YET_STAGES:
            raise NotSupportedYet("STAGE_NOT_SUPPORTED_YET", f"stage {name} is not supported yet",
                                  position=pos, stage=name)
        else:
            raise c.err("STAGE_UNKNOWN", f"unknown stage {name}", expected="a MongoDB stream processing stage",
                        found=name)
    assert source is not None
    if window and window.boundary == "processingTime" and source.replay is None and source.documents is not None:
        pass
    return Pipeline(source, tuple(before), window, tuple(after), sink, opts, tuple(stages))


def load_pipeline_file(path: "str | Path") -> Pipeline:
    """Read a pipeline file (JSON array or ``{"pipeline", "options"}``) and parse it."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise PipelineError("PIPELINE_FILE", f"cannot read pipeline file {str(p)!r}: {exc.strerror}")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PipelineError("PIPELINE_JSON", f"{p}: not valid JSON at line {exc.lineno} column {exc.colno}: "
                            f"{exc.msg}") from exc
    return parse_pipeline(obj)
