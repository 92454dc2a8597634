"""A closing window's inner pipeline, then the stateless stages after the window."""
from __future__ import annotations

from pyspark.sql import DataFrame

from ...spec.model import WindowSpec
from .. import window_stages as WS
from ..stages import apply_stages
from ..window_stages import window_env


def run_window_pipeline(df: DataFrame, w: WindowSpec, after, stages=None) -> DataFrame:
    """``df`` holds the windows' documents framed with ``_w`` (start, end, key) and ``_seq``;
    ``stages``: the inner stages to run (default: the window's whole inner pipeline)."""
    env = window_env()
    for st in (w.pipeline if stages is None else stages):
        if st.name == "$group":
            df = WS.apply_group(df, st.arg, lambda root: env.ctx(root))
        elif st.name == "$sort":
            df = WS.apply_sort(df, st.arg)
        elif st.name == "$limit":
            df = WS.apply_limit(df, st.arg)
        elif st.name == "$count":
            df = WS.apply_count(df, st.arg)
        else:
            df = apply_stages(df, [st], env)
    return apply_stages(df, after, env)
