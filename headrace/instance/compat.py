"""Can a changed pipeline resume from the saved checkpoint? (pure Python, no Spark)

``modify(pipeline, resumeFromCheckpoint=True)`` is refused with every reason the saved state
cannot follow: the source (connection, stream, inline documents, replay, ``timeField``,
source config) changed; ``$source.dedup``'s ``idField`` or ``horizon`` changed (adding or
removing ``dedup`` is allowed: it starts from an empty catalog, or drops it); a window was added or removed; its kind, interval, hop, gap, offset,
boundary, allowed lateness or ``partitionBy`` changed; its ``$group`` key or accumulators
changed. Stateless stages (before and after the window, and after ``$group`` inside it), the
sink and the DLQ may change freely.
"""
from __future__ import annotations

from ..errors import HeadraceError
from ..spec.model import Pipeline, Stage


class ModifyRefused(HeadraceError):
    """``modify`` with ``resumeFromCheckpoint: true`` and a change the state cannot follow."""

    code = "MODIFY_INCOMPATIBLE"

    def __init__(self, reasons: list[dict]):
        self.reasons = reasons
        super().__init__("the saved state cannot follow this change: " + "; ".join(r["reason"] for r in reasons))

    def to_dict(self) -> dict:
        return {"code": self.code, "message": str(self), "reasons": self.reasons}


_SOURCE = (("connection_name", "connectionName"), ("stream", "stream"), ("documents", "documents"),
           ("replay", "replay"), ("time_field", "timeField"), ("config", "config"))
_WINDOW = (("kind", "window kind"), ("interval", "interval"), ("hop", "hopSize"), ("gap", "gap"),
           ("offset_ms", "offset"), ("boundary", "boundary"), ("allowed_lateness_ms", "allowedLateness"),
           ("partition_by", "partitionBy"))


def _group(stages: tuple[Stage, ...]) -> dict | None:
    for st in stages:
        if st.name == "$group":
            return st.arg if isinstance(st.arg, dict) else {"_": st.arg}
    return None


def incompatibilities(old: Pipeline, new: Pipeline) -> list[dict]:
    """Every reason ``new`` cannot resume from ``old``'s checkpoint (empty: it can)."""
    out: list[dict] = []

    def why(code: str, field: str, reason: str) -> None:
        out.append({"code": code, "field": field, "reason": reason})

    for attr, label in _SOURCE:
        if getattr(old.source, attr) != getattr(new.source, attr):
            why("SOURCE_CHANGED", f"$source.{label}", f"source changed: $source.{label} differs")
    od, nd = old.source.dedup, new.source.dedup
    if od is not None and nd is not None:
        if od.id_field != nd.id_field:
            why("DEDUP_CHANGED", "$source.dedup.idField", "de-duplication id changed: the catalog holds the old ids")
        if od.horizon.ms != nd.horizon.ms:
            why("DEDUP_CHANGED", "$source.dedup.horizon", "de-duplication horizon changed: the catalog's time "
                                                          "buckets follow the old one")
    ow, nw = old.window, new.window
    if (ow is None) != (nw is None):
        why("WINDOW_CHANGED", "window", "window added" if ow is None else "window removed")
        return out
    if ow is None or nw is None:
        return out
    stage = {"tumbling": "$tumblingWindow", "hopping": "$hoppingWindow", "session": "$sessionWindow"}
    where = stage.get(nw.kind, "window")
    for attr, label in _WINDOW:
        a, b = getattr(ow, attr), getattr(nw, attr)
        if a != b:
            if attr == "kind":
                why("WINDOW_CHANGED", "window", f"window kind changed: {stage.get(a, a)} to {stage.get(b, b)}")
                return out
            code = "PARTITION_BY_CHANGED" if attr == "partition_by" else "WINDOW_CHANGED"
            why(code, f"{where}.{label}", f"window {label} changed")
    og, ng = _group(ow.pipeline), _group(nw.pipeline)
    if (og or {}).get("_id") != (ng or {}).get("_id"):
        why("GROUP_KEY_CHANGED", f"{where}.pipeline.$group._id", "group key changed")
    oacc = {k: v for k, v in (og or {}).items() if k != "_id"}
    nacc = {k: v for k, v in (ng or {}).items() if k != "_id"}
    if oacc != nacc:
        why("ACCUMULATORS_CHANGED", f"{where}.pipeline.$group", "accumulators changed: " +
            ", ".join(sorted(k for k in set(oacc) | set(nacc) if oacc.get(k) != nacc.get(k))))
    return out


def check_resume(old: Pipeline, new: Pipeline) -> None:
    reasons = incompatibilities(old, new)
    if reasons:
        raise ModifyRefused(reasons)
