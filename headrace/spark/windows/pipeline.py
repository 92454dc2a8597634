"""A closing window's inner pipeline, then the stateless stages after the window."""
from __future__ import annotations

from pyspark.sql import DataFrame

from ...spec.model import WindowSpec
from ..registry import WINDOW_STAGES
from ..stages import apply_stages
from ..window_stages import window_env  # (also registers the window-only stages)


def run_window_pipeline(df: DataFrame, w: WindowSpec, after, stages=None) -> DataFrame:
    """``df`` holds the windows' documents framed with ``_w`` (start, end, key) and ``_seq``;
    ``stages``: the inner stages to run (default: the window's whole inner pipeline)."""
    env = window_env()
    for st in (w.pipeline if stages is None else stages):
        compile_ = WINDOW_STAGES.get(st.name)
        df = apply_stages(df, [st], env) if compile_ is None else compile_(df, st.spec, env)
    return apply_stages(df, after, env)
