"""Injectors that write batches into the channel (pure Python): the sources of the Spark runner.

:class:`ChannelInjector` publishes batches of ``(partition, stream, key, value, ts)`` read at a
processing instant, with the low watermark of :class:`headrace.keyed.watermark.InjectorWatermark`.
Its position in its input (``position``, any JSON) and its watermark state are saved in each
batch's manifest, so a restarted injector resumes after the last batch it published, without
duplicates (a crash before ``head`` moves re-publishes that batch with the same number).
"""
from __future__ import annotations

import json
from typing import Any, Iterable

from .channel import Channel
from .topology import InjectorSpec
from .watermark import InjectorWatermark


class ChannelInjector:
    def __init__(self, channel: Channel, spec: InjectorSpec):
        self.ch, self.spec = channel, spec
        self.wm = InjectorWatermark(spec)
        self.ch.register(spec.name, "injector")
        self.n = self.ch.head(spec.name) + 1
        self.position: Any = None
        self.clock = 0
        last = self.ch.manifest(spec.name, self.n - 1)
        if last is not None:
            self.wm.load(last["wm"])
            self.position = last.get("position")
            self.clock = int(last["clock"])

    @property
    def finished(self) -> bool:
        from . import defaults

        return self.wm.lw >= defaults.END_MS

    def publish(self, records: Iterable[tuple], clock: int, position: Any = None, end: bool = False) -> int:
        """One batch; returns its low watermark."""
        out, seen = [], []
        for p, stream, key, value, ts in records:
            out.append((stream or self.spec.outputs[0], str(key),
                        json.dumps(value, separators=(",", ":"), sort_keys=True), int(ts)))
            seen.append((p, int(ts)))
        self.clock = max(self.clock, int(clock))
        lw = self.wm.advance(seen, self.clock)
        if end:
            lw = self.wm.finish()
        self.position = position
        self.ch.write_batch(self.spec.name, self.n, out, {"lw": lw, "clock": self.clock, "wm": self.wm.to_json(),
                                                          "position": position})
        self.n += 1
        return lw
