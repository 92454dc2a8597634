"""The logical plan: what a validated pipeline does, as a list of operators (pure Python).

``logical_plan(pipeline)`` gives the operators; ``render(plan)`` the text shown by ``explain``
(``headrace explain`` adds the Spark plan from ``headrace.spark``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..spec.model import EmitSpec, MergeIntoSpec, Pipeline


@dataclass(frozen=True)
class Op:
    name: str
    detail: str
    children: tuple["Op", ...] = ()


def _short(v: Any, n: int = 70) -> str:
    s = json.dumps(v, default=str, separators=(",", ":"))
    return s if len(s) <= n else s[: n - 3] + "..."


def _name(v: Any) -> str:
    """A sink's target: its name, or its expression."""
    return v if isinstance(v, str) and not v.startswith("$") else _short(v)


def logical_plan(p: Pipeline) -> list[Op]:
    s = p.source
    if s.documents is not None:
        src = f"documents n={len(s.documents)}" + (
            f" replay(arrival={s.replay.arrival_field}, partitions={list(s.replay.partitions or [])})"
            if s.replay else "")
    else:
        src = f"connection={s.connection_name}" + (f" stream={s.stream}" if s.stream else "")
    ops = [Op("Source", src + f" eventTime={_short(s.time_field) if s.time_field else 'source timestamp'}"
              f" -> {s.ts_field_name}" + (f" partitionIdleTimeout={s.partition_idle_timeout.ms}ms"
                                          if s.partition_idle_timeout else ""))]
    ops += [Op(st.name.lstrip("$").capitalize(), _short(st.arg)) for st in p.before]
    if p.window:
        w = p.window
        size = (f"interval={w.interval.ms}ms" if w.interval else f"gap={w.gap.ms}ms") + \
            (f" hop={w.hop.ms}ms" if w.hop else "") + (f" offset={w.offset_ms}ms" if w.offset_ms else "")
        detail = (f"{w.kind} {size} boundary={w.boundary} allowedLateness={w.allowed_lateness_ms}ms" +
                  (f" idleTimeout={w.idle_timeout.ms}ms" if w.idle_timeout else "") +
                  (f" partitionBy={_short(w.partition_by)}" if w.partition_by is not None else ""))
        inner = tuple(Op(st.name.lstrip("$").capitalize(), _short(st.arg)) for st in w.pipeline)
        ops.append(Op("Window", detail + " (late -> DLQ)", inner))
    ops += [Op(st.name.lstrip("$").capitalize(), _short(st.arg)) for st in p.after]
    if isinstance(p.sink, MergeIntoSpec):
        ops.append(Op("Merge", f"into {p.sink.connection_name}.{_name(p.sink.db)}.{_name(p.sink.coll)} "
                               f"on={list(p.sink.on)} "
                               f"whenMatched={p.sink.when_matched} whenNotMatched={p.sink.when_not_matched}"))
    elif isinstance(p.sink, EmitSpec):
        ops.append(Op("Emit", f"file {p.sink.path}" if p.sink.path else
                      f"{p.sink.connection_name}.{p.sink.db}.{_name(p.sink.coll)}" +
                      ("".join(f" {k}={_short(v)}" for k, v in p.sink.dynamic() if k != "coll") +
                       (f" keyFormat={p.sink.config.key_format} outputFormat={p.sink.config.output_format}"
                        if p.sink.config else ""))))
    else:
        ops.append(Op("Print", "stdout (ephemeral run)"))
    if p.options.dlq:
        d = p.options.dlq
        ops.append(Op("DLQ", f"{d.connection_name}.{d.db}.{d.coll}"))
    return ops


def render(ops: list[Op], indent: int = 0) -> str:
    lines = []
    for i, op in enumerate(ops):
        lines.append("  " * indent + f"{i}. {op.name}: {op.detail}")
        if op.children:
            lines.append(render(list(op.children), indent + 2))
    return "\n".join(lines)
