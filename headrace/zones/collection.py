"""A collection on a ``zoned`` connection: broadcast reads with de-duplication, trim, status.

Writes go through the connection's :class:`~headrace.zones.router.ZoneRouter` (failover).
As a sink it is exactly-once by idempotence: a replayed micro-batch writes the same documents
with the same deterministic ``_id``s into the same zones; a write that timed out but succeeded
may leave a copy in a second zone, which reads resolve as below.

Reads broadcast to every zone (a document may be in any zone after a failover) and resolve:

1. Copies with the same ``_id`` are one document (a balancer move in progress, or a retried
   write of a document that carried its own ``_id``): the copy in the zone its shard key belongs
   to wins, else the one in the first zone (configuration order).
2. With a de-duplication field (``reads.dedupeField`` or ``dedupe=``), documents with equal
   values of that field are one message (a write that timed out but succeeded, then went to
   another zone): ``keep="first"`` keeps the earliest inserted, ``"last"`` the latest, by the
   insert time embedded in ``_id`` (ObjectId: seconds, then the remaining ObjectId bytes, which
   increase within a process). Ties and non-ObjectId ids: zone order, then insertion order in
   the zone. Documents without the field are never duplicates.

Results come in zone order, each zone in insertion order.

Consistency while the balancer moves documents (copy to the new zone, then delete from the
old): zones are read in order and then zones 1..n-1 are read again (SQLite: only rows added
since the first read; PostgreSQL, whose sequence order is not commit order: in full). For any
move from X to Y some read of Y follows a read of X, and a read of X that misses the document
(already deleted) implies the copy in Y was committed before it, so the later read of Y sees it.
Pass ``consistent=False`` to read each zone once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

from .. import ejson
from ..errors import HeadraceError
from ..store.base import Collection, MergeSpec, WriteResult, id_key
from .balancer import Balancer
from .order import get_path, has_path
from .router import ZoneRouter, is_zone_failure


class ZoneReadError(HeadraceError):
    """A zone could not be read, so a broadcast read would be incomplete."""

    code = "ZONES_READ_UNAVAILABLE"
    exit_code = 1


@dataclass
class Copy:
    """One stored copy: zone, its index in zone order, position in the zone, the document."""

    zone: str
    zi: int
    pos: int
    doc: dict

    @property
    def insert_key(self) -> tuple:
        i = self.doc.get("_id")
        ins = (0, i.binary) if isinstance(i, ejson.ObjectId) else (1, b"")
        return (ins, self.zi, self.pos)


class ZonedCollection(Collection):
    """``db.coll`` on every zone of a zoned connection."""

    def __init__(self, router: ZoneRouter, db: str, coll: str):
        self.router, self.db, self.name = router, db, coll

    # -- writes -------------------------------------------------------------------------------
    def insert_many(self, docs: Iterable[dict]) -> WriteResult:
        return self.router.write(self.db, self.name, list(docs), MergeSpec(on=("_id",), when_matched="fail"))

    def merge_many(self, docs: Sequence[dict], spec: MergeSpec) -> WriteResult:
        """``$merge`` with zone failover; matching happens within the document's zone."""
        return self.router.write(self.db, self.name, docs, spec)

    def upsert_many(self, docs: Sequence[dict]) -> WriteResult:
        return self.merge_many(docs, MergeSpec(on=("_id",), when_matched="replace"))

    # -- reads --------------------------------------------------------------------------------
    def copies(self, consistent: bool = True, zones: Sequence[str] | None = None,
               skip_unavailable: bool = False) -> list[Copy]:
        """Every stored copy in every zone (see the module docstring for ``consistent``)."""
        order = [z for z in self.router.order if zones is None or z in zones]
        out: list[Copy] = []
        last: dict[str, int] = {}
        readable: list[str] = []
        for z in order:
            try:
                last[z] = self._scan_into(z, 0, out)
                readable.append(z)
            except Exception as exc:
                if not is_zone_failure(exc):
                    raise
                self.router.mark_down(z, exc)
                if not skip_unavailable:
                    raise ZoneReadError(f"zoned connection {self.router.name!r}: zone {z!r} cannot be read "
                                        f"({type(exc).__name__}: {str(exc).strip()}); a broadcast read would be "
                                        "incomplete", code="ZONES_READ_UNAVAILABLE") from exc
        if consistent:
            for z in readable[:-1]:
                self._scan_into(z, last[z] if self.router.backends[z].positional else 0, out)
        return out

    def _scan_into(self, zone: str, after: int, out: list[Copy]) -> int:
        zi = self.router.order.index(zone)
        mx = after
        for pos, doc in self.router.backends[zone].scan(self.db, self.name, after):
            out.append(Copy(zone, zi, pos, doc))
            mx = max(mx, pos)
        return mx

    def resolve(self, copies: list[Copy], dedupe: str | None = None, keep: str = "first"
                ) -> tuple[list[Copy], dict[str, set[str]], list[list[Copy]]]:
        """(kept copies in read order, id_key -> zones holding it, duplicate groups by the dedupe field)."""
        by_id: dict[str, list[Copy]] = {}
        for c in copies:
            by_id.setdefault(id_key(c.doc.get("_id")), []).append(c)
        where = {k: {c.zone for c in cs} for k, cs in by_id.items()}
        winners: list[Copy] = []
        for cs in by_id.values():
            if len(cs) == 1:
                winners.append(cs[0])
                continue
            home = [c for c in cs if self.router.range_zone(c.doc) == c.zone]
            winners.append(min(home or cs, key=lambda c: (c.zi, c.pos)))
        groups: list[list[Copy]] = []
        if dedupe:
            by_msg: dict[str, list[Copy]] = {}
            kept: list[Copy] = []
            for c in winners:
                if has_path(c.doc, dedupe):
                    by_msg.setdefault(id_key(get_path(c.doc, dedupe)), []).append(c)
                else:
                    kept.append(c)
            for cs in by_msg.values():
                cs.sort(key=lambda c: c.insert_key)
                if len(cs) > 1:
                    groups.append(cs)
                kept.append(cs[0] if keep == "first" else cs[-1])
            winners = kept
        winners.sort(key=lambda c: (c.zi, c.pos))
        return winners, where, groups

    def _dedupe_args(self, dedupe: Any, keep: str | None) -> tuple[str | None, str]:
        field = self.router.cfg.dedupe_field if dedupe is None else (dedupe or None)
        keep = keep or self.router.cfg.keep
        if keep not in ("first", "last"):
            raise ValueError(f"keep must be 'first' or 'last', found {keep!r}")
        return field, keep

    def find(self, predicate: Callable[[dict], bool] | None = None, *, dedupe: Any = None, keep: str | None = None,
             consistent: bool = True) -> Iterator[dict]:
        """Broadcast read. ``dedupe``: a field (default ``reads.dedupeField``; ``False``: none)."""
        field, keep = self._dedupe_args(dedupe, keep)
        winners, _, _ = self.resolve(self.copies(consistent), field, keep)
        for c in winners:
            if predicate is None or predicate(c.doc):
                yield c.doc

    def count(self) -> int:
        """The number of documents :meth:`find` returns (a broadcast read)."""
        return sum(1 for _ in self.find())

    def delete_ids(self, ids: Iterable[Any]) -> int:
        ids = list(ids)
        return sum(self.router.backends[z].collection(self.db, self.name).delete_ids(ids) for z in self.router.order)

    def drop(self) -> None:
        for z in self.router.order:
            self.router.backends[z].collection(self.db, self.name).drop()
            self.router.backends[z]._colls.pop((self.db, self.name), None)

    def stats(self) -> dict:
        """The connection's zone statistics (shared by every collection on it)."""
        return {**self.router.stats(), "namespace": f"{self.db}.{self.name}"}

    # -- maintenance --------------------------------------------------------------------------
    def trim(self, dedupe: str | None = None, keep: str | None = None, dry_run: bool = False) -> dict:
        """Delete duplicates (by the dedupe field) down to the one reads keep. Returns a report."""
        field, keep = self._dedupe_args(dedupe, keep)
        if not field:
            raise ValueError("trim needs a de-duplication field (reads.dedupeField or dedupe=)")
        winners, where, groups = self.resolve(self.copies(), field, keep)
        kept_ids = {id_key(c.doc.get("_id")) for c in winners}
        deleted: dict[str, int] = {z: 0 for z in self.router.order}
        n = 0
        for cs in groups:
            for c in cs:
                k = id_key(c.doc.get("_id"))
                if k in kept_ids:
                    continue
                for z in sorted(where[k], key=self.router.order.index):
                    if not dry_run:
                        d = self.router.backends[z].collection(self.db, self.name).delete_ids([c.doc["_id"]])
                    else:
                        d = 1
                    deleted[z] += d
                    n += d
        return {"namespace": f"{self.db}.{self.name}", "dedupeField": field, "keep": keep,
                "duplicateGroups": len(groups), "deleted": n, "deletedByZone": deleted, "dryRun": dry_run}

    def status(self, probe: bool = True) -> dict:
        """Zones up/down, documents per zone, range violations, duplicates (by the dedupe field)."""
        r = self.router
        if probe:
            r.probe(r.order)
        zones: dict[str, dict] = {}
        copies: list[Copy] = []
        for z in r.order:
            st = r.state[z]
            info: dict[str, Any] = {"up": st.up, "store": r.cfg.zone(z).describe(), "count": None,
                                    "violations": None, "lastError": st.last_error}
            if st.up:
                try:
                    mine = self.copies(consistent=False, zones=[z])
                except ZoneReadError:
                    info["up"] = False
                    info["lastError"] = r.state[z].last_error
                    zones[z] = info
                    continue
                copies.extend(mine)
                info["count"] = len(mine)
                bad = [c for c in mine if r.range_zone(c.doc) not in (None, z)]
                info["violations"] = len(bad)
                info["violationsByTarget"] = {t: sum(1 for c in bad if r.range_zone(c.doc) == t)
                                              for t in r.order if any(r.range_zone(c.doc) == t for c in bad)}
            zones[z] = info
        field = r.cfg.dedupe_field
        dups = None
        if field:
            _, _, groups = self.resolve(copies, field, r.cfg.keep)
            dups = sum(len(g) - 1 for g in groups)
        return {"connection": r.name, "namespace": f"{self.db}.{self.name}", "shardKey": list(r.cfg.shard_key),
                "zones": zones,
                "violations": sum(v["violations"] or 0 for v in zones.values()),
                "dedupeField": field, "duplicates": dups,
                "ranges": [rg.to_plain(r.cfg.shard_key) for rg in r._ranges]}

    def balancer(self, **kw: Any) -> "Balancer":
        """A :class:`~headrace.zones.balancer.Balancer` for this collection (``start()`` runs it in the background)."""
        return Balancer(self, **kw)

