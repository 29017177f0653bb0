"""A vector that splits a class, looked for by simulation before any solver.

The members of an open class agree on every candidate of the plan and on
every witness the plan's solver search found, but the plan's pools are
small next to a class's inputs: a few thousand rows, and for block-scaled
units a thousand aimed at the window below the largest term. Before a
solver is asked, ``simulated_split`` runs one member per circuit on fresh
pools of the same kinds (tcsmt.sim.evaluate: the batch simulator; for a
block-scaled class only rows aimed at the window, where the readings
differ) until a row gives two outputs or the pools or the seconds run out.
The row is replayed on every member by the scalar interpreter
(tcsmt.search.vectors.outputs) before it is returned: a split found by
simulation is a witness like a solver's.

Measured: NVFP4's sf-tensor class of 6 in the committed plan (4 circuits:
groups of 4 or 16, 16 or 17 bits below the largest raw product), which
neither the plan's 5000 candidates nor 4 s of solver search per pattern
split, splits on the 4th pool of 2000 aimed rows (3.4 s): groups of 4 from
groups of 16. The pair left (16 or 17 bits) no pool splits.
"""

from __future__ import annotations

import time

import numpy as np

from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Vector, outputs
from tcsmt.sim.evaluate import evaluate

POOLS = 8           # fresh pools at most
ROWS = 2000         # rows a pool
SECONDS = 30.0      # stop drawing pools after this many seconds
SEED = 1000         # pool r is drawn with seed SEED + r (the plan's use 0 and 1)


def pool(p: ModelParams, k: int, domain: Domain, rows: int, seed: int):
    """a, b, c, sa, sb of one fresh pool (sa, sb None without scales)."""
    from tcsmt.search.candidates import candidate_vectors, window_rows
    if p.fscale is not None:
        return window_rows(p.fin, p.fb, p.fc, *p.scaling(), k, rows, seed)
    a, b, c = candidate_vectors(p.fin, p.fc, k, domain, rows, seed, p.fb)
    return a, b, c, None, None


def simulated_split(circuits: list[ModelParams], k: int, domain: Domain, pools: int = POOLS,
                    rows: int = ROWS, seconds: float = SECONDS) -> dict | None:
    """{"vector", "outputs" (label -> bits, replayed), "pools", "rows",
    "seconds"} for the first row on which two of ``circuits`` disagree, or
    None when no pool holds one. ``circuits``: one member per circuit."""
    if len(circuits) < 2:
        return None
    t0 = time.monotonic()
    p0 = circuits[0]
    for r in range(pools):
        a, b, c, sa, sb = pool(p0, k, domain, rows, SEED + r)
        ev = evaluate(circuits, a, b, c, workers=1, sa=sa, sb=sb)
        ok = [i for i in range(len(circuits)) if i not in set(ev.unsupported)]
        out = ev.outputs[ok]
        split: list[int] = (np.nonzero((out != out[0][None, :]).any(axis=0))[0].tolist()
                             if len(ok) > 1 else [])
        for n in split[:8]:
            v = row_vector(a, b, c, sa, sb, int(n))
            got = outputs(v, [Hypothesis(f"H{j}", m) for j, m in enumerate(circuits)])
            if len(set(got.values())) > 1:           # replayed: the scalar interpreter agrees
                return {"vector": v, "outputs": got, "pools": r + 1, "rows": (r + 1) * rows,
                        "seconds": round(time.monotonic() - t0, 1)}
        if time.monotonic() - t0 > seconds:
            break
    return None


def row_vector(a, b, c, sa, sb, n: int) -> Vector:
    scales = () if sa is None else (tuple(int(x) for x in sa[n]), tuple(int(x) for x in sb[n]))
    return Vector(tuple(int(x) for x in a[n]), tuple(int(x) for x in b[n]), int(c[n]), *scales)
