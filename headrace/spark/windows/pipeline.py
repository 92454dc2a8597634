"""A closing window's inner pipeline, then the stateless stages after the window."""
from __future__ import annotations

from pyspark.sql import DataFrame

from ...spec.model import WindowSpec
from ..registry import WINDOW_STAGES
from ..stages import apply_stages
from ..window_stages import apply_sort, window_env  # (also registers the window-only stages)


def run_window_pipeline(df: DataFrame, w: WindowSpec, after, stages=None) -> DataFrame:
    """``df`` holds the windows' documents framed with ``_w`` (start, end, key) and ``_seq``;
    ``stages``: the inner stages to run (default: the window's whole inner pipeline)."""
    env = window_env()
    todo = list(w.pipeline if stages is None else stages)
    i = 0
    while i < len(todo):
        st = todo[i]
        if st.name == "$sort" and i + 1 < len(todo) and todo[i + 1].name == "$limit":
            # one sort of each window's documents instead of two (the sort, then by _seq)
            df = apply_sort(df, st.spec, limit=todo[i + 1].spec.n)
            i += 2
            continue
        compile_ = WINDOW_STAGES.get(st.name)
        df = apply_stages(df, [st], env) if compile_ is None else compile_(df, st.spec, env)
        i += 1
    return apply_stages(df, after, env)
