"""The de-duplication catalog of ``$source.dedup`` (system.md section 2; seeds 001 and 004).

A record's id (``idField``, hashed to 64 bits in the JVM with ``xxhash64`` of its canonical JSON)
is looked up in a catalog of the ids seen within the horizon. The catalog is split into
``shards`` (one executor task each, by hash of the id) and, inside a shard, into **time
buckets** of ``horizon / buckets`` of event time. Each bucket has

- a **Bloom filter** (a bit array, ``k`` probes by double hashing of the 64-bit id hash) that
  answers "certainly never seen" for the common case without touching the exact ids, and
- the **exact ids** (sorted ``int64`` hashes) in immutable chunk files, one per batch that added
  to the bucket (compacted into one when they pile up), read only when a Bloom filter says
  "maybe" (a hit: a duplicate or a false positive, counted apart).

Decisions, per batch ``N`` and shard, in the batch's record order (arrival, partition, position):

- ``W`` is the processor watermark after batch ``N-1`` and ``G = W - horizon`` the collection
  frontier. A record with event time before ``G`` can no longer be checked (its id may have been
  collected): it is dropped as a presumed duplicate and counted in ``expiredDuplicates``
  (as in Dataflow). Buckets that end at or before ``G`` are collected.
- Otherwise a record whose id is in the catalog, or earlier in the same batch, is dropped
  (``dropped``); the first one is kept and its id added to the bucket of its event time.

Versions: shard ``s`` after batch ``N`` is the manifest ``<dir>/<s>/m<N>.json`` (its buckets,
their Bloom files and chunk files; every file it names is immutable). Batch ``N`` reads the
latest manifest below ``N`` and writes ``m<N>``; a re-run of ``N`` after a crash reads the same
version and writes the same files, so a replayed batch makes the same decisions. The last
:data:`KEEP` manifests and the files they name are kept.

Exactness: the catalog keeps 64-bit hashes, so two different ids collide with probability about
``n^2 / 2^65`` (``n`` ids in the horizon: 10 million ids, about 3 in a million). Memory: 8 bytes
per id plus about 1.7-2.6 bytes per id of Bloom filters (a look-up checks every live bucket, so
each bucket's filter is sized for the target rate divided by the number of buckets).

Nothing here imports pyspark: it runs in the executor's Python worker (numpy, one call per
batch of records, never per record) and in unit tests.
"""
from __future__ import annotations

import json
import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

KEEP = 6                       # manifests kept per shard (a re-run reads the one below its batch)
COMPACT_AFTER = 16             # chunks per bucket before they are merged into one
MIN_BLOOM_BITS = 1 << 13       # smallest Bloom filter (1 KiB)
# a bucket's Bloom filter is sized for twice its first batch (at least 4096 ids) and rebuilt from
# the exact ids 1.5 times larger whenever it holds more ids than it was sized for
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


# ---------------------------------------------------------------- the Bloom filter

def bloom_params(capacity: int, fpr: float) -> tuple[int, int]:
    """``(bits, k)`` for ``capacity`` ids at false-positive rate ``fpr``; bits a multiple of 64."""
    capacity = max(1, capacity)
    bits = max(MIN_BLOOM_BITS, int(-capacity * math.log(fpr) / (math.log(2) ** 2)))
    bits = (bits + 63) // 64 * 64
    k = max(1, round(bits / capacity * math.log(2)))
    return bits, min(k, 16)


def bloom_capacity(bits: int, fpr: float) -> int:
    return int(bits * (math.log(2) ** 2) / -math.log(fpr))


class Bloom:
    """A Bloom filter over 64-bit hashes, vectorized: ``add``/``contains`` take numpy arrays.

    The probes are ``h1 + i*h2`` (mod the size) with ``h1`` the hash and ``h2`` an odd mix of it
    (Kirsch and Mitzenmacher's double hashing). The bits are kept packed (``uint8``, little
    bit order), as they are stored."""

    def __init__(self, bits: int, k: int, words: np.ndarray | None = None, count: int = 0):
        self.bits, self.k, self.count = bits, k, count
        self.words = np.zeros(bits // 8, dtype=np.uint8) if words is None else words

    def _probes(self, h: np.ndarray) -> np.ndarray:
        h1 = h.astype(np.uint64, copy=False)
        with np.errstate(over="ignore"):
            h2 = ((h1 * _GOLDEN) >> np.uint64(17)) | np.uint64(1)
            i = np.arange(self.k, dtype=np.uint64)
            return (h1[:, None] + i[None, :] * h2[:, None]) % np.uint64(self.bits)

    def add(self, h: np.ndarray) -> None:
        if len(h) == 0:
            return
        bits = np.unpackbits(self.words, bitorder="little")
        bits[self._probes(h).ravel()] = 1
        self.words = np.packbits(bits, bitorder="little")
        self.count += len(h)

    def contains(self, h: np.ndarray) -> np.ndarray:
        """A boolean array: False = certainly never added; True = maybe."""
        if len(h) == 0:
            return np.zeros(0, dtype=bool)
        p = self._probes(h)
        w = self.words[(p >> np.uint64(3)).astype(np.int64)]
        return ((w >> (p & np.uint64(7)).astype(np.uint8)) & 1).astype(bool).all(axis=1)

    @property
    def nbytes(self) -> int:
        return self.words.nbytes


# ---------------------------------------------------------------- files (immutable, cached)

_CACHE: "OrderedDict[str, np.ndarray]" = OrderedDict()
_CACHE_BYTES = [0]
_CACHE_LIMIT = int(os.environ.get("HEADRACE_DEDUP_CACHE_MB", "512")) * 1 << 20
_LOCK = threading.Lock()


def _load(path: Path) -> np.ndarray:
    """An immutable array file, cached per worker process (files never change once written)."""
    key = str(path)
    with _LOCK:
        a = _CACHE.get(key)
        if a is not None:
            _CACHE.move_to_end(key)
            return a
    a = np.load(path, allow_pickle=False)
    _remember(key, a)
    return a


def _remember(key: str, a: np.ndarray) -> None:
    with _LOCK:
        old = _CACHE.pop(key, None)
        if old is not None:
            _CACHE_BYTES[0] -= old.nbytes
        _CACHE[key] = a
        _CACHE_BYTES[0] += a.nbytes
        while _CACHE_BYTES[0] > _CACHE_LIMIT and len(_CACHE) > 1:
            _, old = _CACHE.popitem(last=False)
            _CACHE_BYTES[0] -= old.nbytes


def _save(path: Path, a: np.ndarray) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, a, allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)
    _remember(str(path), a)


# ---------------------------------------------------------------- a shard of the catalog

@dataclass
class BucketState:
    bloom_file: str                 # file name of the Bloom words
    bits: int
    k: int
    count: int                      # ids in the bucket
    chunks: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"bloom": self.bloom_file, "bits": self.bits, "k": self.k, "count": self.count, "chunks": self.chunks}

    @classmethod
    def from_json(cls, d: dict) -> "BucketState":
        return cls(d["bloom"], d["bits"], d["k"], d["count"], list(d["chunks"]))


@dataclass
class Decision:
    """One shard's decisions over one batch: ``drop`` is a boolean array in input order."""

    drop: np.ndarray
    stats: dict


def new_stats() -> dict:
    return {"checked": 0, "dropped": 0, "expiredDuplicates": 0, "bloomNegative": 0, "bloomHits": 0,
            "falsePositiveLookups": 0, "catalogSize": 0, "catalogBytes": 0, "buckets": 0}


class Shard:
    """One shard of the catalog under ``root/<shard>`` (see the module docstring)."""

    def __init__(self, root: str | Path, shard: int, horizon_ms: int, buckets: int, fpr: float):
        """``fpr``: the target false-positive rate of a look-up, which checks every live bucket:
        each bucket's filter is sized for ``fpr / buckets``."""
        self.dir = Path(root) / str(shard)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.horizon, self.width = horizon_ms, max(1, horizon_ms // buckets)
        self.fpr = fpr / buckets
        self.capacity0 = 4096

    # -- versions
    def _manifests(self) -> list[int]:
        return sorted(int(f.name[1:-5]) for f in self.dir.glob("m*.json") if f.name[1:-5].isdigit())

    def load(self, batch: int) -> dict[int, BucketState]:
        """The buckets after the latest batch below ``batch``."""
        below = [n for n in self._manifests() if n < batch]
        if not below:
            return {}
        d = json.loads((self.dir / f"m{below[-1]}.json").read_text())
        return {int(b): BucketState.from_json(x) for b, x in d["buckets"].items()}

    def _commit(self, batch: int, buckets: dict[int, BucketState]) -> None:
        tmp = self.dir / f".m{batch}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({"batch": batch, "buckets": {str(b): s.to_json() for b, s in buckets.items()}}))
        tmp.replace(self.dir / f"m{batch}.json")
        # keep the last KEEP manifests and every file they name
        ms = self._manifests()
        live: set[str] = set()
        for n in ms:
            if n < batch - KEEP:
                (self.dir / f"m{n}.json").unlink(missing_ok=True)
                continue
            try:
                d = json.loads((self.dir / f"m{n}.json").read_text())
            except (OSError, ValueError):
                continue
            for x in d["buckets"].values():
                live.add(x["bloom"])
                live.update(x["chunks"])
        for f in self.dir.glob("*.npy"):
            if f.name not in live and _batch_of(f.name) <= batch:
                f.unlink(missing_ok=True)

    # -- deciding
    def decide(self, batch: int, hashes: np.ndarray, event_times: np.ndarray, watermark: int | None) -> Decision:
        """Decide over one batch's records of this shard (in the batch's order) and write version
        ``batch``. ``watermark``: the processor watermark after the previous batch (None: none yet)."""
        h = np.asarray(hashes, dtype=np.int64).view(np.uint64)
        et = np.asarray(event_times, dtype=np.int64)
        n = len(h)
        st = new_stats()
        st["checked"] = n
        buckets = self.load(batch)
        drop = np.zeros(n, dtype=bool)
        if watermark is not None:
            frontier = watermark - self.horizon
            for b in [b for b in buckets if (b + 1) * self.width <= frontier]:
                del buckets[b]
            expired = et < frontier
            drop |= expired
            st["expiredDuplicates"] = int(expired.sum())
        live = ~drop
        # duplicates inside the batch: keep the first of each id
        idx = np.flatnonzero(live)
        if len(idx):
            _, first = np.unique(h[idx], return_index=True)
            dup_in_batch = np.ones(len(idx), dtype=bool)
            dup_in_batch[first] = False
            drop[idx[dup_in_batch]] = True
        cand = np.flatnonzero(~drop)
        # the catalog: Bloom filters first, exact ids only for hits
        maybe = np.zeros(len(cand), dtype=bool)
        blooms = {b: self._bloom(s) for b, s in buckets.items()}
        for b, s in buckets.items():
            maybe |= blooms[b].contains(h[cand])
        st["bloomNegative"] = int((~maybe).sum())
        st["bloomHits"] = int(maybe.sum())
        if maybe.any():
            q = h[cand[maybe]]
            seen = np.zeros(len(q), dtype=bool)
            for b, s in buckets.items():
                hit = blooms[b].contains(q) & ~seen
                if hit.any():
                    seen[hit] = self._exact(s, q[hit])
            drop[cand[maybe][seen]] = True
            st["falsePositiveLookups"] = int((~seen).sum())
        st["dropped"] = int(drop.sum()) - st["expiredDuplicates"]
        # add the kept ids to the buckets of their event times
        keep = np.flatnonzero(~drop)
        if len(keep):
            kb = et[keep] // self.width
            for b in np.unique(kb):
                self._add(batch, buckets, int(b), np.sort(h[keep[kb == b]]))
        self._commit(batch, buckets)
        st["catalogSize"] = sum(s.count for s in buckets.values())
        st["catalogBytes"] = sum(s.count * 8 + s.bits // 8 for s in buckets.values())
        st["buckets"] = len(buckets)
        return Decision(drop, st)

    def _bloom(self, s: BucketState) -> Bloom:
        return Bloom(s.bits, s.k, _load(self.dir / s.bloom_file), s.count)

    def _exact(self, s: BucketState, q: np.ndarray) -> np.ndarray:
        found = np.zeros(len(q), dtype=bool)
        for c in s.chunks:
            a = _load(self.dir / c)
            if len(a):
                found |= a[np.minimum(np.searchsorted(a, q), len(a) - 1)] == q
        return found

    def _add(self, batch: int, buckets: dict[int, BucketState], b: int, ids: np.ndarray) -> None:
        s = buckets.get(b)
        chunk = f"c{b}_{batch}.npy"
        _save(self.dir / chunk, ids)
        if s is None:
            bits, k = bloom_params(max(self.capacity0, 2 * len(ids)), self.fpr)
            bloom = Bloom(bits, k)
            s = BucketState("", bits, k, 0, [])
        else:
            bloom = self._bloom(s)
            bloom = Bloom(bloom.bits, bloom.k, bloom.words.copy(), bloom.count)
        s = BucketState(s.bloom_file, s.bits, s.k, s.count + len(ids), s.chunks + [chunk])
        if len(s.chunks) > COMPACT_AFTER:
            merged = np.sort(np.concatenate([_load(self.dir / c) for c in s.chunks]))
            name = f"k{b}_{batch}.npy"
            _save(self.dir / name, merged)
            s.chunks = [name]
        if s.count > bloom_capacity(s.bits, self.fpr):   # grown past its size: rebuild 1.5 times larger
            bits, k = bloom_params(s.count * 3 // 2, self.fpr)
            bloom = Bloom(bits, k)
            for c in s.chunks:
                bloom.add(_load(self.dir / c))
            s.bits, s.k = bits, k
        else:
            bloom.add(ids)
        s.bloom_file = f"b{b}_{batch}.npy"
        _save(self.dir / s.bloom_file, bloom.words)
        buckets[b] = s


def _batch_of(name: str) -> int:
    try:
        return int(name.rsplit("_", 1)[1].split(".")[0])
    except (IndexError, ValueError):
        return -1


def add_stats(total: dict | None, d: dict) -> dict:
    out = dict(total or new_stats())
    for k, v in d.items():
        out[k] = out.get(k, 0) + v
    return out
