"""Lease-balanced consumers (after the Kinesis Client Library).

A consumer group ``G`` of stream ``S`` has a lease table, ``<stream dir>/groups/G/leases.json``,
replaced atomically (temp file, fsync, rename) under an exclusive ``flock`` of
``leases.lock``; any number of processes may share it. One lease per shard::

    {"shard", "parents", "owner", "counter", "checkpoint", "finished", "expires", "handoff"}

- ``checkpoint`` is the next sequence number to process; ``finished`` means the shard is
  closed and processed to its end (KCL's SHARD_END); ``owner`` is None when the lease is free.
- ``expires`` is the owner's deadline (seconds on the shared clock). Owners renew before it;
  a lease whose deadline has passed is free, and whoever takes it resumes at ``checkpoint``.
- ``counter`` increases on every take, renewal, checkpoint and transfer. A worker checks
  ``owner`` and ``counter`` before it writes a checkpoint, so a worker that lost a lease can
  never move its checkpoint.
- A lease is *eligible* when it is not finished and every parent lease is finished: children
  are processed only after their parents are drained, which keeps per-key order across
  reshardings.
- Balancing: with ``E`` eligible leases and ``W`` live workers (owners of unexpired eligible
  leases, plus oneself), each worker aims at ``ceil(E / W)``; it takes free leases first,
  then asks for one lease of the most loaded worker when that worker holds more than the
  target (or exactly the target while the asker needs two or more). Stealing is a graceful
  hand-off: the asker writes its id into ``handoff``; the owner, between batches (so after
  its last checkpoint), transfers the lease. An owner that does not answer loses the lease
  by expiry.

Delivery guarantee (per group): every record is delivered, in sequence order per shard and in
put order per partition key. A worker delivers a record only while it holds the shard's
lease with at least ``safety`` seconds left, and checkpoints after each batch. Without
crashes and stalls each record is delivered exactly once. After a worker crashes (or stalls
past its lease), the records it delivered after its last checkpoint of a shard -- at most
one batch (``batch_size``) per shard -- are delivered again by the next owner: delivery is
at-least-once, and a re-delivery is always a replay of a suffix starting at the checkpoint.
"""
from __future__ import annotations

import json
import math
import os
import socket
import time
import uuid
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator

from .errors import InvalidArgument
from .log import Record
from .stream import Meta, Stream, check_name, file_lock, write_json_atomic


@dataclass
class Lease:
    shard: str
    parents: list[str] = field(default_factory=list)
    owner: str | None = None
    counter: int = 0
    checkpoint: int = 0
    finished: bool = False
    expires: float = 0.0
    handoff: str | None = None

    def held(self, now: float) -> bool:
        return self.owner is not None and self.expires > now


class LeaseTable:
    """The lease table of one consumer group of a stream."""

    def __init__(self, stream: Stream, group: str):
        check_name("group", group)
        self.stream = stream
        self.group = group
        self.dir = stream.dir / "groups" / group
        self.path = self.dir / "leases.json"
        self.lock_path = self.dir / "leases.lock"

    def exists(self) -> bool:
        return self.path.is_file()

    def load(self) -> dict[str, Lease]:
        """A consistent snapshot (the file is only ever replaced atomically)."""
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return {}
        return {d["shard"]: Lease(**d) for d in data["leases"]}

    @contextmanager
    def transaction(self) -> Iterator[dict[str, Lease]]:
        """Exclusive read-modify-write; written back (durably) only if changed."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with file_lock(self.lock_path):
            leases = self.load()
            before = {k: asdict(v) for k, v in leases.items()}
            yield leases
            after = {k: asdict(v) for k, v in leases.items()}
            if after != before:
                write_json_atomic(self.path, {"group": self.group, "stream": self.stream.name,
                                              "leases": [after[k] for k in sorted(after)]})

    @staticmethod
    def sync(leases: dict[str, Lease], meta: Meta, initial: str = "earliest", stream: Stream | None = None) -> list[str]:
        """Add a lease for every shard without one; returns the shards added.

        ``initial`` applies to a new table only: ``earliest`` starts every shard at 0,
        ``latest`` at its current end (closed shards start finished). Shards created by later
        reshardings always start at 0. Closed, empty shards whose parents are finished are
        marked finished at once.
        """
        fresh = not leases
        added = []
        for s in sorted(meta.shards.values(), key=lambda s: s.id):
            if s.id in leases:
                continue
            lease = Lease(s.id, list(s.parents))
            if fresh and initial == "latest":
                if s.open:
                    lease.checkpoint = stream.count(s.id) if stream else 0
                else:
                    lease.checkpoint, lease.finished = s.end_seq or 0, True
            leases[s.id] = lease
            added.append(s.id)
        changed = True
        while changed:
            changed = False
            for lease in leases.values():
                s = meta.shards.get(lease.shard)
                if (not lease.finished and s is not None and not s.open and lease.checkpoint >= (s.end_seq or 0)
                        and all(leases[p].finished for p in lease.parents if p in leases)):
                    lease.finished, lease.owner, lease.handoff, lease.expires = True, None, None, 0.0
                    changed = True
        return added

    def describe(self, now: float | None = None) -> dict:
        now = time.time() if now is None else now
        meta = self.stream.meta()
        leases = self.load()
        out = []
        for sid in sorted(leases):
            lease = leases[sid]
            s = meta.shards.get(sid)
            eligible = not lease.finished and all(leases[p].finished for p in lease.parents if p in leases)
            d = asdict(lease)
            d.update({"state": "open" if s is None or s.open else "closed", "end_seq": s.end_seq if s else None,
                      "eligible": eligible, "expired": lease.owner is not None and lease.expires <= now})
            out.append(d)
        owners: dict[str, int] = {}
        for d in out:
            if d["owner"] and not d["expired"] and not d["finished"]:
                owners[d["owner"]] = owners.get(d["owner"], 0) + 1
        return {"stream": self.stream.name, "group": self.group, "workers": owners, "leases": out}


@dataclass
class StepResult:
    delivered: int = 0
    taken: int = 0
    finished: int = 0
    lost: int = 0
    handed_off: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.taken or self.finished or self.lost or self.handed_off)


def default_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class Worker:
    """One consumer of a group: takes, renews and steals leases, delivers records, checkpoints.

    Worker ids must be unique among live workers; a worker restarted with the same id adopts
    the leases still recorded under it. ``clock`` (seconds) must be shared by all workers of a
    group (the wall clock on one machine). ``process(record)`` is called once per delivered
    record; a checkpoint follows each batch.
    """

    def __init__(self, stream: Stream, group: str, worker_id: str | None = None, *,
                 lease_duration: float = 10.0, renew_interval: float | None = None,
                 safety: float | None = None, batch_size: int = 500, initial: str = "earliest",
                 clock: Callable[[], float] = time.time, on_event: Callable[[dict], None] | None = None,
                 before_checkpoint: Callable[[], Any] | None = None):
        if lease_duration <= 0:
            raise InvalidArgument(f"lease duration must be positive, found {lease_duration}", code="LEASE_OPTION")
        if batch_size < 1:
            raise InvalidArgument(f"batch size must be at least 1, found {batch_size}", code="LEASE_OPTION")
        if initial not in ("earliest", "latest"):
            raise InvalidArgument(f"initial position must be 'earliest' or 'latest', found {initial!r}",
                                  code="LEASE_OPTION")
        self.stream = stream
        self.table = LeaseTable(stream, group)
        self.id = worker_id or default_worker_id()
        check_name("worker", self.id)
        self.lease_duration = lease_duration
        self.renew_interval = lease_duration / 3 if renew_interval is None else renew_interval
        self.safety = lease_duration / 5 if safety is None else safety
        self.batch_size = batch_size
        self.initial = initial
        self.clock = clock
        self.on_event = on_event
        self.before_checkpoint = before_checkpoint
        # shard -> [counter, expires, checkpoint, renewed_at]
        self.held: dict[str, list] = {}

    def _event(self, kind: str, **kw: Any) -> None:
        if self.on_event is not None:
            self.on_event({"event": kind, "worker": self.id, **kw})

    # ---- coordination ----------------------------------------------------------------------
    def _grant(self, lease: Lease, now: float) -> None:
        lease.owner, lease.counter, lease.expires, lease.handoff = self.id, lease.counter + 1, now + self.lease_duration, None
        self.held[lease.shard] = [lease.counter, lease.expires, lease.checkpoint, now]

    def coordinate(self, res: StepResult | None = None) -> StepResult:
        """Sync shards, renew, hand off, take and steal leases (one table transaction)."""
        res = res or StepResult()
        meta = self.stream.meta()
        with self.table.transaction() as leases:
            now = self.clock()
            LeaseTable.sync(leases, meta, self.initial, self.stream)
            for sid in list(self.held):
                lease = leases.get(sid)
                counter, _, _, renewed_at = self.held[sid]
                if lease is None or lease.owner != self.id or lease.counter != counter:
                    del self.held[sid]
                    res.lost += 1
                    self._event("lease_lost", shard=sid, owner=lease.owner if lease else None)
                elif lease.handoff and lease.handoff != self.id:
                    to = lease.handoff
                    lease.owner, lease.counter, lease.expires, lease.handoff = to, lease.counter + 1, now + self.lease_duration, None
                    del self.held[sid]
                    res.handed_off += 1
                    self._event("lease_handed_off", shard=sid, to=to, checkpoint=lease.checkpoint)
                elif now >= renewed_at + self.renew_interval:
                    self._grant(lease, now)
            # leases recorded under this id that this object does not hold: transfers to us, or
            # left by an earlier process with the same worker id
            for lease in leases.values():
                if lease.owner == self.id and lease.shard not in self.held and not lease.finished:
                    self._grant(lease, now)
                    res.taken += 1
                    self._event("lease_taken", shard=lease.shard, checkpoint=lease.checkpoint, via="owner")
            self._balance(leases, now, res)
        return res

    def _balance(self, leases: dict[str, Lease], now: float, res: StepResult) -> None:
        eligible = [l for l in leases.values()
                    if not l.finished and all(leases[p].finished for p in l.parents if p in leases)]
        if not eligible:
            return
        load: dict[str, int] = {}
        for l in eligible:
            if l.held(now) and l.owner != self.id:
                load[l.owner] = load.get(l.owner, 0) + 1
        incoming = [l for l in eligible if l.handoff == self.id and l.held(now) and l.owner != self.id]
        mine = sum(1 for l in eligible if l.shard in self.held) + len(incoming)
        target = math.ceil(len(eligible) / (len(load) + 1))
        need = target - mine
        if need <= 0:
            return
        free = sorted((l for l in eligible if not l.held(now)), key=lambda l: l.shard)
        for lease in free[:need]:
            was = lease.owner
            self._grant(lease, now)
            res.taken += 1
            self._event("lease_taken", shard=lease.shard, checkpoint=lease.checkpoint,
                        via="expired" if was else "free", previous=was)
            need -= 1
        if need <= 0 or incoming or not load:
            return
        victim = max(sorted(load), key=lambda w: load[w])
        if load[victim] > target or (load[victim] == target and need > 1):
            candidates = sorted((l for l in eligible if l.owner == victim and l.held(now) and not l.handoff),
                                key=lambda l: l.shard, reverse=True)
            if candidates:
                candidates[0].handoff = self.id
                self._event("steal_requested", shard=candidates[0].shard, owner=victim, target=target)

    # ---- processing --------------------------------------------------------------------------
    def step(self, process: Callable[[Record], Any], max_records: int | None = None) -> StepResult:
        """Coordinate, then deliver up to one batch per held shard and checkpoint."""
        res = self.coordinate()
        meta = self.stream.meta()
        progress: dict[str, int] = {}
        budget = max_records
        for sid in sorted(self.held):
            if budget is not None and budget <= 0:
                break
            counter, expires, checkpoint, _ = self.held[sid]
            shard = meta.shards[sid]
            stop = shard.end_seq
            upto = checkpoint + (self.batch_size if budget is None else min(self.batch_size, budget))
            if stop is not None:
                upto = min(upto, stop)
            pos = checkpoint
            for rec in self.stream.read(sid, checkpoint, upto):
                if self.clock() >= expires - self.safety:
                    break  # about to lose the lease: stop, checkpoint, renew
                process(rec)
                pos = rec.seq + 1
            delivered = pos - checkpoint
            res.delivered += delivered
            if budget is not None:
                budget -= delivered
            if delivered or (stop is not None and pos >= stop):
                progress[sid] = pos
        if progress:
            if self.before_checkpoint is not None:
                self.before_checkpoint()
            self.checkpoint(progress, meta, res)
        return res

    def checkpoint(self, progress: dict[str, int], meta: Meta, res: StepResult) -> None:
        with self.table.transaction() as leases:
            now = self.clock()
            for sid, pos in progress.items():
                lease = leases.get(sid)
                counter = self.held[sid][0]
                if lease is None or lease.owner != self.id or lease.counter != counter:
                    start = self.held.pop(sid)[2]
                    res.lost += 1
                    # records [start, pos) were delivered but not checkpointed: the next owner
                    # delivers them again
                    self._event("lease_lost", shard=sid, owner=lease.owner if lease else None,
                                uncheckpointed=[start, pos])
                    continue
                lease.checkpoint = pos
                end = meta.shards[sid].end_seq
                if end is not None and pos >= end:
                    lease.finished, lease.owner, lease.handoff, lease.expires = True, None, None, 0.0
                    lease.counter += 1
                    del self.held[sid]
                    res.finished += 1
                    self._event("shard_end", shard=sid, checkpoint=pos)
                else:
                    self._grant(lease, now)

    def shutdown(self) -> None:
        """Release held leases (their checkpoints are already written) so others take them now,
        and withdraw this worker's pending steal requests."""
        with self.table.transaction() as leases:
            for lease in leases.values():
                if lease.handoff == self.id and lease.owner != self.id:
                    lease.handoff = None
                mine = self.held.get(lease.shard)
                if lease.owner == self.id and (mine is None or mine[0] == lease.counter) and not lease.finished:
                    to = lease.handoff
                    lease.owner, lease.counter, lease.handoff = to, lease.counter + 1, None
                    lease.expires = self.clock() + self.lease_duration if to else 0.0
                    self._event("lease_released", shard=lease.shard, checkpoint=lease.checkpoint, to=to)
            self.held.clear()

    def caught_up(self) -> bool:
        """True when the whole group has checkpointed every record put so far: each lease is
        finished, or of an open shard with its checkpoint at the shard's current end."""
        meta = self.stream.meta()
        leases = self.table.load()
        if set(meta.shards) - set(leases):
            return False
        for lease in leases.values():
            if lease.finished:
                continue
            s = meta.shards[lease.shard]
            if not s.open or lease.checkpoint < self.stream.count(s.id):
                return False
        return True

    def run(self, process: Callable[[Record], Any], *, max_records: int | None = None, follow: bool = False,
            idle_wait: float = 0.2, should_stop: Callable[[], bool] | None = None) -> int:
        """Step until ``max_records`` were delivered, or ``should_stop()``, or -- unless ``follow``
        -- the group is :meth:`caught_up` (records held by other workers' leases count: the
        worker waits for them to be processed, or for the leases to expire and takes them).
        Sleeps ``idle_wait`` between steps that find nothing. Then releases its leases.
        Returns the number of records it delivered."""
        total = 0
        try:
            while should_stop is None or not should_stop():
                left = None if max_records is None else max_records - total
                if left is not None and left <= 0:
                    break
                res = self.step(process, left)
                total += res.delivered
                if res.delivered == 0 and not res.changed:
                    if not follow and self.caught_up():
                        break
                    time.sleep(idle_wait)
        finally:
            self.shutdown()
        return total
