"""Rows of another k in an observations file, judged at their own k.

A device run keeps rows of a second k where rivals differ only there
(tcsmt.identify.otherk: a launch of an instruction of that k); the file
marks them with their k (tcsmt.observed.observations: ObservationSet.other).
Replaying the file, the hypotheses the rows of the file's k leave are run
on those rows at their own k, and those that miss one are dropped.
"""

from __future__ import annotations

import numpy as np

from tcsmt.observed.observations import Observation, ObservationSet


def arrays(rows: list[Observation], k: int, scaled: bool):
    """a, b [N, k], c, d [N] and the scales of rows of one k."""
    n = len(rows)
    a = np.array([r.a for r in rows], dtype=np.uint64).reshape(n, k)
    b = np.array([r.b for r in rows], dtype=np.uint64).reshape(n, k)
    c = np.array([r.c for r in rows], dtype=np.uint64)
    d = np.array([r.d for r in rows], dtype=np.uint64)
    sa = np.array([r.scale_a for r in rows], dtype=np.uint64).reshape(n, -1) if scaled else None
    sb = np.array([r.scale_b for r in rows], dtype=np.uint64).reshape(n, -1) if scaled else None
    return a, b, c, d, sa, sb


def first_miss(p, obs: ObservationSet) -> tuple[int, Observation, int] | None:
    """(k, the first row of another k p does not reproduce, p's d there),
    None when p reproduces them all."""
    from tcsmt.sim.batch import dot_batch
    for k, rows in sorted(obs.other.items()):
        a, b, c, d, sa, sb = arrays(rows, k, obs.fscale is not None)
        mine = dot_batch(p, a, b, c, sa_bits=sa, sb_bits=sb)
        bad = np.nonzero(mine != d)[0]
        if len(bad):
            return k, rows[int(bad[0])], int(mine[int(bad[0])])
    return None


def keep_at_own_k(models, consistent: list[int], obs: ObservationSet) -> tuple[list[int], tuple | None]:
    """The hypotheses of ``consistent`` that reproduce every row of another
    k; when none does, (hypothesis, k, row, its d) of the first row the
    first of them misses (tcsmt.identify.narrow reports it as any other
    failure)."""
    if not obs.other:
        return consistent, None
    misses = {i: first_miss(models[i], obs) for i in consistent}
    kept = [i for i in consistent if misses[i] is None]
    if kept or not consistent:
        return kept, None
    return [], (consistent[0], *misses[consistent[0]])    # type: ignore[misc]


def other_counts(obs: ObservationSet) -> dict[str, int]:
    """Rows per k other than the file's, for the report."""
    return {str(k): len(rows) for k, rows in sorted(obs.other.items())}
