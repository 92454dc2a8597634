"""From a keyed topology to a pipeline: copy a topology stream into an embedded headrace stream.

``export_stream(channel, producers, stream, home, target)`` appends every committed record of
``stream`` (from the named producers, batch by batch) that is not exported yet to the embedded
stream ``target`` (created with one shard if missing), as JSON ``{"_id", "key", "value", "ts"}``
with partition key ``key``. ``_id`` is ``<producer>:<batch>:<position>``, the same on every
attempt. Progress is saved per producer in ``exports/<target>.json`` under the channel root
after each batch's put: a crash between the put and the save repeats that batch's records
(at-least-once, with equal ``_id``s a consumer can de-duplicate on). A pipeline then reads it with
``{"$source": {"connectionName": "stream", "stream": target}}``. The other direction, a stream
into a topology, is an injector over the stream's shards (``zeitgeist detect --stream``).
"""
from __future__ import annotations

import json
from pathlib import Path

from .channel import Channel, write_atomic


def export_stream(ch: Channel, producers: list[str], stream: str, home: "str | None", target: str) -> int:
    """Export what is new; return how many records were put."""
    from ..streams import Stream, StreamUnknown, create_stream

    try:
        s = Stream(home, target)
    except StreamUnknown:
        create_stream(home, target, 1)
        s = Stream(home, target)
    pos_file = ch.root / "exports" / f"{target}.json"
    pos_file.parent.mkdir(parents=True, exist_ok=True)
    pos = json.loads(pos_file.read_text()) if pos_file.exists() else {}
    put = 0
    try:
        for p in producers:
            for n in range(int(pos.get(p, -1)) + 1, ch.committed(p) + 1):
                t = ch.read(p, n, stream)
                if t is not None:
                    rows = zip(t.column("key").to_pylist(), t.column("value").to_pylist(), t.column("ts").to_pylist())
                    recs = [(k, {"_id": f"{p}:{n}:{i}", "key": k, "value": json.loads(v), "ts": ts})
                            for i, (k, v, ts) in enumerate(rows)]
                    if recs:
                        s.put_many(recs)
                        put += len(recs)
                pos[p] = n
                write_atomic(pos_file, json.dumps(pos).encode())
    finally:
        s.close()
    return put
