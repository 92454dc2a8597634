"""Zeitgeist, the flagship keyed-computation example (MillWheel, section 2): ``generate`` input
with injected truth, ``detector`` (the topology), ``replay`` (run it over a file or a stream),
``evaluate`` (precision, recall, latency), ``cli`` (``headrace zeitgeist``). Pure Python."""
