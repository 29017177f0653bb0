"""What blind identification has seen of a unit.

The unit is a device of tcsmt.identify.loop: a ``name`` and ``run(rows)``,
the bits of d for each row, one call one launch (a model in this process,
ModelDevice, or a compiled probe on a GPU). Nothing else is read from it:
a real unit gives nothing else.

``Seen`` stands between the loop and the device: every launch goes through
it (phase 1's walk of the plan too), and it keeps every vector run, its d
and where it came from (the plan's vector 12, a carry-bits vector, a random
"near" row...), as arrays the simulators run every hypothesis on.

Rows are kept per k (products in a row): the plan's k, and any other k
confirmation runs rows at (two models may agree on every row of 16
products and differ on a lone block of 4). A row's number is its place
in the order the unit ran them, whatever its k; ``d`` and ``origins``
follow that order, and ``at(k)`` gives the rows of one k with their
numbers. A device that cannot run rows of some k says why in
``refuses(k)`` (a GPU runs rows of k products only through an instruction
of that k that computes what the probe's own does there:
tcsmt.identify.otherk).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcsmt.errors import UserError
from tcsmt.identify.loop import Device
from tcsmt.observed.random_rows import Rows
from tcsmt.search.vectors import Vector


def empty_rows(k: int, scales: int) -> Rows:
    z = np.zeros((0, k), dtype=np.uint64)
    s = np.zeros((0, scales), dtype=np.uint64) if scales else None
    return Rows(z, z.copy(), np.zeros(0, dtype=np.uint64), s, None if s is None else s.copy())


def concat(x: Rows, y: Rows) -> Rows:
    def cat(u, v):
        return None if u is None else np.concatenate([u, v])
    return Rows(np.concatenate([x.a, y.a]), np.concatenate([x.b, y.b]), np.concatenate([x.c, y.c]),
                cat(x.sa, y.sa), cat(x.sb, y.sb))


def as_vectors(rows: Rows) -> list[Vector]:
    def ints(x, n):
        return () if x is None else tuple(int(v) for v in x[n])
    return [Vector(ints(rows.a, n), ints(rows.b, n), int(rows.c[n]), ints(rows.sa, n), ints(rows.sb, n))
            for n in range(rows.a.shape[0])]


@dataclass
class Launch:
    """One call of the unit: its rows (first, count), the phase, and why."""
    number: int
    phase: int
    first: int
    count: int
    why: str

    def record(self) -> dict:
        return {"launch": self.number, "phase": self.phase, "rows": [self.first, self.first + self.count],
                "why": self.why}


def refusal(device: Device, k: int) -> str | None:
    """Why ``device`` cannot run rows of k products (None when it can: a
    device that says nothing runs any k)."""
    refuses = getattr(device, "refuses", None)
    return refuses(k) if refuses is not None else None


@dataclass
class Seen:
    """Every row the unit ran and what it returned, with the row's origin."""
    device: Device
    k: int
    scales: int = 0                       # scales of a (and of b) per row at k
    stores: dict = field(init=False)      # k -> the rows run at k (Rows), in order
    kof: np.ndarray = field(init=False)   # the k of each row
    local: np.ndarray = field(init=False)  # each row's place among those of its k
    d: np.ndarray = field(init=False)
    name: str = field(init=False)         # the device's (the device protocol's name)
    origins: list[str] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    phase: int = 1
    names: dict = field(default_factory=dict)   # vector -> its origin, for launches without one

    def __post_init__(self):
        self.stores = {self.k: empty_rows(self.k, self.scales)}
        self.kof = np.zeros(0, dtype=np.int64)
        self.local = np.zeros(0, dtype=np.int64)
        self.d = np.zeros(0, dtype=np.uint64)
        self.name = self.device.name

    @property
    def rows(self) -> Rows:
        """The rows run at the plan's k."""
        return self.stores[self.k]

    def ks(self) -> list[int]:
        """Every k rows were run at, the plan's first."""
        return sorted(self.stores, key=lambda n: (n != self.k, n))

    def at(self, k: int) -> tuple[Rows, np.ndarray]:
        """The rows run at k and their numbers (places in the order run)."""
        return self.stores[k], np.nonzero(self.kof == k)[0]

    def refusal(self, k: int) -> str | None:
        return refusal(self.device, k)

    def __len__(self) -> int:
        return len(self.origins)

    def run(self, rows: Rows) -> np.ndarray:
        """One launch of the unit as the device protocol of
        tcsmt.identify.loop has it (phase 1's walk): each row's origin from
        ``names``."""
        origins = [self.names.get(v, "a vector of the plan") for v in as_vectors(rows)]
        return self.run_rows(rows, origins, "")

    def run_rows(self, rows: Rows, origins: list[str], why: str) -> np.ndarray:
        """One launch of the unit: d of every row, each kept with its origin."""
        n, k = rows.a.shape
        if len(origins) != n:
            raise UserError("rows to run must have one origin each")
        if k != self.k and self.refusal(k):
            raise UserError(f"{self.name}: {self.refusal(k)}")
        out = np.asarray(self.device.run(rows), dtype=np.uint64)
        if len(out) != n:
            raise UserError(f"{self.name} returned {len(out)} outputs for {n} rows")
        self.launches.append(Launch(len(self.launches) + 1, self.phase, len(self.origins), n,
                                    why or ("the plan's adaptive search" if self.phase == 1 else "")))
        store = self.stores.get(k)
        if store is None:
            store = empty_rows(k, 0 if rows.sa is None else rows.sa.shape[1])
        self.kof = np.concatenate([self.kof, np.full(n, k, dtype=np.int64)])
        self.local = np.concatenate([self.local, np.arange(store.a.shape[0], store.a.shape[0] + n)])
        self.stores[k] = concat(store, rows)
        self.d = np.concatenate([self.d, out])
        self.origins += origins
        return out

    def count(self, phase: int) -> tuple[int, int]:
        """(launches, vectors) of a phase."""
        mine = [x for x in self.launches if x.phase == phase]
        return len(mine), sum(x.count for x in mine)

    def arrays(self, k: int | None = None):
        """The rows run at k (the plan's by default) as arrays."""
        r = self.stores[self.k if k is None else k]
        return r.a, r.b, r.c, r.sa, r.sb

    def row_json(self, n: int, fmts) -> dict:
        """Row n as a vectors file holds it, with its k, d and origin."""
        fin, fb, fc, fout, fs = fmts
        k, i = int(self.kof[n]), int(self.local[n])
        r = self.stores[k]
        out = {"row": n, "origin": self.origins[n], "k": k, "a": [fin.hex(int(x)) for x in r.a[i]],
               "b": [fb.hex(int(x)) for x in r.b[i]], "c": fc.hex(int(r.c[i]))}
        if r.sa is not None and r.sb is not None:
            out["scale_a"] = [fs.hex(int(x)) for x in r.sa[i]]
            out["scale_b"] = [fs.hex(int(x)) for x in r.sb[i]]
        out["d"] = fout.hex(int(self.d[n]))
        return out
