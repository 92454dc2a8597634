"""The pipeline's shape rules as tables: which stages are stateless, which are window stages,
which are allowed only inside a window's ``pipeline``, which are sinks and which are not
supported yet; and :func:`_stage_pair`, the check that a stage is a one-key ``{"$name": ...}``
object.
"""
from __future__ import annotations

from typing import Any

from .checks import _Ctx, _err

STATELESS = ("$validate", "$match", "$project", "$addFields", "$set", "$unset", "$replaceRoot", "$replaceWith",
             "$unwind")
WINDOWS = {"$tumblingWindow": "tumbling", "$hoppingWindow": "hopping", "$sessionWindow": "session"}
WINDOW_ONLY = ("$group", "$sort", "$limit", "$count")
SINKS = ("$merge", "$emit")
NOT_SUPPORTED_YET_STAGES = ("$lookup", "$https", "$setStreamMeta", "$throttle", "$facet", "$bucket", "$bucketAuto",
                            "$graphLookup", "$sample", "$out", "$geoNear", "$densify", "$fill", "$redact",
                            "$sortByCount", "$unionWith", "$changeStream", "$search", "$searchMeta",
                            "$externalFunction", "$cachedLookup", "$documents", "$indexStats", "$collStats",
                            "$setWindowFields", "$skip", "$listSessions", "$currentOp", "$planCacheStats")


def _stage_pair(s: Any, c: _Ctx | None, *path: Any) -> tuple[str, Any]:
    pos = c.pos if c else path[0]
    where = c.path(*path) if c else None
    if not isinstance(s, dict) or len(s) != 1:
        raise _err("STAGE_SHAPE", "a stage must be an object with exactly one key", pos, None, where,
                   expected="an object with exactly one key", found=s)
    (name, arg), = s.items()
    if not isinstance(name, str) or not name.startswith("$"):
        raise _err("STAGE_SHAPE", "a stage name starts with '$'", pos, None, where, expected="a stage name",
                   found=name)
    return name, arg
