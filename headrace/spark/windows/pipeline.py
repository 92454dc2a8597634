"""A closing window's inner pipeline, then the stateless stages after the window."""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...spec.model import WindowSpec
from .. import values as V
from ..stages import Env, apply_stages
from ..stages.base import current_env


def window_env() -> Env:
    """The expression environment of an inner pipeline: ``$meta`` window bounds from ``_w``;
    one per processor (kept in the running processor's :class:`Env`), so that the inner
    stages build their trees once."""
    outer = current_env()
    return _new_window_env() if outer is None else outer.once(window_env, _new_window_env)


def _new_window_env() -> Env:
    return Env(meta={"stream.window.start": V.to_variant(F.col("_w.start")),
                     "stream.window.end": V.to_variant(F.col("_w.end"))})


def run_window_pipeline(df: DataFrame, w: WindowSpec, after, stages=None) -> DataFrame:
    """``df`` holds the windows' documents framed with ``_w`` (start, end, key) and ``_seq``;
    ``stages``: the inner stages to run (default: the window's whole inner pipeline)."""
    from .. import window_stages as WS

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
