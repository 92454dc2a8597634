"""Prometheus text exposition of the instance (prometheus_client, a collector per scrape).

Per processor (label ``processor``): input/output/DLQ message counters, input bytes, watermark
lag, micro-batch duration (p50, p99); a state gauge (label ``state``); the worker count and
running-processor count. Only catalog and sampler data: never a pipeline, a DSN or a token.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

if TYPE_CHECKING:
    from .control import ControlPlane


class _Collector:
    def __init__(self, cp: "ControlPlane"):
        self.cp = cp

    def collect(self):
        cp = self.cp
        counters = {
            "inputMessageCount": CounterMetricFamily("headrace_processor_input_messages", "input documents",
                                                     labels=["processor"]),
            "outputMessageCount": CounterMetricFamily("headrace_processor_output_messages", "output documents",
                                                      labels=["processor"]),
            "dlqMessageCount": CounterMetricFamily("headrace_processor_dlq_messages", "DLQ documents",
                                                   labels=["processor"]),
            "inputMessageSize": CounterMetricFamily("headrace_processor_input_bytes", "input bytes",
                                                    labels=["processor"]),
        }
        lag = GaugeMetricFamily("headrace_processor_watermark_lag_seconds", "now minus the watermark",
                                labels=["processor"])
        batch = GaugeMetricFamily("headrace_processor_batch_duration_seconds", "micro-batch duration",
                                  labels=["processor", "quantile"])
        state = GaugeMetricFamily("headrace_processor_state", "1 for the processor's state",
                                  labels=["processor", "state"])
        rows = cp.list()
        for row in rows:
            n = row["name"]
            state.add_metric([n, row["state"]], 1)
            s = cp.live.get(n) if row["state"] == "STARTED" else (cp.catalog.get(n).last_stats if
                                                                    cp.catalog.get(n) else None)
            s = s or {}
            for key, fam in counters.items():
                if s.get(key) is not None:
                    fam.add_metric([n], float(s[key]))
            if row.get("watermarkLagSeconds") is not None:
                lag.add_metric([n], row["watermarkLagSeconds"])
            latency = s.get("latency") or {}
            for q in ("p50", "p99"):
                if latency.get(q) is not None:
                    batch.add_metric([n, q[1:]], float(latency[q]))
        yield from counters.values()
        yield lag
        yield batch
        yield state
        yield GaugeMetricFamily("headrace_workers", "worker processes", value=len(cp.workers))
        yield GaugeMetricFamily("headrace_processors_running", "processors in state STARTED",
                                value=sum(1 for r in rows if r["state"] == "STARTED"))


def render(cp: "ControlPlane") -> tuple[bytes, str]:
    reg = CollectorRegistry()
    reg.register(_Collector(cp))
    return generate_latest(reg), CONTENT_TYPE_LATEST
