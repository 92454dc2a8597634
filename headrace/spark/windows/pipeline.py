"""A closing window's inner pipeline, then the stateless stages after the window."""
from __future__ import annotations

from pyspark.sql import DataFrame

from ...spec.model import WindowSpec
from ..registry import WINDOW_STAGES
from ..stages import apply_stages
from ..window_stages import apply_sort, known_after, window_env  # (also registers the window-only stages)


def run_window_pipeline(df: DataFrame, w: WindowSpec, after, stages=None, prev=None) -> DataFrame:
    """``df`` holds the windows' documents framed with ``_w`` (start, end, key) and ``_seq``;
    ``stages``: the inner stages to run (default: the window's whole inner pipeline); ``prev``:
    the inner stage that made ``df``'s documents when it ran elsewhere (a partial ``$group``)."""
    env = window_env()
    todo = list(w.pipeline if stages is None else stages)
    i = 0
    while i < len(todo):
        st = todo[i]
        if st.name == "$sort":
            # with the $limit after it: one sort of each window's documents instead of two
            fused = i + 1 < len(todo) and todo[i + 1].name == "$limit"
            df = apply_sort(df, st.spec, limit=todo[i + 1].spec.n if fused else None,
                            known=known_after(todo[i - 1] if i else prev))
            i += 2 if fused else 1
            continue
        compile_ = WINDOW_STAGES.get(st.name)
        df = apply_stages(df, [st], env) if compile_ is None else compile_(df, st.spec, env)
        i += 1
    return apply_stages(df, after, env)
