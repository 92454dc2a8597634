"""Placement of running processors on workers (pure Python, no Spark).

The rule (system.md section 1, seed 000): a worker hosts at most :data:`SLOTS` running
processors. A processor that starts takes the lowest free slot of the lowest-numbered worker
that has one; a worker is provisioned (the lowest worker number not in use) only when every
worker is full; a worker left with no running processor is deprovisioned. Only running
processors count. Workers are numbered 1, 2, ...; slots 1..SLOTS.
"""
from __future__ import annotations

from dataclasses import dataclass

SLOTS = 4


@dataclass(frozen=True)
class Placed:
    worker: int
    slot: int
    provisioned: bool   # True: the worker had to be provisioned for this processor


@dataclass(frozen=True)
class Released:
    worker: int
    slot: int
    deprovisioned: bool  # True: the worker runs nothing more and goes away


class Placement:
    """Which running processor holds which slot of which worker."""

    def __init__(self, slots: int = SLOTS):
        self.slots = slots
        self.workers: dict[int, list[str | None]] = {}

    # ------------------------------------------------------------------ queries
    def where(self, name: str) -> tuple[int, int] | None:
        for wid, slots in self.workers.items():
            if name in slots:
                return wid, slots.index(name) + 1
        return None

    def running(self, worker: int) -> list[str]:
        return [n for n in self.workers.get(worker, []) if n is not None]

    def snapshot(self) -> dict[int, list[str | None]]:
        return {w: list(s) for w, s in sorted(self.workers.items())}

    # ------------------------------------------------------------------ changes
    def place(self, name: str) -> Placed:
        """Give ``name`` a slot (the same one if it already holds one)."""
        at = self.where(name)
        if at is not None:
            return Placed(at[0], at[1], False)
        for wid in sorted(self.workers):
            slots = self.workers[wid]
            if None in slots:
                i = slots.index(None)
                slots[i] = name
                return Placed(wid, i + 1, False)
        wid = 1
        while wid in self.workers:
            wid += 1
        self.workers[wid] = [name] + [None] * (self.slots - 1)
        return Placed(wid, 1, True)

    def release(self, name: str) -> Released | None:
        """Free ``name``'s slot; a worker left empty is deprovisioned (removed)."""
        at = self.where(name)
        if at is None:
            return None
        wid, slot = at
        self.workers[wid][slot - 1] = None
        empty = not self.running(wid)
        if empty:
            del self.workers[wid]
        return Released(wid, slot, empty)

    def drop_worker(self, worker: int) -> list[str]:
        """A worker is gone (its process died): forget it; returns the processors it ran, in slot order."""
        names = self.running(worker)
        self.workers.pop(worker, None)
        return names

    def restore(self, name: str, worker: int, slot: int) -> None:
        """Put ``name`` back where a catalog says it was (used when rebuilding state)."""
        slots = self.workers.setdefault(worker, [None] * self.slots)
        if slots[slot - 1] not in (None, name):
            raise ValueError(f"slot {worker}/{slot} is held by {slots[slot - 1]!r}")
        slots[slot - 1] = name
