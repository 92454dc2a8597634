"""Defaults of keyed computations and Zeitgeist, in one place (pure Python)."""

#: Timestamps are integer milliseconds since the epoch (UTC). "Minus infinity" (nothing seen yet)
#: and "plus infinity" (end of a finite input) as low watermark values:
NEG_INF_MS = 0                        # Spark's initial watermark is the epoch: the same here
END_MS = 9_000_000_000_000         # 2255-03-14: end of a finite input (fits pandas ns timestamps)
TIMER_DOMAIN = "event"                # a computation's timers: "event" or "processing"
INJECTOR_LATENESS_MS = 0              # injector low watermark = min_p M_p - lateness
REPLAY_BATCH_MS = 1_000               # replay: arrivals grouped into batches of this width

# Zeitgeist
ZG_SEED = 1
ZG_MINUTES = 30
ZG_QUERIES = 20
ZG_SEASON_MINUTES = 0                 # generator seasonality period (0: a default of minutes/1.5)
ZG_WARMUP_MINUTES = 5                 # detector: no reports before this much event time
ZG_LATENESS_MS = 8_000                # detector injector lateness (out of order within a dc)
ZG_DEDUP_HORIZON_MS = 120_000         # ids remembered this long (event time) for de-duplication
